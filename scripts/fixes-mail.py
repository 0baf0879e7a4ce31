#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The fixes' mails made sendable (make fixes, scripts/make-series.sh).

make-series.sh --fixes exports the fix: commits of patches/series.txt
with git format-patch; this finishes the mails:

  fixes-mail.py depends --repo TREE [--base REF] DIR
      which patch of DIR needs which earlier one: each patch is applied
      alone to REF (default "base") of the repository TREE (git apply
      --check, on a scratch index); one that does not apply is tried on
      top of each earlier patch in turn.  Each dependent patch gets a
      note after its "---" line (not part of the commit), and stdout
      gets the paragraph for the cover letter's @DEPENDS@ line.
  fixes-mail.py recipients --tree TREE [--base REF] DIR
      To: and Cc: headers in each patch of DIR, from the base's own
      scripts/get_maintainer.pl run in TREE on the patch, with REF's
      MAINTAINERS (--no-git: no history, no network): To: the people
      it names (maintainers, supporters), Cc: the reviewers and the
      lists, and stable@vger.kernel.org where the message has "Cc:
      stable@vger.kernel.org"; the cover letter (0000-cover-letter.patch)
      gets the union.  Headers already there are replaced.

Patches are DIR/NNNN-*.patch, the cover letter excepted, in name order.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

STABLE = 'stable@vger.kernel.org'
WRAP = 72


def patches_in(d):
    """The patches of an export directory, in order, cover excepted."""
    return sorted(os.path.join(d, f) for f in os.listdir(d)
                  if re.match(r'^[0-9]{4}-.*\.patch$', f) and f != '0000-cover-letter.patch')


def subject_of(text):
    """The subject of a format-patch mail, unfolded, without its
    "[PATCH n/m]" prefix."""
    head = text.split('\n\n', 1)[0]
    m = re.search(r'^Subject: (.*(?:\n[ \t].*)*)', head, re.M)
    if not m:
        return ''
    subj = re.sub(r'\n[ \t]+', ' ', m.group(1))
    return re.sub(r'^\[[^]]*\] *', '', subj)


# -- dependencies ----------------------------------------------------------------

def _applies(repo, base, patches):
    """The patches, in order, apply to base of repo (git apply --cached
    on a scratch index; nothing is written to the repository)."""
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, GIT_INDEX_FILE=os.path.join(tmp, 'index'))
        subprocess.run(['git', '-C', repo, 'read-tree', base], env=env, check=True)
        for p in patches:
            r = subprocess.run(['git', '-C', repo, 'apply', '--cached', os.path.abspath(p)],
                               env=env, capture_output=True)
            if r.returncode:
                return False
    return True


def depends(patches, applies):
    """{i: [j, ...]}: for each patch i (0-based) that does not apply
    alone (applies([p]) false), the earlier patches j it needs: each one
    on top of which it applies, else all the earlier ones.  applies
    takes a list of patches."""
    out = {}
    for i, p in enumerate(patches):
        if applies([p]):
            continue
        need = [j for j in range(i) if applies([patches[j], p])]
        out[i] = need[:1] if need else list(range(i))
    return out


def _name(i, n, subjects):
    return f'{i + 1}/{n} ("{subjects[i]}")'


def depends_text(deps, subjects):
    """The cover letter's paragraph on the dependencies between the
    patches, wrapped at 72 columns."""
    import textwrap
    n = len(subjects)
    if not deps:
        return 'Each patch applies to the base on its own.\n'
    out = ['Each patch applies to the base on its own, except:', '']
    for i, need in sorted(deps.items()):
        item = (f'{_name(i, n, subjects)} edits lines that '
                + ' and '.join(_name(j, n, subjects) for j in need)
                + ' changes, and applies only on top of it.')
        out += textwrap.wrap(item, WRAP, initial_indent=' - ', subsequent_indent='   ')
    return '\n'.join(out) + '\n'


def note_text(i, need, subjects):
    """The note after the "---" of dependent patch i."""
    import textwrap
    n = len(subjects)
    text = ('This patch applies on top of '
            + ' and '.join(_name(j, n, subjects) for j in need)
            + ', whose lines it edits; it does not apply alone.')
    return '\n'.join(textwrap.wrap(text, WRAP)) + '\n'


def add_note(text, note):
    """The mail with note after its first "---" line, before the
    diffstat, a blank line between."""
    lines = text.split('\n')
    for k, line in enumerate(lines):
        if line == '---':
            return '\n'.join(lines[:k + 1] + note.rstrip('\n').split('\n') + [''] + lines[k + 1:])
    raise ValueError('no "---" line in the mail')


# -- recipients --------------------------------------------------------------------

def parse_get_maintainer(out):
    """(to, cc) from get_maintainer.pl output with roles ("Name <addr>
    (maintainer:SECTION)", "list@host (open list:SECTION)"): To: the
    people but the reviewers, Cc: the reviewers and the lists."""
    to, cc = [], []
    for line in out.splitlines():
        line = line.strip()
        if not line or '@' not in line:
            continue
        # The role may hold parentheses of its own ("(maintainer:KERNEL
        # HARDENING (not covered by other areas):Keyword:...)"): it is
        # all after the address.
        m = re.match(r'^(.*?<[^<>]*>|[^\s<>()]+@[^\s<>()]+)\s*\((.*)\)$', line)
        who, role = (m.group(1), m.group(2)) if m else (line, '')
        role = role.split(':', 1)[0]
        dest = cc if 'list' in role or 'reviewer' in role or '<' not in who else to
        if who not in to and who not in cc:
            dest.append(who)
    return to, cc


def wants_stable(text):
    """The commit message (before "---") has a Cc: stable trailer."""
    msg = text.split('\n---\n', 1)[0]
    return re.search(r'^Cc: *(.*<)?' + re.escape(STABLE), msg, re.M | re.I) is not None


def _header(key, addrs):
    return f'{key}: ' + ',\n    '.join(addrs)


def add_headers(text, to, cc):
    """The mail with To: and Cc: headers (format-patch's folding), after
    its other headers; any To: or Cc: it had is replaced."""
    head, sep, rest = text.partition('\n\n')
    lines, skip = [], False
    for line in head.split('\n'):
        if re.match(r'^(To|Cc): ', line, re.I):
            skip = True
            continue
        if skip and line[:1] in (' ', '\t'):
            continue
        skip = False
        lines.append(line)
    if to:
        lines.append(_header('To', to))
    if cc:
        lines.append(_header('Cc', cc))
    return '\n'.join(lines) + sep + rest


def union(lists):
    out = []
    for lst in lists:
        out += [a for a in lst if a not in out]
    return out


def get_maintainer(tree, base, patch):
    """get_maintainer.pl of tree on patch, with base's MAINTAINERS."""
    with tempfile.NamedTemporaryFile('w', suffix='.MAINTAINERS') as m:
        m.write(subprocess.run(['git', '-C', tree, 'show', f'{base}:MAINTAINERS'],
                               check=True, capture_output=True, text=True).stdout)
        m.flush()
        return subprocess.run(
            ['perl', 'scripts/get_maintainer.pl', '--no-git', '--no-git-fallback',
             '--mpath', m.name, '--roles', '--no-rolestats',
             os.path.abspath(patch)],
            cwd=tree, check=True, capture_output=True, text=True).stdout


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    sub = ap.add_subparsers(dest='cmd', required=True)
    d = sub.add_parser('depends')
    d.add_argument('--repo', required=True)
    d.add_argument('--base', default='base')
    d.add_argument('dir')
    r = sub.add_parser('recipients')
    r.add_argument('--tree', required=True)
    r.add_argument('--base', default='base')
    r.add_argument('dir')
    a = ap.parse_args(argv)
    patches = patches_in(a.dir)
    texts = {p: open(p, encoding='utf-8').read() for p in patches}
    if a.cmd == 'depends':
        subjects = [subject_of(texts[p]) for p in patches]
        deps = depends(patches, lambda ps: _applies(a.repo, a.base, ps))
        for i, need in deps.items():
            with open(patches[i], 'w', encoding='utf-8') as f:
                f.write(add_note(texts[patches[i]], note_text(i, need, subjects)))
        sys.stdout.write(depends_text(deps, subjects))
        return 0
    tos, ccs = [], []
    for p in patches:
        to, cc = parse_get_maintainer(get_maintainer(a.tree, a.base, p))
        if wants_stable(texts[p]) and STABLE not in cc:
            cc.append(STABLE)
        tos.append(to)
        ccs.append(cc)
        with open(p, 'w', encoding='utf-8') as f:
            f.write(add_headers(texts[p], to, cc))
        short = [re.sub(r' *<.*>', '', x) for x in to + cc]
        print(f'{os.path.basename(p)[:4]}: To: {", ".join(short[:len(to)])}; '
              f'Cc: {", ".join(short[len(to):])}', file=sys.stderr)
    cover = os.path.join(a.dir, '0000-cover-letter.patch')
    if os.path.exists(cover):
        to = union(tos)
        cc = [x for x in union(ccs) if x not in to]
        with open(cover, encoding='utf-8') as f:
            text = f.read()
        with open(cover, 'w', encoding='utf-8') as f:
            f.write(add_headers(text, to, cc))
    return 0


if __name__ == '__main__':
    sys.exit(main())
