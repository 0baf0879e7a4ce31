#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests of scripts/series.py (see common.py for how to run them)."""

import io
import os
import subprocess
import sys
import tempfile
import unittest
from contextlib import redirect_stderr

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, 'scripts'))
import series  # noqa: E402

DIFF = '''diff --git a/README b/README
--- a/README
+++ b/README
@@ -1,2 +1,2 @@
-old
+new
 
'''

GOOD = '''# SPDX-License-Identifier: GPL-2.0
overlay: kernel tools

cover: the cover

Cover body.
@TESTS@

fixes-cover: the fixes

Fixes body.

commit: fix one
fix: First sentence.
fix: second
fix: part.

Body of the fix.

Fixes: 0123456789ab ("a subject long enough to go past the seventy-two columns")
''' + DIFF + '''
# a comment after the diff is not part of it

commit: feature
files: kernel/a.c tools/
# a comment among the headers
files: ?Documentation/later/

Body of the feature.

rewrite:

commit: rewrite
files: kernel/aux*
cocci: x.cocci

Body of the rewrite.
''' + DIFF


def parse(text):
    return series.parse(text, 'test.txt')


class Parse(unittest.TestCase):
    def test_good(self):
        s = parse(GOOD)
        self.assertEqual(s.overlay_dirs, ['kernel', 'tools'])
        self.assertEqual(s.cover, ('the cover', 'Cover body.\n@TESTS@'))
        self.assertEqual(s.fixes_cover, ('the fixes', 'Fixes body.'))
        self.assertEqual([c.subject for c in s.commits], ['fix one', 'feature', 'rewrite'])
        self.assertEqual([c.subject for c in s.upstream()], ['fix one', 'feature'])
        self.assertEqual([c.subject for c in s.fixes], ['fix one'])
        fix, feat, rw = s.commits
        # fmt(1)'s joining: two blanks after a sentence, one otherwise.
        self.assertEqual(fix.fix, 'First sentence.  second part.')
        self.assertEqual(fix.message, 'fix one\n\nBody of the fix.\n\nFixes: 0123456789ab '
                         '("a subject long enough to go past the seventy-two columns")\n')
        # The diff keeps its trailing context line " ", drops what follows.
        self.assertEqual(fix.diff, DIFF)
        self.assertEqual(feat.patterns, ['kernel/a.c', 'tools/', '?Documentation/later/'])
        self.assertEqual(feat.diff, '')
        self.assertFalse(feat.rewrite)
        self.assertTrue(rw.rewrite)
        self.assertEqual(rw.cocci, 'x.cocci')
        self.assertEqual(rw.diff, DIFF)

    def assertError(self, text, pattern):
        with self.assertRaisesRegex(series.SeriesError, pattern):
            parse(text)

    def test_fixes_first(self):
        text = ('cover: c\n\nb\n\ncommit: a\nfiles: a\n\nbody of a\n\n'
                'commit: b\nfiles: b\nfix: fixes b\n\nbody of b\n')
        self.assertError(text, 'the fix: commit "b" comes after "a", which is not a fix')
        text = ('cover: c\n\nb\n\ncommit: b\nfiles: b\nfix: fixes b\n\nbody of b\n\n'
                'commit: a\nfiles: a\n\nbody of a\n')
        self.assertEqual([c.subject for c in parse(text).fixes], ['b'])

    def test_errors(self):
        head = 'cover: c\n\nbody\n\n'
        self.assertError('stray\n' + head + 'commit: a\n', r'test.txt:1: text outside')
        self.assertError(head + 'commit: a\nbogus: x\n', r'test.txt:6: expected files:')
        self.assertError(head + 'commit: a\nfix: \n', r'fix: needs a text')
        self.assertError(head + 'commit: a\n\n' + 'x' * 73 + '\n', r'test.txt:7: body line longer')
        self.assertError(head + 'commit: a\n\ncover: d\n', r'cover: must come before')
        self.assertError(head + 'rewrite:\ncommit: a\n\nrewrite:\ncommit: b\n', r'a second rewrite:')
        self.assertError(head + 'commit: a\n\nrewrite:\n', r'not followed by any commit')
        self.assertError(head, r'has no commit: entries')
        self.assertError('commit: a\n', r'has no cover: stanza')
        self.assertError(head + 'commit: a\ncocci: x\ncocci: y\n', r'a second cocci:')
        self.assertError(head + 'commit: a\n\noverlay: x\n', r'overlay: must come first')

    def test_trailers_may_be_long(self):
        long = 'Link: https://example.org/' + 'x' * 80
        s = parse('cover: c\n\nb\n\ncommit: a\n\n' + long + '\n')
        self.assertEqual(s.commits[0].body, long)


DIFF2 = DIFF.replace('+new', '+newer')


class SetDiff(unittest.TestCase):
    def test_same_diff_same_text(self):
        for n in (1, 2, 3):
            self.assertEqual(series.set_diff(GOOD, n, parse(GOOD).commits[n - 1].diff), GOOD)

    def test_replace(self):
        text = series.set_diff(GOOD, 1, DIFF2)
        s = parse(text)
        self.assertEqual(s.commits[0].diff, DIFF2)
        self.assertEqual(s.commits[0].message, parse(GOOD).commits[0].message)
        self.assertEqual([c.diff for c in s.commits[1:]], ['', DIFF])
        self.assertIn('# a comment after the diff is not part of it', text)

    def test_add_and_remove(self):
        text = series.set_diff(GOOD, 2, DIFF2)
        s = parse(text)
        self.assertEqual(s.commits[1].diff, DIFF2)
        self.assertEqual(s.commits[1].body, 'Body of the feature.')
        self.assertTrue(s.commits[2].rewrite)
        self.assertEqual(series.set_diff(text, 2, ''), GOOD)

    def test_drop_files(self):
        other = DIFF.replace('README', 'kernel/a.c')
        self.assertEqual(series.drop_files(other + DIFF, {'kernel/a.c'}), DIFF)
        gone = 'diff --git a/x b/x\ndeleted file mode 100644\n--- a/x\n+++ /dev/null\n'
        self.assertEqual(series.drop_files(gone + DIFF, {'x'}), DIFF)

    def test_errors(self):
        with self.assertRaisesRegex(series.SeriesError, 'no commit 4'):
            series.set_diff(GOOD, 4, DIFF)
        with self.assertRaisesRegex(series.SeriesError, 'must start with a "diff --git" line'):
            series.set_diff(GOOD, 1, '--- a/x\n+++ b/x\n')


class Claims(unittest.TestCase):
    def test_match(self):
        self.assertTrue(series.match('tools/aux/x.c', 'tools/aux/'))
        self.assertTrue(series.match('tools/aux/x.c', '?tools/aux/'))
        self.assertFalse(series.match('tools/auxx/x.c', 'tools/aux/'))
        self.assertTrue(series.match('kernel/events/aux.c', 'kernel/events/aux*'))
        self.assertTrue(series.match('kernel/events/aux/sub.c', 'kernel/*.c'))  # * matches /
        self.assertFalse(series.match('kernel/events/flush.c', 'kernel/events/aux*'))

    def test_claim(self):
        s = parse(GOOD)
        files = ['kernel/a.c', 'kernel/aux.c', 'tools/t/x.c']
        self.assertEqual(series.claim(s, files), {0: [], 1: ['kernel/a.c', 'tools/t/x.c'],
                                                  2: ['kernel/aux.c']})

    def test_claim_errors(self):
        s = parse(GOOD)
        with self.assertRaisesRegex(series.SeriesError, 'file kernel/b.c is claimed by no commit'):
            series.claim(s, ['kernel/a.c', 'kernel/aux.c', 'kernel/b.c'])
        s.commits[0].patterns = ['kernel/a.c']
        with self.assertRaisesRegex(series.SeriesError, 'file kernel/a.c is claimed by 2 commits'):
            series.claim(s, ['kernel/a.c', 'kernel/aux.c'])
        with self.assertRaisesRegex(series.SeriesError, 'pattern "tools/" of "feature" matches nothing'):
            series.claim(parse(GOOD), ['kernel/a.c', 'kernel/aux.c'])


def load_in(d, text):
    """The series TEXT written into directory D (with the semantic patch
    it names), loaded, and its overlay claimed: (series, owned)."""
    path = os.path.join(d, 'series.txt')
    with open(path, 'w') as f:
        f.write(text)
    open(os.path.join(d, 'x.cocci'), 'w').close()
    s = series.load(path)
    return s, series.claim(s, ['kernel/a.c', 'kernel/aux.c', 'tools/t/x.c'])


class Materialize(unittest.TestCase):
    def test_materialize(self):
        with tempfile.TemporaryDirectory() as d:
            s, owned = load_in(d, GOOD)
            out = os.path.join(d, 'ours')
            series.materialize(s, owned, out)

            def read(name):
                with open(os.path.join(out, name)) as f:
                    return f.read()
            self.assertEqual(read('commits'), '001\tfix one\n002\tfeature\n003\trewrite\n')
            self.assertEqual(read('001.fix'), 'First sentence.  second part.\n')
            self.assertEqual(read('001.diff'), DIFF)
            self.assertEqual(read('001.files'), '')
            self.assertEqual(read('002.files'), 'kernel/a.c\ntools/t/x.c\n')
            self.assertFalse(os.path.exists(os.path.join(out, '002.diff')))
            self.assertEqual(read('003.cocci'), os.path.join(d, 'x.cocci') + '\n')
            self.assertEqual(read('cover.subject'), 'the cover\n')
            self.assertEqual(read('fixes-cover.body'), 'Fixes body.\n')
            up = os.path.join(d, 'up')
            series.materialize(s, owned, up, upstream=True)
            with open(os.path.join(up, 'commits')) as f:
                self.assertEqual(f.read(), '001\tfix one\n002\tfeature\n')

    def test_empty_commit_left_out(self):
        text = 'cover: c\n\nb\n\ncommit: later\nfiles: ?kernel/new/\n\nbody\n\ncommit: a\nfiles: kernel/a.c\n\nbody\n'
        s = parse(text)
        with tempfile.TemporaryDirectory() as d:
            err = io.StringIO()
            with redirect_stderr(err):
                series.materialize(s, series.claim(s, ['kernel/a.c']), d)
            self.assertIn('"later" has no content yet', err.getvalue())
            with open(os.path.join(d, 'commits')) as f:
                self.assertEqual(f.read(), '002\ta\n')


# GOOD with blocks for base 6.12: the fix ported, the feature without
# edits there, the rewrite dropped.
BASES = GOOD.replace(
    '# a comment after the diff is not part of it\n',
    '# a comment after the diff is not part of it\n# 6.12: why it is ported\nbase 6.12:\n' + DIFF2 +
    '# a comment after the base diff\n').replace(
    'Body of the feature.\n', 'Body of the feature.\n\nbase 6.12: none\n').replace(
    'Body of the rewrite.\n' + DIFF, 'Body of the rewrite.\n' + DIFF + '\nbase 6.12: drop fixed by 0123456789ab\n')


class Bases(unittest.TestCase):
    def test_parse(self):
        s = parse(BASES)
        fix, feat, rw = s.commits
        self.assertEqual(fix.diff, DIFF)
        self.assertEqual(fix.bases['6.12'].kind, 'diff')
        self.assertEqual(fix.bases['6.12'].diff, DIFF2)
        self.assertEqual(fix.body, parse(GOOD).commits[0].body)
        self.assertEqual(feat.bases['6.12'].kind, 'none')
        self.assertEqual(feat.body, 'Body of the feature.')
        self.assertEqual(rw.diff, DIFF)
        self.assertEqual(rw.bases['6.12'].reason, 'fixed by 0123456789ab')
        self.assertEqual([c.on('6.12') for c in s.commits], [DIFF2, '', None])
        self.assertEqual([c.on(None) for c in s.commits], [DIFF, '', DIFF])
        self.assertEqual([c.on('6.13') for c in s.commits], [DIFF, '', DIFF])

    def test_errors(self):
        head = 'cover: c\n\nbody\n\ncommit: a\n\nbody\n'
        self.assertError(head + 'base 6.12: drop\n', r'test.txt:8: "base 6.12: drop" needs a reason')
        self.assertError(head + 'base 6.12: maybe\n', r'test.txt:8: expected "base 6.12:"')
        self.assertError(head + 'base 6.12:\n', r'test.txt:8: "base 6.12:" has no diff')
        self.assertError(head + 'base 6.12: none\n' + DIFF, r'a diff after "base 6.12: none"')
        self.assertError(head + 'base 6.12: none\nstray\n', r'expected a diff, a comment')
        self.assertError(head + 'base 6.12: none\nbase 6.12: none\n', r'a second "base 6.12:" block')

    def assertError(self, text, regex):
        with self.assertRaisesRegex(series.SeriesError, regex):
            parse(text)

    def test_check_bases(self):
        series.check_bases(parse(BASES))
        with self.assertRaisesRegex(series.SeriesError, 'no base 9.9 in scripts/kernels.py'):
            series.check_bases(parse(BASES.replace('6.12: none', '9.9: none')))
        default = series.default_base()
        with self.assertRaisesRegex(series.SeriesError, 'is the default base'):
            series.check_bases(parse(BASES.replace('6.12: none', default + ': none')))

    def test_only_on_other_bases(self):
        # A commit that exists only on other bases: dropped on the default
        # base, with no default diff; its other bases' blocks as usual.
        default = series.default_base()
        text = ('cover: c\n\nbody\n\ncommit: a\nfiles: kernel/a.c\n\nbody\n\n'
                f'base {default}: drop no such bug there\n\nbase 6.12:\n' + DIFF +
                '\ncommit: b\n\nbody\n' + DIFF)
        s = parse(text)
        series.check_bases(s)
        a, b = s.commits
        self.assertEqual(a.bases[default].reason, 'no such bug there')
        self.assertEqual([a.on(x) for x in (None, default, '6.12')], [None, None, DIFF])
        self.assertEqual([b.on(x) for x in (None, '6.12')], [DIFF, DIFF])
        with tempfile.TemporaryDirectory() as d:
            for base, want in ((None, '002\tb\n'), (default, '002\tb\n'),
                               ('6.12', '001\ta\n002\tb\n')):
                out = os.path.join(d, str(base))
                series.materialize(s, series.claim(s, ['kernel/a.c']), out, on_base=base)
                with open(os.path.join(out, 'commits')) as f:
                    self.assertEqual(f.read(), want)
        # set-base makes and removes such a block.
        plain = 'cover: c\n\nbody\n\ncommit: a\n\nbody\n\nbase 6.12:\n' + DIFF
        text = series.set_base(plain, 1, default, 'drop', reason='moot')
        self.assertIsNone(parse(text).commits[0].on(None))
        self.assertEqual(series.set_base(text, 1, default, 'default'), plain)
        # It has no default diff, and no other kind of block for the default base.
        with self.assertRaisesRegex(series.SeriesError, 'dropped on the default base'):
            series.check_bases(parse(text.replace('body\n\nbase', 'body\n' + DIFF + '\nbase', 1)))
        with self.assertRaisesRegex(series.SeriesError, 'is the default base'):
            series.check_bases(parse(plain + f'\nbase {default}: none\n'))

    def test_set_base(self):
        # Replace, add and remove blocks; the default diffs and the
        # messages stay as they are.
        text = series.set_base(BASES, 1, '6.12', 'diff', DIFF)
        self.assertEqual(parse(text).commits[0].on('6.12'), DIFF)
        self.assertIn('# a comment after the base diff', text)
        self.assertEqual(series.set_base(text, 1, '6.12', 'diff', DIFF2), BASES)
        text = series.set_base(BASES, 2, '6.12', 'drop', reason='moot')
        self.assertIsNone(parse(text).commits[1].on('6.12'))
        self.assertEqual(series.set_base(text, 2, '6.12', 'none'), BASES)
        text = series.set_base(GOOD, 2, '6.12', 'diff', DIFF2)
        self.assertEqual(parse(text).commits[1].on('6.12'), DIFF2)
        self.assertEqual(parse(text).commits[1].body, 'Body of the feature.')
        self.assertEqual(series.set_base(text, 2, '6.12', 'default'), GOOD)
        self.assertEqual(parse(series.set_base(GOOD, 1, '6.12', 'diff', '')).commits[0].bases['6.12'].kind,
                         'none')
        with self.assertRaisesRegex(series.SeriesError, 'drop needs a reason'):
            series.set_base(GOOD, 1, '6.12', 'drop')
        # The default diff of a commit with a block is still set-diff's.
        text = series.set_diff(BASES, 1, DIFF2)
        self.assertEqual([parse(text).commits[0].on(b) for b in (None, '6.12')], [DIFF2, DIFF2])

    def test_materialize(self):
        with tempfile.TemporaryDirectory() as d:
            s, owned = load_in(d, BASES)
            for base, want in ((None, DIFF), (series.default_base(), DIFF), ('6.12', DIFF2)):
                out = os.path.join(d, str(base))
                series.materialize(s, owned, out, on_base=base)
                with open(os.path.join(out, '001.diff')) as f:
                    self.assertEqual(f.read(), want)
            out = os.path.join(d, '6.12')
            with open(os.path.join(out, 'commits')) as f:
                self.assertEqual(f.read(), '001\tfix one\n002\tfeature\n')
            self.assertFalse(os.path.exists(os.path.join(out, '002.diff')))
            with open(os.path.join(out, '002.files')) as f:
                self.assertEqual(f.read(), 'kernel/a.c\ntools/t/x.c\n')


# BASES with a cover of the fixes for 6.12 of its own, and a second fix
# dropped on 6.12.
FIXES73 = BASES.replace('commit: fix one\n', 'fixes-cover 6.12: the fixes on 6.12\n\nOn 6.12.\n\n'
                        'commit: fix one\n').replace(
    'commit: feature\n', 'commit: fix two\nfix: Only 7.3.\n\nBody.\n' + DIFF +
    '\nbase 6.12: drop fixed upstream by 0123456789ab\n\ncommit: feature\n')


class FixesOnBase(unittest.TestCase):
    """make fixes BASE=6.12: the fixes of a base and their cover letter."""

    def test_cover(self):
        s = parse(FIXES73)
        self.assertEqual(series.fixes_cover_on(s), ('the fixes', 'Fixes body.'))
        self.assertEqual(series.fixes_cover_on(s, '6.12'), ('the fixes on 6.12', 'On 6.12.'))
        self.assertEqual(series.fixes_cover_on(s, '9.9'), ('the fixes', 'Fixes body.'))
        self.assertEqual(series.fixes_cover_on(parse(BASES), '6.12'), ('the fixes', 'Fixes body.'))
        series.check_bases(s)
        with self.assertRaisesRegex(series.SeriesError, '"fixes-cover 9.9:" names no other base'):
            series.check_bases(parse(FIXES73.replace('fixes-cover 6.12:', 'fixes-cover 9.9:')))
        with self.assertRaisesRegex(series.SeriesError, 'a second fixes-cover 6.12: stanza'):
            parse(FIXES73.replace('commit: fix one\n', 'fixes-cover 6.12: again\n\nx\n\ncommit: fix one\n'))

    def test_fixes_on(self):
        s = parse(FIXES73)
        self.assertEqual([c.subject for c in series.fixes_on(s)], ['fix one', 'fix two'])
        self.assertEqual([c.subject for c in series.fixes_on(s, '6.12')], ['fix one'])

    def test_materialize(self):
        with tempfile.TemporaryDirectory() as d:
            s, owned = load_in(d, FIXES73)
            for base, subject, fixes in ((None, 'the fixes', ['001', '002']),
                                         ('6.12', 'the fixes on 6.12', ['001'])):
                out = os.path.join(d, str(base))
                series.materialize(s, owned, out, on_base=base)
                with open(os.path.join(out, 'fixes-cover.subject')) as f:
                    self.assertEqual(f.read(), subject + '\n')
                self.assertEqual(sorted(f[:3] for f in os.listdir(out) if f.endswith('.fix')), fixes)


# FIXES73 with the selftest of fix two after it (test-of:).
TESTOF = FIXES73.replace(
    '\ncommit: feature\n',
    '\ncommit: test two\ntest-of: fix two\n\nBody.\n' + DIFF +
    '\nbase 6.12: drop its fix is 7.3 only\n\ncommit: feature\n')


class TestOf(unittest.TestCase):
    """A fix's selftest (test-of:): with the fixes, after its fix, dropped
    where its fix is."""

    def test_parse(self):
        s = parse(TESTOF)
        self.assertEqual([c.subject for c in s.fixes], ['fix one', 'fix two'])
        self.assertEqual([c.subject for c in s.fixes_series], ['fix one', 'fix two', 'test two'])
        self.assertEqual(s.commits[2].test_of, 'fix two')
        self.assertEqual(s.commits[2].fix, '')
        series.check_bases(s)

    def test_errors(self):
        self.assertError(TESTOF.replace('test-of: fix two', 'test-of: fix three'),
                         r'test-of: "fix three" names no fix: commit before it')
        self.assertError(TESTOF.replace('test-of: fix two', 'test-of: fix two\nfix: x'),
                         r'has both fix: and test-of:')
        self.assertError(TESTOF.replace('test-of: fix two', 'test-of: fix two\ntest-of: y'),
                         r'a second test-of: line')
        # Without test-of: a plain commit, after which no test-of: may come.
        s = parse(TESTOF.replace('commit: test two\ntest-of: fix two\n', 'commit: test two\n'))
        self.assertEqual([c.subject for c in s.fixes_series], ['fix one', 'fix two'])
        late = TESTOF.replace('commit: test two\ntest-of: fix two\n', 'commit: test two\n') + \
            '\ncommit: late test\ntest-of: fix two\n\nBody.\n' + DIFF
        self.assertError(late, r'the test-of: commit "late test" comes after')
        # Kept on a base where its fix is dropped.
        with self.assertRaisesRegex(series.SeriesError, r'which is dropped on 6.12: drop it there too'):
            series.check_bases(parse(TESTOF.replace('base 6.12: drop its fix is 7.3 only\n', '')))

    def assertError(self, text, pattern):
        with self.assertRaisesRegex(series.SeriesError, pattern):
            parse(text)

    def test_materialize(self):
        with tempfile.TemporaryDirectory() as d:
            s, owned = load_in(d, TESTOF)
            for base, tests in ((None, ['003']), ('6.12', [])):
                out = os.path.join(d, str(base))
                series.materialize(s, owned, out, on_base=base)
                self.assertEqual(sorted(f[:3] for f in os.listdir(out) if f.endswith('.test-of')),
                                 tests)
            with open(os.path.join(d, 'None', '003.test-of')) as f:
                self.assertEqual(f.read(), 'fix two\n')


class TheSeries(unittest.TestCase):
    """patches/series.txt itself parses, and claims the overlay once."""

    def test_repository(self):
        r = subprocess.run([sys.executable, os.path.join(TOP, 'scripts', 'series.py'), 'check'],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r'^series: \d+ commits')


if __name__ == '__main__':
    unittest.main()
