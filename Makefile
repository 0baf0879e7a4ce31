# SPDX-License-Identifier: GPL-2.0
#
# auxlab: the perf AUX area for mainline Linux (7.3), built, booted and
# tested; for 6.12, the stable fixes and ptsim as a module.
#
#   make run      the demo: assemble, build, boot the patched kernel in
#                 QEMU, trace a small workload with ptsim through the AUX
#                 area, decode the trace on the host; last line "aux-run: ..."
#   make check    every test on the kernels of VARIANTS (7.3: qemu,
#                 ours, and upstream, the base with all of ours but the
#                 AUX rewrite), ours compared with upstream, the gates
#                 (arm64 cross-build, style, series, docs) and the
#                 harness self-test; last line "N passed, N failed[, N
#                 skipped]"
#   make check-6.12
#                 the 6.12 kernels (upstream-6.12, 6.12 with the same
#                 commits, and stock-6.12, Debian 12's own 6.12 with
#                 ptsim.ko built against its headers) beside upstream,
#                 upstream and stock-6.12 compared with upstream-6.12;
#                 CI runs it after make check (.ci/run)
#   make check-stock
#                 Debian 13's own 7.3 with ptsim.ko, booted beside
#                 upstream and compared with it; its known mainline bugs
#                 (tests/suites.py) listed, not failed
#   make docs     our documentation pages, built with Sphinx into
#                 out/docs/html (zero warnings)
#   make bench    the AUX area benchmark (tools/aux/aux-bench) on ours and
#                 on upstream under QEMU -icount, side by side: "bench: ..."
#                 lines, out/bench/results.json and out/bench/bench.png
#   make profile  where a benchmark load's time goes, ours and upstream:
#                 LOAD=txn|mmap SECS=<guest seconds>, out/profile/
#   make fuzz     make check's list on the debug kernels (KASAN, lockdep,
#                 kmemleak, fault injection: debug, ours, and
#                 upstream-debug, upstream's; FUZZ_CHECK), the 8-CPU list
#                 with 72 CPUs (many, NR_CPUS 128; FUZZ_MANY), then the AUX
#                 area fuzzer and perf_fuzzer, longer than in make
#                 check, on the debug kernel:
#                 OPS=<per phase> SEED=<n>
#                 [THREADS=<n>] [PHASES=a,b] [PF_OPS=<n>] [PF_PCT=<n>]
#                 [FUZZ_KERNEL=qemu|kcsan|upstream|upstream-debug];
#                 last lines "perf_fuzzer:
#                 kernel=... ops=N ptsim_opens=N aux_maps=N ..." and
#                 "fuzz: kernel=... ops=N injections=N leaks=N ..."
#   make coverage line and branch coverage of the AUX code by make check's
#                 suites: gcov kernels on 7.3 (ours, cov: aux.c, flush.c,
#                 ptsim; upstream, cov-upstream: ring_buffer.c, core.c
#                 and its AUX functions),
#                 "coverage: <kernel> <file> lines=NN% branches=NN% ..."
#                 lines, unexecuted lines and lcov HTML in out/coverage/;
#                 fails below 95% of aux.c's or flush.c's lines or on an
#                 unexecuted line not justified in tests/coverage/unreachable
#                 [COVERAGE_KERNELS="ours upstream"]
#
# Intermediate targets: deps base tree kernel kernel-<variant> (each
# variant of scripts/kernels.py: debug kcsan upstream upstream-debug cov
# cov-upstream stock upstream-6.12 stock-6.12 ...; one on another base
# than the default assembles that base's trees first: tree-6.12) guest
# arm64 harness-test clean distclean.  Variables:
# JOBS, ACCEL (auto|tcg|kvm), ICOUNT (shift for -icount), TIMEOUT (guest
# seconds), VARIANTS (kernels make check builds and boots, default those
# scripts/kernels.py marks "check"), ARM64=0 (skip the arm64 gate),
# HARNESS_SELFTEST=0, BASE (default 7.3, build/linux-7.3; make base
# BASE=6.12: fetch and extract another base of scripts/kernels.py into
# its own tree, build/linux).
#
# The series for review (run by hand, not part of make check):
#   make series         the work as logical commits (patches/series.txt),
#                       exported with a cover letter into out/series/
#   make checkpatch     checkpatch.pl --strict on every exported patch
#   make series-check   git am out/series/ on a fresh extract of the base,
#                       then build the kernel and the perf_events selftests
#   make bisect-check   the same, building every step of the series
#   make fixes          the fixes to upstream code (the series' fix: commits)
#                       as their own series into out/fixes/, then
#                       checkpatch, git am on a fresh base and a kernel build
#   make fixes BASE=6.12
#                       the same on pristine 6.12, the stable backports
#                       (the fixes' "base 6.12:" blocks, the dropped ones
#                       left out) into out/fixes-6.12/, each mail's To:
#                       and Cc: from 6.12's get_maintainer.pl; checkpatch
#                       of 6.12

S := scripts
export AUXLAB_T0 := $(shell date +%s)
# Every stage line of this make, with its time, for make check's table
# of stage times (scripts/lib.sh: stage, stage_times).
export AUXLAB_STAGES := $(shell mkdir -p out && : >out/stages.tsv && echo $(CURDIR)/out/stages.tsv)
# The kernels and their bases: scripts/kernels.py (VARIANTS' default:
# the variants it marks "check").
VARIANTS ?= $(shell python3 $(S)/kernels.py list check)
export VARIANTS

# The kernels built on the default base, and the other bases with theirs
# (kernel-upstream-6.12: tree-6.12, the base fetched and assembled).
BUILT := $(shell BASE= python3 $(S)/kernels.py list built)
OTHER_BASES := $(shell BASE= python3 $(S)/kernels.py list other-bases)
BENCH_KERNELS := $(shell python3 $(S)/kernels.py list bench)
STOCK_KERNELS := $(shell BASE= python3 $(S)/kernels.py list stock)
LTS_KERNELS := $(shell python3 $(S)/kernels.py list lts)

.PHONY: all run check check-6.12 check-stock bench docs deps base tree kernel $(addprefix kernel-,$(BUILT) $(STOCK_KERNELS)) \
	guest arm64 harness-test clean distclean series checkpatch series-check \
	bisect-check fixes fuzz profile coverage

all: run

# The packages, and the QEMU that boots the kernels (scripts/qemu.sh).
deps:
	@$(S)/deps.sh
	@$(S)/qemu.sh

base: deps
	@$(S)/fetch-base.sh

tree: base
	@$(S)/assemble.sh

kernel: kernel-qemu

# Every variant of scripts/kernels.py built here: kernel-qemu (kernel),
# kernel-debug, kernel-kcsan, kernel-upstream, kernel-cov, kernel-cov-upstream, ...
$(addprefix kernel-,$(BUILT)): kernel-%: tree
	@$(S)/build-kernel.sh $*

# A kernel on another base: that base fetched (make base BASE=...) and
# its trees assembled from the commits' "base NAME:" blocks.
define on_base
.PHONY: tree-$(1) $$(addprefix kernel-,$$(shell BASE= python3 $(S)/kernels.py list built $(1)))
tree-$(1): deps
	@BASE=$(1) $(S)/fetch-base.sh
	@BASE=$(1) $(S)/assemble.sh
$$(addprefix kernel-,$$(shell BASE= python3 $(S)/kernels.py list built $(1))): kernel-%: tree-$(1)
	@$(S)/build-kernel.sh $$*
endef
$(foreach b,$(OTHER_BASES),$(eval $(call on_base,$(b))))

# Debian's stock kernels (kernel-stock: Debian 13's 7.3, whose kbuild
# programs are built from the 7.3 base's source; kernel-stock-6.12:
# Debian 12's 6.12), and ptsim.ko built against their headers
# (scripts/stock.sh).
$(addprefix kernel-,$(STOCK_KERNELS)): kernel-%: deps
	@$(S)/stock.sh $*

arm64: tree
	@$(S)/build-arm64.sh

guest: kernel
	@$(S)/build-guest.sh
	@$(S)/build-perf.sh
	@$(S)/initramfs.sh

run: guest
	@$(S)/run-demo.sh $(CURDIR)/out/run

# The guest (and so the qemu kernel, whose uapi headers it is built with)
# always; the other kernels of VARIANTS.
check: guest $(addprefix kernel-,$(VARIANTS))
	@$(S)/check.sh

# The 6.12 kernels (scripts/kernels.py marks them lts), beside upstream,
# with which upstream-6.12 is compared: not in make check, whose 45
# minutes cold they took to 63 (scripts/README.md, "Debian 13's 7.3"); CI
# runs both (.ci/run).  The one gate on their trees: kunitconfig.
check-6.12: guest kernel-upstream $(addprefix kernel-,$(LTS_KERNELS))
	@VARIANTS="upstream $(LTS_KERNELS)" SMP8_VARIANTS= GATES=kunitconfig HARNESS_SELFTEST=0 $(S)/check.sh

# Debian 13's own 7.3 (stock) with ptsim.ko, beside upstream: not in make
# check (its cost; scripts/README.md, "Debian 13's 7.3").
check-stock: guest kernel-upstream kernel-stock
	@VARIANTS="stock upstream" SMP8_VARIANTS= GATES=0 HARNESS_SELFTEST=0 $(S)/check.sh

# By hand, not in CI (make check runs its smoke version): both kernels.
bench: guest $(addprefix kernel-,$(BENCH_KERNELS))
	@$(S)/deps.sh bench
	@$(S)/bench.sh

profile: guest $(addprefix kernel-,$(BENCH_KERNELS))
	@$(S)/profile.sh

docs: tree
	@$(S)/build-docs.sh

# The fuzzer boots FUZZ_KERNEL: debug (default), qemu, upstream,
# upstream-debug or kcsan (configs/kcsan.config: KCSAN, which excludes
# KASAN; built only here).  Before it, make check's list on FUZZ_CHECK
# (the debug kernels of scripts/kernels.py: debug and upstream-debug;
# empty: none), and the 8-CPU list with more than 64 CPUs on FUZZ_MANY
# (its kernel "many"; empty: none).
FUZZ_KERNEL ?= debug
FUZZ_CHECK ?= $(shell python3 $(S)/kernels.py list fuzz-check)
FUZZ_MANY ?= $(shell python3 $(S)/kernels.py list fuzz-many)
export FUZZ_KERNEL FUZZ_CHECK FUZZ_MANY
fuzz: guest kernel-$(FUZZ_KERNEL) $(addprefix kernel-,$(FUZZ_CHECK) $(FUZZ_MANY))
	@$(S)/fuzz.sh

# make coverage's gcov kernels (configs/coverage.config): the variants
# scripts/kernels.py gives the sides of COVERAGE_KERNELS.
COVERAGE_KERNELS ?= ours upstream
export COVERAGE_KERNELS
coverage: guest $(foreach k,$(COVERAGE_KERNELS),kernel-$(shell python3 $(S)/kernels.py coverage $(k)))
	@$(S)/deps.sh coverage
	@$(S)/coverage.sh

harness-test: guest
	@tests/harness/selftest.sh $(CURDIR)/out/harness

series: tree
	@$(S)/make-series.sh

checkpatch: series
	@$(S)/checkpatch-series.sh

series-check: series
	@$(S)/series-check.sh

bisect-check: series
	@$(S)/series-check.sh --bisect

fixes: tree
	@$(S)/fixes.sh

clean:
	rm -rf build/obj build/upstream/obj build/upstream-*/obj build/ours-*/obj build/guest build/host build/initramfs* out

distclean:
	rm -rf build out
