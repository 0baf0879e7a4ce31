#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The series in one place: the reader of patches/series.txt.

patches/series.txt describes all of our work on the base, once: the
cover letters, then one stanza per commit in series order, each with its
subject, its message, the overlay files it adds (our own files, kept in
this repository at their kernel paths), the semantic patch it applies if
any, and its edits to upstream files as a unified diff.  A "rewrite:"
line marks the AUX area rewrite: the commits after it are what the
"upstream" kernel leaves out.  The default diffs are the default base's
(scripts/kernels.py's DEFAULT_BASE, 7.3).  A commit may also carry a
block per other base (BASES): "base 6.12:" and its diff on that base,
"base 6.12: none" (no edits to upstream files there) or "base 6.12:
drop WHY" (not part of that base's series); without one it takes its
default diff on every base.  A commit that exists only on other bases
(a fix of a bug the default base does not have) says "base 7.3: drop
WHY" for the default base, and has no default diff.  The file's own
header documents the format.

Everything that builds or exports the work reads it through this module:

  scripts/assemble.sh     ours (every commit) and upstream (the commits
                          before "rewrite:"), one commit per stanza
  scripts/make-series.sh  the same commits, signed and exported with
                          their cover letter (make series, make fixes)

The command line ("series.py [--file F] [--top DIR] COMMAND"):

  check                   parse and check the file and its claims on the
                          overlay; one summary line
  set-diff [--base B] N FILE
                          replace the diff of commit N (1-based, the NNN of
                          materialize) by the diff in FILE ("-": stdin),
                          or add it; an empty FILE removes it.  Overlay
                          files and the files of the commit's semantic
                          patch are left out of it, so the diff of a
                          whole commit C made in a work tree of
                          build/linux-7.3 will do: git -C
                          build/ours-7.3/linux diff C^ C | series.py
                          set-diff 12 -.  --base B (not the default
                          base, e.g. --base 6.12, from a work tree of
                          build/linux): its "base B:" block instead (an
                          empty FILE makes it "none")
  set-base N B none|drop WHY...|default
                          commit N on base B: no edits to upstream files,
                          not in that base's series (WHY: the upstream
                          commit that fixed it, or why it is moot), or its
                          default diff (the block removed)
  materialize DIR [--upstream] [--base B]
                          write the commits to apply into DIR, for the
                          bash scripts: DIR/commits lists them (NNN TAB
                          subject), and per commit NNN.msg (subject,
                          blank line, body), NNN.files (its overlay
                          files), NNN.diff (its edits, if any), NNN.cocci
                          (its semantic patch's path, if any), NNN.fix
                          (its fix: text, if it is a fix), NNN.test-of
                          (the subject of the fix it tests, if it is a
                          fix's selftest: test-of:); the cover
                          letters as cover.subject, cover.body,
                          fixes-cover.subject and fixes-cover.body
                          (with --base B, its "fixes-cover B:" stanza if
                          there is one).
                          --upstream: only the commits before "rewrite:".
                          --base B (default: BASE, else the default
                          base): each commit's "base B:" block where it
                          has one; dropped commits are left out.

Errors name the file and line; the exit status is 1 on any error.
"""

import argparse
import fnmatch
import os
import re
import subprocess
import sys

WRAP = 72
TRAILERS = ('Fixes: ', 'Link: ', 'Closes: ')
HEADER_KEYS = ('files', 'cocci', 'fix', 'test-of')
# "base 6.12:" starts a commit's block for another base than the default:
# "base 6.12:" alone (its diff follows), "base 6.12: none" or
# "base 6.12: drop REASON".
BASE_LINE = re.compile(r'^base ([0-9][0-9A-Za-z.-]*):(?: (.*))?$')
# "fixes-cover 6.12: SUBJECT": the fixes' cover letter on another base.
FIXES_COVER_LINE = re.compile(r'^fixes-cover(?: ([0-9][0-9A-Za-z.-]*))?: ')


class SeriesError(Exception):
    """A mistake in the series file or in what it claims."""


class Commit:
    """One stanza: a commit of the series."""

    def __init__(self, subject, lineno):
        self.subject = subject
        self.lineno = lineno
        self.patterns = []      # overlay file patterns (files:)
        self.cocci = None       # semantic patch, relative to the file's dir
        self.fix_lines = []     # fix: texts, in order
        self.test_of = None     # test-of: the subject of the fix it tests
        self.body_lines = []
        self.diff_lines = []
        self.rewrite = False    # after the "rewrite:" line
        self.diff_lineno = None  # line of the diff's first line
        self.last_lineno = lineno  # last header or body line with text
        self.bases = {}         # base name: BaseBlock ("base NAME:" lines)

    @property
    def fix(self):
        """The fix: lines joined as fmt(1) reads them: two blanks after a
        sentence, one otherwise; '' if the commit is not a fix."""
        text = ''
        for part in self.fix_lines:
            if text:
                text += '  ' if text[-1] in '.?!' else ' '
            text += part
        return text

    @property
    def body(self):
        """The message body, without leading and trailing blank lines."""
        return '\n'.join(_trim(self.body_lines))

    @property
    def message(self):
        """Subject, blank line, body: the commit message (unsigned)."""
        body = self.body
        return self.subject + '\n' + ('\n' + body + '\n' if body else '')

    @property
    def diff(self):
        """The edits to upstream files, as a unified diff ('' if none)."""
        return _diff_text(self.diff_lines)

    def on(self, base=None):
        """The commit on base (None: the default base): None if it is
        dropped there, else its diff ('' for none): its "base NAME:"
        block if it has one, else its default diff."""
        b = self.bases.get(base or default_base())
        if b is None:
            return self.diff
        if b.kind == 'drop':
            return None
        return b.diff


class BaseBlock:
    """A commit on another base than the default ("base NAME:"): its
    own diff ("diff"), no edits to upstream files ("none"), or not part
    of that base's series at all ("drop", with the reason)."""

    def __init__(self, name, kind, lineno, reason=''):
        self.name = name
        self.kind = kind        # 'diff', 'none' or 'drop'
        self.lineno = lineno
        self.reason = reason
        self.diff_lines = []
        self.diff_lineno = None

    @property
    def diff(self):
        return _diff_text(self.diff_lines)


def _diff_text(lines):
    """A diff's lines as text.  Empty and comment lines after the last
    hunk belong to what follows (a diff never ends in either; an empty
    context line is " ")."""
    lines = list(lines)
    while lines and (lines[-1] == '' or lines[-1].startswith('#')):
        lines.pop()
    return ''.join(line + '\n' for line in lines)


class Series:
    """The parsed file: overlay directories, cover letters, commits."""

    def __init__(self, path):
        self.path = path
        self.overlay_dirs = []
        self.cover = None        # (subject, body) or None
        self.fixes_cover = None
        self.fixes_covers = {}   # base name: (subject, body), fixes-cover NAME:
        self.commits = []
        self.rewrite_lineno = None

    @property
    def fixes(self):
        return [c for c in self.commits if c.fix]

    @property
    def fixes_series(self):
        """What make fixes exports: the fixes and their selftests
        (test-of:), the first commits of the series."""
        return [c for c in self.commits if c.fix or c.test_of]

    def ours(self):
        return list(self.commits)

    def upstream(self):
        return [c for c in self.commits if not c.rewrite]


def _trim(lines):
    lines = list(lines)
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def parse(text, path='series.txt'):
    """Parse the text of a series file; raises SeriesError."""
    s = Series(path)
    state = 'top'
    cover_lines = None
    cur = None

    def err(lineno, msg):
        raise SeriesError(f'{path}:{lineno}: {msg}')

    def end_cover():
        nonlocal cover_lines
        if cover_lines is not None:
            kind, subject, lines = cover_lines
            body = '\n'.join(_trim(lines))
            _set_cover(s, kind, (subject, body))
            cover_lines = None

    blk = None      # the commit's current "base NAME:" block

    def start_base(lineno, m):
        nonlocal blk
        name, rest = m.group(1), (m.group(2) or '').strip()
        if name in cur.bases:
            err(lineno, f'a second "base {name}:" block in one commit '
                f'(the first is line {cur.bases[name].lineno})')
        if rest == '':
            kind, reason = 'diff', ''
        elif rest == 'none':
            kind, reason = 'none', ''
        elif rest == 'drop' or rest.startswith('drop '):
            kind, reason = 'drop', rest[len('drop'):].strip()
            if not reason:
                err(lineno, f'"base {name}: drop" needs a reason (fixed upstream by '
                    'which commit, or why it is moot)')
        else:
            err(lineno, f'expected "base {name}:", "base {name}: none" or '
                f'"base {name}: drop REASON"')
        blk = BaseBlock(name, kind, lineno, reason)
        cur.bases[name] = blk

    for lineno, line in enumerate(text.split('\n'), 1):
        if state in ('diff', 'base-diff'):
            if line.startswith('commit: ') or line == 'rewrite:' or line.startswith('rewrite: '):
                state = 'top'       # handled below
            elif BASE_LINE.match(line):
                state = 'base'      # handled below
            else:
                (cur.diff_lines if state == 'diff' else blk.diff_lines).append(line)
                continue
        if state in ('body', 'base') and BASE_LINE.match(line):
            start_base(lineno, BASE_LINE.match(line))
            state = 'base'
            continue
        if state == 'base' and not (line.startswith('commit: ') or line == 'rewrite:'
                                    or line.startswith('rewrite: ')):
            if line.startswith('diff --git '):
                if blk.kind != 'diff':
                    err(lineno, f'a diff after "base {blk.name}: {blk.kind}"')
                state = 'base-diff'
                blk.diff_lineno = lineno
                blk.diff_lines.append(line)
            elif line.strip() and not line.startswith('#'):
                err(lineno, f'expected a diff, a comment or a blank line after '
                    f'"base {blk.name}:"')
            continue
        if line.startswith('#'):
            continue
        if line.startswith('overlay: '):
            if s.commits or cover_lines is not None or s.cover or s.fixes_cover:
                err(lineno, 'overlay: must come first')
            s.overlay_dirs += line[len('overlay: '):].split()
            continue
        if line.startswith('cover: ') or FIXES_COVER_LINE.match(line):
            kind = line.split(':', 1)[0]
            if s.commits:
                err(lineno, f'{kind}: must come before the first commit:')
            if _get_cover(s, kind) is not None or \
                    (cover_lines is not None and cover_lines[0] == kind):
                err(lineno, f'a second {kind}: stanza')
            end_cover()
            cover_lines = (kind, line.split(': ', 1)[1], [])
            state = 'cover'
            continue
        if line == 'rewrite:' or line.startswith('rewrite: '):
            end_cover()
            if s.rewrite_lineno is not None:
                err(lineno, f'a second rewrite: line (the first is line {s.rewrite_lineno})')
            s.rewrite_lineno = lineno
            state = 'top'
            continue
        if line.startswith('commit: '):
            end_cover()
            subject = line[len('commit: '):]
            if not subject.strip():
                err(lineno, 'commit: needs a subject')
            cur = Commit(subject, lineno)
            cur.rewrite = s.rewrite_lineno is not None
            s.commits.append(cur)
            state = 'header'
            continue
        if state == 'top':
            if line.strip():
                err(lineno, 'text outside a cover:, fixes-cover: or commit: stanza')
        elif state == 'cover':
            cover_lines[2].append(line)
        elif state == 'header':
            key, sep, value = line.partition(': ')
            if not line:
                state = 'body'
            elif sep and key == 'files':
                cur.patterns += value.split()
                cur.last_lineno = lineno
            elif sep and key == 'cocci':
                if cur.cocci is not None:
                    err(lineno, 'a second cocci: line in one commit')
                cur.cocci = value.strip()
                cur.last_lineno = lineno
            elif sep and key == 'fix':
                if not value.strip():
                    err(lineno, 'fix: needs a text (what it fixes, how it was found)')
                cur.fix_lines.append(value)
                cur.last_lineno = lineno
            elif sep and key == 'test-of':
                if cur.test_of is not None:
                    err(lineno, 'a second test-of: line in one commit')
                if not value.strip():
                    err(lineno, 'test-of: needs the subject of the fix it tests')
                cur.test_of = value.strip()
                cur.last_lineno = lineno
            else:
                err(lineno, 'expected files:, cocci:, fix:, test-of: or a blank line')
        elif state == 'body':
            if line.startswith('diff --git '):
                state = 'diff'
                cur.diff_lineno = lineno
                cur.diff_lines.append(line)
            elif len(line) > WRAP and not line.startswith(TRAILERS):
                err(lineno, f'body line longer than {WRAP} columns')
            else:
                cur.body_lines.append(line)
                if line.strip():
                    cur.last_lineno = lineno
    end_cover()
    for c in s.commits:
        for b in c.bases.values():
            if b.kind == 'diff' and not b.diff:
                err(b.lineno, f'"base {b.name}:" has no diff (for no edits: "base {b.name}: none")')
    if not s.commits:
        raise SeriesError(f'{path} has no commit: entries')
    if s.cover is None:
        raise SeriesError(f'{path} has no cover: stanza')
    if s.rewrite_lineno is not None and not any(c.rewrite for c in s.commits):
        err(s.rewrite_lineno, 'rewrite: is not followed by any commit')
    check_fixes_first(s)
    return s


def _cover_base(kind):
    """The base of a cover stanza's kind: "fixes-cover 6.12" -> "6.12";
    None for "cover" and "fixes-cover"."""
    return kind.split(' ', 1)[1] if ' ' in kind else None


def _get_cover(s, kind):
    if kind == 'cover':
        return s.cover
    b = _cover_base(kind)
    return s.fixes_covers.get(b) if b else s.fixes_cover


def _set_cover(s, kind, cover):
    b = _cover_base(kind)
    if kind == 'cover':
        s.cover = cover
    elif b:
        s.fixes_covers[b] = cover
    else:
        s.fixes_cover = cover


def fixes_cover_on(s, base=None):
    """The fixes' cover letter on base (None: the default base): its
    "fixes-cover BASE:" stanza if it has one, else "fixes-cover:"."""
    return s.fixes_covers.get(base, s.fixes_cover) if base else s.fixes_cover


def fixes_on(s, base=None):
    """The fix: commits of the series on base (None: the default base):
    those its block there does not drop, in series order.  A stanza with
    a block for base is on it, whatever its default diff."""
    return [c for c in s.fixes if c.on(base) is not None]


def check_fixes_first(s):
    """Fixes first: a fix after a feature commit would neither reach the
    maintainers first in the main series nor be tested on the base
    alone.  A fix's selftest (test-of:) is one of them: it comes after
    the fix it names, before the first commit that is neither."""
    plain = None
    seen = set()
    for c in s.commits:
        if c.fix and c.test_of:
            raise SeriesError(f'{s.path}:{c.lineno}: "{c.subject}" has both fix: and '
                              'test-of: (a fix carries its test in its own patch, or the '
                              'test is a patch of its own)')
        if c.test_of and c.test_of not in seen:
            raise SeriesError(f'{s.path}:{c.lineno}: test-of: "{c.test_of}" names no fix: '
                              'commit before it')
        if not c.fix and not c.test_of:
            plain = plain or c
        elif plain:
            kind = 'fix:' if c.fix else 'test-of:'
            raise SeriesError(
                f'{s.path}: the {kind} commit "{c.subject}" comes after "{plain.subject}", '
                'which is not a fix; the fixes must come first (move it up, or delete '
                f'its {kind} line and move it below the last fix)')
        if c.fix:
            seen.add(c.subject)


def set_diff(text, number, diff, path='series.txt'):
    """The text of a series file with the diff of its commit number
    (1-based, as materialize numbers them) replaced by diff, or added
    after the commit's message if it has none ('' removes it)."""
    s = parse(text, path)
    if not 1 <= number <= len(s.commits):
        raise SeriesError(f'{path}: no commit {number} (1..{len(s.commits)})')
    c = s.commits[number - 1]
    new = diff.rstrip('\n').split('\n') if diff.strip() else []
    if new and not new[0].startswith('diff --git '):
        raise SeriesError('the diff must start with a "diff --git" line')
    lines = text.split('\n')
    if c.diff_lineno is not None:
        old = c.diff.count('\n')
        start = c.diff_lineno - 1
        if not new:         # the blank line before it goes too
            while start > 0 and not lines[start - 1].strip():
                start -= 1
        lines[start:c.diff_lineno - 1 + old] = new
    elif new:
        lines[c.last_lineno:c.last_lineno] = [''] + new
    out = '\n'.join(lines)
    parse(out, path)
    return out


def _commit_end(c):
    """The last line (1-based) of commit c's content: header, body, diff
    and base blocks."""
    end = c.last_lineno
    if c.diff_lineno is not None:
        end = max(end, c.diff_lineno - 1 + c.diff.count('\n'))
    for b in c.bases.values():
        end = max(end, b.lineno)
        if b.diff_lineno is not None:
            end = max(end, b.diff_lineno - 1 + b.diff.count('\n'))
    return end


def set_base(text, number, base, kind, diff='', reason='', path='series.txt'):
    """The text of a series file with commit number's block for base
    replaced (or added after the commit's content): kind "diff" (with
    diff), "none", "drop" (with reason), or "default" (the block
    removed: the commit takes its default diff on base too)."""
    s = parse(text, path)
    if not 1 <= number <= len(s.commits):
        raise SeriesError(f'{path}: no commit {number} (1..{len(s.commits)})')
    c = s.commits[number - 1]
    if kind == 'diff':
        new = diff.rstrip('\n').split('\n') if diff.strip() else []
        if not new:
            kind = 'none'
        elif not new[0].startswith('diff --git '):
            raise SeriesError('the diff must start with a "diff --git" line')
    if kind == 'drop' and not reason.strip():
        raise SeriesError(f'base {base}: drop needs a reason')
    head = {'diff': f'base {base}:', 'none': f'base {base}: none',
            'drop': f'base {base}: drop {reason.strip()}', 'default': None}[kind]
    block = [head] + (new if kind == 'diff' else []) if head else []
    lines = text.split('\n')
    b = c.bases.get(base)
    if b is not None:
        start = b.lineno - 1
        end = b.lineno if b.diff_lineno is None else b.diff_lineno - 1 + b.diff.count('\n')
        if not block:       # the blank line before it goes too (not a
            # diff's empty context line, " ", above it)
            while start > 0 and lines[start - 1] == '':
                start -= 1
        lines[start:end] = block
    elif block:
        end = _commit_end(c)
        lines[end:end] = [''] + block
    out = '\n'.join(lines)
    parse(out, path)
    return out


def drop_files(diff, paths):
    """diff without the sections of the files in paths (by their b/
    name, or a/ for a deletion)."""
    out, keep = [], True
    for line in diff.splitlines(True):
        if line.startswith('diff --git '):
            a, _, b = line[len('diff --git '):].rstrip('\n').partition(' b/')
            keep = b not in paths and a[2:] not in paths
        if keep:
            out.append(line)
    return ''.join(out)


def cocci_files(path):
    """The files a semantic patch transforms: its "// Files:" line."""
    with open(path, encoding='utf-8') as f:
        for line in f:
            if line.startswith('// Files:'):
                return line[len('// Files:'):].split()
    return []


def default_base():
    """scripts/kernels.py's DEFAULT_BASE: the base the default diffs are
    for."""
    import kernels
    return kernels.DEFAULT_BASE


def check_bases(s):
    """Every "base NAME:" block names a base of scripts/kernels.py other
    than the default one (whose diff is the commit's own)."""
    import kernels
    for c in s.commits:
        for b in c.bases.values():
            if b.name not in kernels.BASES:
                raise SeriesError(f'{s.path}:{b.lineno}: no base {b.name} in scripts/kernels.py '
                                  f'({" ".join(kernels.BASES)})')
            if b.name != kernels.DEFAULT_BASE:
                continue
            # On the default base, a commit can only be left out: its
            # diff is the commit's own, and it has none then.
            if b.kind != 'drop':
                raise SeriesError(f'{s.path}:{b.lineno}: {b.name} is the default base: '
                                  'its diff is the commit\'s own, above (or, for a commit '
                                  f'only on other bases: "base {b.name}: drop WHY")')
            if c.diff:
                raise SeriesError(f'{s.path}:{b.lineno}: "{c.subject}" is dropped on the '
                                  f'default base {b.name} but has a diff for it (line '
                                  f'{c.diff_lineno}): put it in its "base NAME:" blocks')
    # A fix's selftest goes where the fix goes: on a base without the
    # fix it tests nothing that series fixes (it may still run there,
    # from the default base's guest, as a regression test).
    by_subject = {c.subject: c for c in s.commits}
    for c in s.commits:
        if not c.test_of:
            continue
        fix = by_subject[c.test_of]
        for name in kernels.BASES:
            b = None if name == kernels.DEFAULT_BASE else name
            if fix.on(b) is None and c.on(b) is not None:
                raise SeriesError(f'{s.path}:{c.lineno}: "{c.subject}" tests "{fix.subject}", '
                                  f'which is dropped on {name}: drop it there too '
                                  f'("base {name}: drop WHY")')
    for name in s.fixes_covers:
        if name not in kernels.BASES or name == kernels.DEFAULT_BASE:
            raise SeriesError(f'{s.path}: "fixes-cover {name}:" names no other base of '
                              f'scripts/kernels.py ({" ".join(kernels.BASES)})')


def load(path):
    with open(path, encoding='utf-8') as f:
        return parse(f.read(), path)


# -- claims on the overlay ----------------------------------------------------

def match(name, pattern):
    """A pattern claims a path: a leading '?' (may match nothing) is
    ignored; a trailing '/' is a directory prefix; anything else a glob
    against the whole path, in which '*' also matches '/'."""
    if pattern.startswith('?'):
        pattern = pattern[1:]
    if pattern.endswith('/'):
        return name.startswith(pattern)
    return fnmatch.fnmatchcase(name, pattern)


def claim(s, files):
    """Give each overlay file to the one commit whose patterns match it.
    Returns {commit index: [files, in the order given]}; raises
    SeriesError naming every file claimed by no commit or by several, and
    every pattern (without '?') that matches nothing."""
    owned = {i: [] for i in range(len(s.commits))}
    errors = []
    for f in files:
        owners = [i for i, c in enumerate(s.commits)
                  if any(match(f, p) for p in c.patterns)]
        if len(owners) == 1:
            owned[owners[0]].append(f)
        elif not owners:
            errors.append(f'file {f} is claimed by no commit in {os.path.basename(s.path)}')
        else:
            errors.append(f'file {f} is claimed by {len(owners)} commits: ' +
                          ' '.join(f'"{s.commits[i].subject}"' for i in owners))
    for c in s.commits:
        for p in c.patterns:
            if not p.startswith('?') and not any(match(f, p) for f in files):
                errors.append(f'pattern "{p}" of "{c.subject}" matches nothing')
    if errors:
        raise SeriesError('\n'.join(errors) + f'\n{s.path} does not cover the overlay '
                          'exactly once (above)')
    return owned


def overlay_files(top, dirs):
    """Our files: tracked and untracked-but-not-ignored regular files
    under the overlay directories of the repository at top, sorted."""
    if not dirs:
        return []
    out = subprocess.run(['git', 'ls-files', '--cached', '--others', '--exclude-standard',
                          '--', *dirs], cwd=top, check=True, capture_output=True,
                         text=True).stdout
    return sorted({f for f in out.splitlines() if os.path.isfile(os.path.join(top, f))})


# -- materialize ---------------------------------------------------------------

def materialize(s, owned, dest, upstream=False, on_base=None):
    """Write the commits to apply (all, or those before rewrite: with
    upstream) into dest, as the module's docstring describes.  A commit
    with no content yet (its patterns all '?', matching nothing; no
    cocci:, no diff) is left out, with a warning on stderr.  on_base:
    the base they go on (None or the default base: the default diffs);
    another takes each commit's "base NAME:" block where it has one:
    its diff, none, or the commit left out (drop)."""
    if on_base == default_base():
        on_base = None
    os.makedirs(dest, exist_ok=True)
    base = os.path.dirname(os.path.abspath(s.path))

    def put(name, text):
        with open(os.path.join(dest, name), 'w', encoding='utf-8') as f:
            f.write(text)

    for kind, cover in (('cover', s.cover), ('fixes-cover', fixes_cover_on(s, on_base))):
        if cover:
            put(kind + '.subject', cover[0] + '\n')
            put(kind + '.body', cover[1] + '\n' if cover[1] else '')
    listing = []
    for i, c in enumerate(s.commits):
        if upstream and c.rewrite:
            continue
        diff = c.on(on_base)
        if diff is None:    # base NAME: drop
            continue
        files = owned.get(i, [])
        if not files and not c.cocci and not diff:
            print(f'WARNING: "{c.subject}" has no content yet; left out', file=sys.stderr)
            continue
        n = f'{i + 1:03d}'
        listing.append(f'{n}\t{c.subject}\n')
        put(n + '.msg', c.message)
        put(n + '.files', ''.join(f + '\n' for f in files))
        if diff:
            put(n + '.diff', diff)
        if c.cocci:
            path = os.path.join(base, c.cocci)
            if not os.path.isfile(path):
                raise SeriesError(f'{s.path}:{c.lineno}: cocci: {c.cocci} does not exist')
            put(n + '.cocci', path + '\n')
        if c.fix:
            put(n + '.fix', c.fix + '\n')
        if c.test_of:
            put(n + '.test-of', c.test_of + '\n')
    put('commits', ''.join(listing))
    return listing


def main(argv=None):
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--file', default=os.environ.get('SERIES') or os.path.join(top, 'patches', 'series.txt'))
    ap.add_argument('--top', default=os.environ.get('TOP') or top,
                    help='the repository whose overlay files the commits claim')
    sub = ap.add_subparsers(dest='cmd', required=True)
    sub.add_parser('check')
    d = sub.add_parser('set-diff')
    d.add_argument('number', type=int)
    d.add_argument('diff')
    d.add_argument('--base', default=None,
                   help='set the commit\'s "base BASE:" block instead of its default diff')
    d = sub.add_parser('set-base')
    d.add_argument('number', type=int)
    d.add_argument('base')
    d.add_argument('kind', choices=('none', 'drop', 'default'))
    d.add_argument('reason', nargs='*')
    m = sub.add_parser('materialize')
    m.add_argument('dest')
    m.add_argument('--upstream', action='store_true')
    m.add_argument('--base', default=os.environ.get('BASE') or None,
                   help='the base the commits go on (default: BASE, else the default base)')
    a = ap.parse_args(argv)
    try:
        if a.cmd == 'set-diff':
            with open(a.file, encoding='utf-8') as f:
                text = f.read()
            if a.diff == '-':
                diff = sys.stdin.read()
            else:
                with open(a.diff, encoding='utf-8') as f:
                    diff = f.read()
            # Without index lines, as the file keeps its diffs, and
            # without what the commit's files and semantic patch make.
            diff = ''.join(l for l in diff.splitlines(True) if not l.startswith('index '))
            s = parse(text, a.file)
            skip = set(overlay_files(a.top, s.overlay_dirs))
            if 1 <= a.number <= len(s.commits) and s.commits[a.number - 1].cocci:
                skip |= set(cocci_files(os.path.join(os.path.dirname(os.path.abspath(a.file)),
                                                     s.commits[a.number - 1].cocci)))
            diff = drop_files(diff, skip)
            if a.base and a.base != default_base():
                text = set_base(text, a.number, a.base, 'diff', diff, path=a.file)
            else:
                text = set_diff(text, a.number, diff, a.file)
            with open(a.file, 'w', encoding='utf-8') as f:
                f.write(text)
            return 0
        if a.cmd == 'set-base':
            with open(a.file, encoding='utf-8') as f:
                text = f.read()
            text = set_base(text, a.number, a.base, a.kind, reason=' '.join(a.reason),
                            path=a.file)
            with open(a.file, 'w', encoding='utf-8') as f:
                f.write(text)
            return 0
        s = load(a.file)
        check_bases(s)
        files = overlay_files(a.top, s.overlay_dirs)
        owned = claim(s, files)
        if a.cmd == 'check':
            bases = sorted({b for c in s.commits for b in c.bases})
            on = ''.join(
                f'; on {b}: {sum(1 for c in s.commits if b in c.bases and c.bases[b].kind == "diff")}'
                f' own diffs, {sum(1 for c in s.commits if b in c.bases and c.bases[b].kind == "none")}'
                f' none, {sum(1 for c in s.commits if b in c.bases and c.bases[b].kind == "drop")}'
                ' dropped' for b in bases)
            ntest = len(s.fixes_series) - len(s.fixes)
            print(f'series: {len(s.commits)} commits ({len(s.fixes)} fixes'
                  + (f' and {ntest} of their selftests' if ntest else '') + ', '
                  f'{sum(c.rewrite for c in s.commits)} in the rewrite) claim '
                  f'{len(files)} overlay files' + on)
        else:
            materialize(s, owned, a.dest, a.upstream, a.base)
    except (SeriesError, OSError) as e:
        print(f'ERROR: {e}', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
