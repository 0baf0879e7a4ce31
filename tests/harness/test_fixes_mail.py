#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests of scripts/fixes-mail.py (see common.py for how to run them)."""

import importlib.util
import os
import subprocess
import tempfile
import unittest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_spec = importlib.util.spec_from_file_location('fixes_mail', os.path.join(TOP, 'scripts', 'fixes-mail.py'))
fm = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fm)

MAIL = '''From 0123 Mon Sep 17 00:00:00 2001
From: A U Thor <a@example.org>
Date: Thu, 1 Jan 2026 00:00:00 +0000
Subject: [PATCH 2/3] mm/kmemleak: Warn of a failed scan area allocation
 outside object->lock

Body.

Cc: stable@vger.kernel.org
Signed-off-by: A U Thor <a@example.org>
---
 mm/kmemleak.c | 2 +-
 1 file changed, 1 insertion(+), 1 deletion(-)

diff --git a/mm/kmemleak.c b/mm/kmemleak.c
'''

GET_MAINTAINER = '''Catalin Marinas <catalin.marinas@arm.com> (maintainer:KMEMLEAK)
Andrew Morton <akpm@linux-foundation.org> (maintainer:MEMORY MANAGEMENT)
Mark Rutland <mark.rutland@arm.com> (reviewer:PERFORMANCE EVENTS SUBSYSTEM)
linux-mm@kvack.org (open list:MEMORY MANAGEMENT)
linux-kernel@vger.kernel.org (open list)
'''


class Recipients(unittest.TestCase):
    def test_parse(self):
        to, cc = fm.parse_get_maintainer(GET_MAINTAINER)
        self.assertEqual(to, ['Catalin Marinas <catalin.marinas@arm.com>',
                              'Andrew Morton <akpm@linux-foundation.org>'])
        self.assertEqual(cc, ['Mark Rutland <mark.rutland@arm.com>', 'linux-mm@kvack.org',
                              'linux-kernel@vger.kernel.org'])
        # Supporters and odd fixers are people to send to; a bare address
        # without a role is a list.
        to, cc = fm.parse_get_maintainer('P <p@x> (supporter:X)\nq@x\n')
        self.assertEqual((to, cc), (['P <p@x>'], ['q@x']))
        # A role with parentheses of its own (a keyword match) is one role.
        to, cc = fm.parse_get_maintainer(
            'Kees Cook <kees@kernel.org> (maintainer:KERNEL HARDENING (not covered by other '
            'areas):Keyword:\\b__counted_by(_le|_be|_ptr)?\\b)\n'
            '"Gustavo A. R. Silva" <gustavoars@kernel.org> (reviewer:KERNEL HARDENING (not '
            'covered by other areas):Keyword:\\b__counted_by(_le|_be|_ptr)?\\b)\n'
            'linux-hardening@vger.kernel.org (open list:KERNEL HARDENING (not covered by other '
            'areas):Keyword:\\b__counted_by(_le|_be|_ptr)?\\b)\n')
        self.assertEqual(to, ['Kees Cook <kees@kernel.org>'])
        self.assertEqual(cc, ['"Gustavo A. R. Silva" <gustavoars@kernel.org>',
                              'linux-hardening@vger.kernel.org'])

    def test_stable(self):
        self.assertTrue(fm.wants_stable(MAIL))
        self.assertFalse(fm.wants_stable(MAIL.replace('Cc: stable', 'X: stable')))
        # A Cc: after "---" (a note) is not the message's.
        self.assertFalse(fm.wants_stable(MAIL.replace('Cc: stable@vger.kernel.org\n', '').replace(
            '---\n', '---\nCc: stable@vger.kernel.org\n')))

    def test_headers(self):
        out = fm.add_headers(MAIL, ['A <a@x>', 'B <b@x>'], ['l@x'])
        head, body = out.split('\n\n', 1)
        self.assertTrue(head.endswith(' outside object->lock\nTo: A <a@x>,\n    B <b@x>\nCc: l@x'))
        self.assertEqual(body, MAIL.split('\n\n', 1)[1])
        # Run again: replaced, not added.
        self.assertEqual(fm.add_headers(out, ['A <a@x>', 'B <b@x>'], ['l@x']), out)
        self.assertEqual(fm.add_headers(out, ['C <c@x>'], []).split('\n\n')[0],
                         MAIL.split('\n\n')[0] + '\nTo: C <c@x>')

    def test_subject(self):
        self.assertEqual(fm.subject_of(MAIL),
                         'mm/kmemleak: Warn of a failed scan area allocation outside object->lock')

    def test_union(self):
        self.assertEqual(fm.union([['a', 'b'], ['b', 'c'], []]), ['a', 'b', 'c'])


class Depends(unittest.TestCase):
    def test_depends(self):
        # 2 needs 1, 3 needs 1 and 2 together, 0 and 1 stand alone.
        def applies(ps):
            have = set()
            for p in ps:
                need = {2: {1}, 3: {1, 2}}.get(p, set())
                if not need <= have:
                    return False
                have.add(p)
            return True
        self.assertEqual(fm.depends([0, 1, 2, 3], applies), {2: [1], 3: [0, 1, 2]})
        self.assertEqual(fm.depends([0, 1], applies), {})

    def test_texts(self):
        subjects = ['one', 'two', 'three']
        self.assertEqual(fm.depends_text({}, subjects), 'Each patch applies to the base on its own.\n')
        text = fm.depends_text({2: [1]}, subjects)
        self.assertIn(' - 3/3 ("three") edits lines that 2/3 ("two") changes', text)
        self.assertTrue(all(len(line) <= 72 for line in text.splitlines()))
        note = fm.note_text(2, [1], subjects)
        out = fm.add_note(MAIL, note)
        self.assertIn('---\n' + note + '\n mm/kmemleak.c', out)
        with self.assertRaises(ValueError):
            fm.add_note('no separator\n', note)

    def test_git(self):
        """Two patches to one line: the second applies only on the first."""
        with tempfile.TemporaryDirectory() as d:
            def git(*args):
                return subprocess.run(['git', '-C', d, *args], check=True, capture_output=True,
                                      text=True).stdout
            git('init', '-q')
            git('config', 'user.name', 't')
            git('config', 'user.email', 't@x')
            for n, text in enumerate(('a\nb\nc\n', 'a\nB\nc\n', 'a\nBB\nc\n', 'A\nBB\nc\n')):
                with open(os.path.join(d, 'f'), 'w') as f:
                    f.write(text + 'd\ne\nf\ng\nh\n' if n < 3 else 'A\nBB\nc\nd\ne\nf\ng\nh\n')
                git('add', 'f')
                git('commit', '-q', '-m', f'c{n}')
            git('tag', 'base', 'HEAD~3')
            out = os.path.join(d, 'out')
            git('format-patch', '-q', '-o', out, 'base..HEAD')
            ps = fm.patches_in(out)
            self.assertEqual(len(ps), 3)
            deps = fm.depends(ps, lambda x: fm._applies(d, 'base', x))
            self.assertEqual(deps, {1: [0], 2: [0, 1]})


if __name__ == '__main__':
    unittest.main()
