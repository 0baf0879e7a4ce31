#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The bases and the kernel variants, in one table each (BASES, VARIANTS).

A base is a Debian source package of Linux, pinned by version and
sha256: where apt finds it, Debian's stock kernel of the same version
if make check boots one, and the directory it is extracted into.  A
variant is one kernel the harness builds or boots: its tree, its config
fragments, its boot quirks, whether make check boots it (and with 8
CPUs), and which kernel it is compared with.  Everything else reads
these tables, as tests/suites.py is read for the suites:

  kernels.py base-sh [BASE]    the base's pins (and APT_MIRROR, APT_KEYRING,
                               and QEMU's pins: QEMU_*)
                               as shell assignments
                               (scripts/lib.sh; BASE, default the
                               DEFAULT_BASE; BASE_VERSION, STOCK_VERSION
                               and STOCK_ABI in the environment override
                               the pins, for the harness self-test)
  kernels.py sh VARIANT        a variant's row as shell assignments K_*
                               (scripts/lib.sh, variant_env)
  kernels.py list WHAT         variant names, in table order: "check" (make
                               check's default VARIANTS), "lts" (make
                               check-6.12's, beside upstream), "smp8" (the
                               default SMP8_VARIANTS of VARIANTS, read
                               from the environment), "kselftest",
                               "fuzz-check" (make fuzz's FUZZ_CHECK),
                               "bench"
                               (ours, then what it is compared with),
                               "built" (every kernel built here on BASE,
                               or the base given), "trees" (the trees,
                               ours or upstream, that they need),
                               "bases", "other-bases" (all but BASE),
                               "stock" (Debian's stock kernels with
                               ptsim.ko: scripts/stock.sh VARIANT)
  kernels.py coverage NAME     the gcov variant of COVERAGE_KERNELS' NAME
  kernels.py table             both tables, for a reader

Python code imports the module (results.py's FOREIGN, suites.py's
MANIFEST_KERNELS).
"""
import argparse
import os
import shlex
import sys

# -- bases -----------------------------------------------------------------
# pkg, version, sha256: the source package, pinned.  If the archive no
# longer carries that version, scripts/fetch-base.sh falls back to the
# newest of pkg (its candidate), loudly, its sha256 unpinned.
# suite: where apt finds it.  None: the machine's own apt sources (for
# 6.12: bookworm and bookworm-security); a suite name: a project-local
# apt configuration under build/apt/<suite>/ that has only that suite
# of APT_MIRROR, signed by APT_KEYRING (scripts/lib.sh, apt_config).
# tree: the directory under build/ it is extracted into (a git
# repository: Debian's tree as unpacked, tag "debian", then the
# revert of Debian's perf delta, patches/base/<name>.patch, tag "base");
# utree: the "upstream" work tree of the same repository; otree: the
# "ours" work tree, if not tree itself (a work tree of the same
# repository, placed like utree so that ours' objects, beside it, see
# their sources by the same relative path as upstream's and ccache hits
# on every object the two share).
# stock: Debian's stock kernel of this base, which make check boots
# (scripts/stock.sh): version and ABI of linux-image-<abi>-amd64, its
# headers and kbuild, each package's sha256; newest: the regular
# expression of the image packages the fallback picks the newest of.
# packages: the packages fetched, by role (default image, headers, common,
# kbuild: linux-image-<abi>-amd64 holds the kernel and its modules; from
# Debian 13's 7.x on it is an empty package that depends on
# linux-binary-<abi>-amd64, the kernel, and linux-modules-<abi>-amd64,
# the modules).  make_args: added to the make that builds ptsim.ko
# against the headers (tools/ptsim-dkms), for a kernel built with
# another distribution's compiler than this machine's (see 7.3's).
STOCK_PACKAGES = ['image', 'headers', 'common', 'kbuild']
APT_MIRROR = 'http://deb.debian.org/debian'
APT_KEYRING = '/usr/share/keyrings/debian-archive-keyring.gpg'
BASES = {
    # The variants whose row says base '6.12' are built on it (the
    # commits' "base 6.12:" blocks in patches/series.txt): its upstream
    # kernel, for the stable fixes, and Debian 12's stock kernel.
    '6.12': {
        'pkg': 'linux-source-6.12',
        'version': '6.12.117-1~deb12u1',
        'sha256': 'e849faf31ca3555757f3a8877cb01af92122f744f75d1f3102734651c4e14703',
        'suite': None,
        'tree': 'linux',
        'utree': 'upstream/linux',
        'stock': {
            'version': '6.12.117-1~deb12u1',
            'abi': '6.12.117+deb12',
            'newest': r'^linux-image-6\.12\.[0-9]+\+deb12-amd64$',
            'sha256': {
                'image': '803d36a7cda13355ae8152122470288b2636f19f1cb58162dd9d8b408af9b1b4',
                'headers': '8ee4c67f8399bc6f9aa1c5256d9d1b1b7eace76c7acca519e63f1b7df5fc4bd0',
                'common': '0c70107dda266a9d26dc119d80a71589202b17fbf4d4ddf544681c89e2002742',
                'kbuild': '69761d1daf39e43485d278cc7066f77c15edc3b881d6e47afd61cf0da0985677',
            },
        },
    },
    # The default base (DEFAULT_BASE): the variants whose row names no
    # base are built on it, from the commits' default diffs in
    # patches/series.txt.
    '7.3': {
        'pkg': 'linux-source-7.3',
        'version': '7.3.4-1~bpo13+1',
        'sha256': '703e369ddd4cce971452f5a593ee55df3a5c10c83caf0fa0df039633ed181ee3',
        'suite': 'trixie-backports',
        'tree': 'linux-7.3',
        'utree': 'upstream-7.3/linux',
        'otree': 'ours-7.3/linux',
        # Debian 13's own 7.3 (trixie-backports), which the variant
        # stock boots.  Built on trixie, not bookworm (this
        # machine): scripts/stock.sh rebuilds the kbuild programs that
        # trixie's glibc 2.41 built (modpost, objtool, resolve_btfids
        # need GLIBC_2.38; bookworm has 2.36) from this base's source,
        # the very source of that kernel, and ptsim.ko is compiled with
        # bookworm's gcc-12, not the gcc-14 the headers name
        # (x86_64-linux-gnu-gcc-14, which bookworm has not):
        # -fmin-function-alignment, which gcc-14 has and gcc-12 has not,
        # is then left to -falign-functions (the kernel Makefile's choice
        # for a compiler without it; the same alignment).
        'stock': {
            'version': '7.3.4-1~bpo13+1',
            'abi': '7.3.4+deb13',
            'newest': r'^linux-image-7\.3\.[0-9]+\+deb13-amd64$',
            'packages': ['binary', 'modules', 'headers', 'common', 'kbuild'],
            'make_args': ['CC=x86_64-linux-gnu-gcc', 'CONFIG_CC_HAS_MIN_FUNCTION_ALIGNMENT='],
            'sha256': {
                'binary': '7e3248d03a84dcdda88c567aa8c4038f2e7795d2dd167b112c56f8901b6f513f',
                'modules': 'b3ea01922c9f133767a83cf6891c19b3693858ded617bf22d1e34f95382c08ea',
                'headers': '1c43249a7b98aee4af60f2b822ddb04a9e96c1c9e8b013e5f74d3d9faf318699',
                'common': '886647d4a7b05d2aedd22f8e16917c5b75e97e8946966d6bac48962c40b19a06',
                'kbuild': '248cce12d48862f7d38ca51efdb759c031192543d144f18bd36a5df37f156244',
            },
        },
    },
}
DEFAULT_BASE = '7.3'

# -- the emulator ------------------------------------------------------------
# QEMU, which boots every variant: bookworm-backports' QEMU 10, fetched
# like a base (pinned version and sha256s, project-local apt
# configuration, the newest of the suite if the pin is gone) and extracted
# under build/qemu/ by scripts/qemu.sh, not installed: the machine's own
# qemu-system-x86 (bookworm's 7.2) stays, and is used if the fetch fails.
# Why 10: under 7.2's TCG, Debian's kernel died in SLUB under CPU offline
# in 6 of 9 boots with CMPXCHG16B, in none of 6 under 10
# (tests/ROBUSTNESS.md, "CPU hotplug on Debian's kernel").
QEMU = {
    'suite': 'bookworm-backports',
    'version': '1:10.0.2+ds-2+deb13u1~bpo12+1',
    'sha256': {
        'qemu-system-x86': '4a6b1856c8b0d7df4ff8e70249e12c473ccf8d516aadb4ae14d3d938faed0c65',
        'qemu-system-common': '23a4672a138832d7173855e981aa8282c73ef5e04e080fa7ada9f82c6b34f507',
        'qemu-system-data': '2d831088187087013b3fcbd19bdfb955b182a2d5a08f6dafa0ad1c6d2007fb4e',
    },
}

# -- variants --------------------------------------------------------------
# base: the base it is built on (BASES; None: DEFAULT_BASE).
# tree: "ours" (the base and the whole series: the base's otree,
# build/ours-7.3/linux, else its tree), "upstream" (the base and every
# commit before rewrite:, the base's utree: build/upstream-7.3/linux, on
# 6.12 build/upstream/linux) or None (not built here).  side: its name
# in a comparison and in make bench's and make coverage's figures.
# frags: the config fragments (configs/) over tinyconfig; rewrite_frags:
# and those patches/rewrite keeps for ours; known_only: less the options
# no Kconfig file of the tree defines.  obj: its objects under build/, if
# not obj/<name> (then obj/<name> links there: see REPO in lib.sh).
# headers: headers_install into its objects (the guest is built against
# ours').  gcov: the objects profiled; coverage: make coverage's name of
# it, with the files reported and whether aux.c's goal applies.
# check: make check boots it (its default VARIANTS); lts: make check-6.12
# does (the 6.12 kernels, with upstream, which they are compared with:
# out of make check for its 45 minutes cold, in CI beside it, .ci/run);
# smp8: and a second
# time with 8 CPUs (smp8_mem of memory, smp8_cpus CPUs where a row says
# other than 8); kselftest: and once more the
# kernel CI way; bench: make bench and make profile boot it; fuzz_check:
# make fuzz boots it with the check list first (the debug kernels, whose
# boots take five times a plain one's under TCG: make check's 45 minutes
# pay for a second base instead); fuzz_many: make fuzz gives it the
# second boot alone, with its smp8_cpus (more than 64).
# compare: (other variant, what): its results against the other's, all of
# them ("all", in the 8-CPU boots too) or on the suites it runs, with the
# explained differences ("subset").  foreign: not built here (results.py:
# its own manifest lines, no objects).  fresh: built only from a fresh
# extract of its base (make fixes), so "trees" does not list its tree.
# Boot: mode (the guest's list: check, or its own), kernel and initrd
# (an archive appended to the initramfs) under build/, test_modules
# (tests/modules/ built against it), timeout, cpu, tcg_threads,
# retry_before_init: booted once more if it dies before /init; append:
# more words for its kernel command line, in every boot.
OURS_GCOV = ['kernel/events/aux.o', 'kernel/events/flush.o',
             'drivers/hwtracing/ptsim/ptsim-engine.o', 'drivers/hwtracing/ptsim/ptsim-pmu.o',
             'drivers/hwtracing/ptsim/ptsim-bench.o', 'drivers/hwtracing/ptsim/ptsim-mark.o']
UPSTREAM_GCOV = ['kernel/events/ring_buffer.o', 'kernel/events/core.o']
DEFAULTS = {
    'base': None, 'tree': 'ours', 'side': None, 'frags': ['qemu.config'], 'rewrite_frags': False,
    'known_only': False, 'obj': None, 'headers': True, 'gcov': [], 'coverage': None,
    'coverage_files': [], 'coverage_goal': False,
    'check': False, 'lts': False, 'smp8': False, 'smp8_mem': '6G', 'smp8_cpus': 8,
    'kselftest': False, 'fuzz_many': False,
    'bench': False,
    'fuzz_check': False,
    'compare': None, 'foreign': False, 'fresh': False,
    'mode': 'check', 'kernel': None, 'initrd': None, 'test_modules': True,
    'timeout': 1200, 'cpu': 'max', 'tcg_threads': None, 'retry_before_init': False,
    'append': None,
}
VARIANTS = {
    # -- on the default base, 7.3 (mainline) --
    # Ours: the whole series, built from the base's otree
    # (build/ours-7.3/linux), and compared with upstream as a whole.
    # Built with lockdep (configs/lockdep.config), as upstream is, so
    # that every make check runs under it (and upstream's build stays
    # ccache hits on ours'); make bench and make profile time the bench
    # variants, the same two kernels without it.
    'qemu': {'side': 'ours', 'rewrite_frags': True, 'obj': 'ours-7.3/obj/qemu',
             'frags': ['qemu.config', 'lockdep.config'],
             'known_only': True, 'check': True, 'smp8': True, 'kselftest': True,
             'compare': ('upstream', 'all')},
    'bench': {'side': 'ours', 'rewrite_frags': True, 'obj': 'ours-7.3/obj/bench',
              'known_only': True, 'bench': True},
    # The KASAN kernels boot without 5-level paging: identify_cpu()
    # clears boot_cpu_data's capabilities with interrupts on, and an
    # interrupt in that window sees pgtable_l5_enabled() false, so KASAN
    # takes the LA57 direct map for a wild address (7.3's upstream debug
    # kernel, once: "wild-memory-access in rcu_is_watching", from
    # identify_cpu at 0.0097 s; x86's, not ours, and in 6.12's code too).
    # Both debug kernels (KASAN, lockdep, kmemleak, fault injection) in
    # make fuzz, whose check phase boots them with the check list: their
    # boots take five times a plain one's under TCG.  Ours also the kernel
    # CI way there (kselftest): the installed programs within the settings
    # file's timeout on the slowest kernel, with its fault injection (its
    # figures: tests/README.md).
    'debug': {'side': 'ours', 'rewrite_frags': True, 'frags': ['qemu.config', 'debug.config'],
              'obj': 'ours-7.3/obj/debug', 'known_only': True, 'fuzz_check': True,
              'kselftest': True,
              'smp8_mem': '2G', 'timeout': 2400, 'cpu': 'max,la57=off'},
    # Upstream: 7.3 with every commit before rewrite: (the fixes, flush,
    # ptsim, perf, the selftests), the reference ours is judged by; and
    # compared with 6.12's on everything that one runs: the same results,
    # or a 7.x behaviour change a row of tests/suites.py names (its
    # differs=, kernel upstream).
    # Lockdep built in, for the ccache hits on ours' objects and the same
    # configuration, but not validating (lockdep.prove_locking=0): ours'
    # main boot validates ptsim and the series' core code under it, and
    # upstream's too would cost make check's budget another 2.5 minutes;
    # DEBUG_ATOMIC_SLEEP still checks.
    'upstream': {'tree': 'upstream', 'side': 'upstream', 'obj': 'upstream-7.3/obj/qemu',
                 'frags': ['qemu.config', 'lockdep.config'],
                 'append': 'lockdep.prove_locking=0',
                 'headers': False, 'known_only': True, 'check': True, 'smp8': True,
                 'compare': ('upstream-6.12', 'subset')},
    'bench-upstream': {'tree': 'upstream', 'side': 'upstream', 'obj': 'upstream-7.3/obj/bench',
                       'headers': False, 'known_only': True, 'bench': True},
    'upstream-debug': {'tree': 'upstream', 'side': 'upstream',
                       'frags': ['qemu.config', 'debug.config'],
                       'obj': 'upstream-7.3/obj/debug', 'headers': False, 'known_only': True,
                       'fuzz_check': True, 'smp8_mem': '2G', 'timeout': 2400,
                       'cpu': 'max,la57=off'},
    # More CPUs than 64, once, in make fuzz: ours with NR_CPUS 128
    # (configs/many.config), its second boot (the smp8 list, where the
    # number of CPUs matters) with 72 CPUs instead of 8, label
    # "many@smp8"; no main boot (scripts/fuzz.sh).  What it shows: the
    # tests that go over every CPU past a 64-bit mask, and the AUX area
    # on that many CPUs.  Its runs: tests/README.md.
    'many': {'side': 'ours', 'rewrite_frags': True, 'frags': ['qemu.config', 'many.config'],
             'obj': 'ours-7.3/obj/many', 'known_only': True, 'fuzz_many': True,
             'smp8_cpus': 72},
    'kcsan': {'side': 'ours', 'rewrite_frags': True, 'frags': ['qemu.config', 'kcsan.config'],
              'obj': 'ours-7.3/obj/kcsan', 'known_only': True},
    'cov': {'side': 'ours', 'rewrite_frags': True, 'frags': ['qemu.config', 'coverage.config'],
            'obj': 'ours-7.3/obj/cov', 'known_only': True,
            'gcov': OURS_GCOV, 'coverage': 'ours', 'coverage_goal': True,
            'coverage_files': [o.rsplit('/', 1)[1][:-2] + '.c' for o in OURS_GCOV]},
    'cov-upstream': {'tree': 'upstream', 'side': 'upstream', 'obj': 'upstream-7.3/obj/cov',
                     'frags': ['qemu.config', 'coverage.config'], 'known_only': True,
                     'gcov': UPSTREAM_GCOV, 'coverage': 'upstream',
                     'coverage_files': [o.rsplit('/', 1)[1][:-2] + '.c' for o in UPSTREAM_GCOV]},
    # make fixes: the base with the fixes alone, on a fresh extract
    # (series-check.sh --fixes); base-6.12 the same for make fixes
    # BASE=6.12.  Objects beside the extract as qemu's are beside ours
    # (build/fixes-check/ours-7.3/obj/base), so ccache hits.
    'base': {'known_only': True, 'fresh': True, 'obj': 'ours-7.3/obj/base'},
    # Debian 13's own 7.3 (BASES['7.3']['stock']) with ptsim.ko, booted
    # like stock-6.12 (scripts/stock.sh stock) and compared with
    # upstream; not in make check (VARIANTS="stock upstream" boots it).
    'stock': {'tree': None, 'side': 'stock', 'foreign': True,
              'compare': ('upstream', 'subset'), 'mode': 'stock',
              'kernel': 'stock/vmlinuz', 'initrd': 'stock/modules.cpio.gz',
              'test_modules': False, 'tcg_threads': 'single',
              'retry_before_init': True},
    # -- on 6.12, for what 6.12 users need --
    # 6.12 takes every commit before rewrite: (the rewrite is for
    # mainline only): its upstream kernel is the stable fixes' test bed
    # (their reproducers) and the reference of Debian 12's kernel.
    'upstream-6.12': {'base': '6.12', 'tree': 'upstream', 'side': 'upstream-6.12',
                      'obj': 'upstream/obj/qemu', 'headers': False, 'lts': True},
    'base-6.12': {'base': '6.12', 'known_only': True, 'fresh': True},
    # Debian 12's own 6.12 (BASES['6.12']['stock']) with ptsim.ko built
    # against its headers, the way the README tells users to load it.
    'stock-6.12': {'base': '6.12', 'tree': None, 'side': 'stock-6.12', 'lts': True,
                   'foreign': True, 'compare': ('upstream-6.12', 'subset'), 'mode': 'stock',
                   'kernel': 'stock-6.12/vmlinuz', 'initrd': 'stock-6.12/modules.cpio.gz',
                   'test_modules': False, 'tcg_threads': 'single',
                   'retry_before_init': True},
}


def on_base(name, base_name=None):
    """Variant name is built on base_name (None: BASE, else the
    DEFAULT_BASE).  A row without a base is on the DEFAULT_BASE."""
    return variant(name)['base'] == base(base_name)[0]


def variant(name):
    if name not in VARIANTS:
        raise KeyError(f'unknown kernel variant {name!r} (scripts/kernels.py: '
                       f'{" ".join(VARIANTS)})')
    v = {**DEFAULTS, **VARIANTS[name]}
    v['base'] = v['base'] or DEFAULT_BASE
    return v


def names(key):
    return [n for n in VARIANTS if variant(n)[key]]


def foreign():
    """The kernels not built here (results.py's FOREIGN)."""
    return tuple(names('foreign'))


def of_mode(mode):
    """The kernels whose main boot runs the guest list MODE."""
    return [n for n in VARIANTS if variant(n)['mode'] == mode]


def base(name=None):
    name = name or os.environ.get('BASE') or DEFAULT_BASE
    if name not in BASES:
        raise KeyError(f'unknown base {name!r} (scripts/kernels.py: {" ".join(BASES)})')
    return name, BASES[name]


def sh(assign):
    return ''.join(f'{k}={shlex.quote(str(v))}\n' for k, v in assign.items())


def cmd_base_sh(a):
    name, b = base(a.base)
    env = os.environ.get
    out = {'BASE_NAME': name, 'BASE_DEFAULT': DEFAULT_BASE, 'BASE_PKG': b['pkg'],
           'BASE_VERSION': env('BASE_VERSION') or b['version'],
           'BASE_PINNED': b['version'], 'BASE_SHA256': b['sha256'],
           'BASE_SUITE': b['suite'] or '', 'BASE_TREE': b['tree'], 'BASE_UTREE': b['utree'],
           'BASE_OTREE': b.get('otree') or b['tree'],
           'BASE_NEWEST': '^' + b['pkg'].replace('.', r'\.') + '$',
           'APT_MIRROR': APT_MIRROR, 'APT_KEYRING': APT_KEYRING,
           'QEMU_SUITE': QEMU['suite'], 'QEMU_PINNED': QEMU['version']}
    out.update({'QEMU_SHA256_' + k.upper().replace('-', '_'): v
                for k, v in QEMU['sha256'].items()})
    st = b['stock']
    if st:
        out.update({'STOCK_VERSION': env('STOCK_VERSION') or st['version'],
                    'STOCK_ABI': env('STOCK_ABI') or st['abi'],
                    'STOCK_PINNED': st['version'], 'STOCK_NEWEST': st['newest'],
                    'STOCK_PACKAGES': ' '.join(st.get('packages') or STOCK_PACKAGES),
                    'STOCK_MAKE_ARGS': ' '.join(st.get('make_args') or [])})
        out.update({f'STOCK_SHA256_{k.upper()}': v for k, v in st['sha256'].items()})
    else:
        out['STOCK_VERSION'] = ''
    sys.stdout.write(sh(out))


def cmd_sh(a):
    v = variant(a.variant)
    out = {'K_NAME': a.variant}
    for k, val in v.items():
        if isinstance(val, bool):
            val = int(val)
        elif isinstance(val, (list, tuple)):
            val = ' '.join(val)
        elif val is None:
            val = ''
        out['K_' + k.upper()] = val
    sys.stdout.write(sh(out))


def cmd_list(a):
    if a.what == 'check':
        out = names('check')
    elif a.what == 'lts':
        out = names('lts')
    elif a.what == 'smp8':
        chosen = os.environ.get('VARIANTS', '').split() or names('check')
        out = [n for n in chosen if variant(n)['smp8']]
    elif a.what == 'kselftest':
        out = names('kselftest')
    elif a.what == 'fuzz-check':
        out = names('fuzz_check')
    elif a.what == 'fuzz-many':
        out = names('fuzz_many')
    elif a.what == 'bench':
        ours = names('bench')
        out = sorted(ours, key=lambda n: variant(n)['side'] != 'ours')
    elif a.what == 'built':
        out = [n for n in VARIANTS if variant(n)['tree'] and on_base(n, a.base)]
    elif a.what == 'trees':
        out = sorted({variant(n)['tree'] for n in VARIANTS
                      if variant(n)['tree'] and not variant(n)['fresh'] and on_base(n, a.base)})
    elif a.what == 'other-bases':
        out = [b for b in BASES if b != base()[0]]
    elif a.what == 'bases':
        out = list(BASES)
    elif a.what == 'stock':
        out = [n for n in VARIANTS if variant(n)['foreign'] and variant(n)['mode'] == 'stock']
    print(' '.join(out))


def cmd_coverage(a):
    for n in VARIANTS:
        if variant(n)['coverage'] == a.name:
            print(n)
            return
    sys.exit(f'coverage: unknown kernel {a.name} '
             f'({" or ".join(variant(n)["coverage"] for n in names("coverage"))})')


def cmd_table(a):
    for name, b in BASES.items():
        st = b['stock']
        print(f'base {name}: {b["pkg"]} {b["version"]} from {b["suite"] or "the machine apt sources"}'
              f', build/{b["tree"]}' + (f', stock {st["abi"]} {st["version"]}' if st else ''))
    for n in VARIANTS:
        v = variant(n)
        what = [f'tree {v["tree"] or "(not built here)"}' + (f' on {v["base"]}' if v['base'] != DEFAULT_BASE else '')]
        if v['tree']:
            what.append('frags ' + '+'.join(v['frags']) + (' +rewrite' if v['rewrite_frags'] else ''))
        what += [k for k in ('check', 'lts', 'smp8', 'kselftest', 'fuzz_check', 'fuzz_many', 'bench',
                             'foreign') if v[k]]
        if v['compare']:
            what.append(f'compared with {v["compare"][0]} ({v["compare"][1]})')
        print(f'variant {n}: ' + ', '.join(what))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    sub = ap.add_subparsers(dest='cmd', required=True)
    p = sub.add_parser('base-sh')
    p.add_argument('base', nargs='?')
    p.set_defaults(fn=cmd_base_sh)
    p = sub.add_parser('sh')
    p.add_argument('variant')
    p.set_defaults(fn=cmd_sh)
    p = sub.add_parser('list')
    p.add_argument('what', choices=('check', 'lts', 'smp8', 'kselftest', 'fuzz-check', 'fuzz-many',
                                    'bench', 'built',
                                    'trees', 'bases', 'other-bases', 'stock'))
    p.add_argument('base', nargs='?', help='built, trees: on this base (default: BASE, '
                   'else DEFAULT_BASE)')
    p.set_defaults(fn=cmd_list)
    p = sub.add_parser('coverage')
    p.add_argument('name')
    p.set_defaults(fn=cmd_coverage)
    sub.add_parser('table').set_defaults(fn=cmd_table)
    a = ap.parse_args()
    try:
        a.fn(a)
    except KeyError as e:
        sys.exit(e.args[0])


if __name__ == '__main__':
    main()
