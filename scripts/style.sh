#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Style gates over our own files, as a TAP stream on stdout (one case per
# gate, the offending lines as "# " diagnostics).  Run by "make check".
#
#   spdx        every file of the repository carries an SPDX line near
#               its top (patches are diffs and exempt, and so are perf's
#               asciidoc pages, which upstream writes without one; a PNG
#               has it in a FILE.png.license beside it)
#   kernel-doc  scripts/kernel-doc -none -Wall: no warnings on our kernel
#               sources and headers
#   sparse      make C=2 on each of our kernel objects: no warnings
#   W=1         make W=1 on each of our kernel objects: no warnings
#   in-tree     no out-of-tree code in our kernel sources: no #ifdef MODULE,
#               LINUX_VERSION_CODE or test for PERF_EVENT_IOC_FLUSH (what a
#               distribution kernel lacks, tools/ptsim-dkms supplies)
#
# The compiler gates build in their own object directory, $BUILD/obj/style
# (the qemu kernel's .config), so the W=1 and sparse flags never dirty the
# objects of the test kernels.  checkpatch of the exported series is a
# separate gate (scripts/checkpatch-series.sh).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

O=$BUILD/obj/style
ktap_open -
result() {	# result NAME OUTPUT-FILE: ok if the file is empty
	ktap_result "$([ -s "$2" ]; echo $((!$?)))" "$1" "$2"
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Our files: what assemble.sh copies into the tree, plus the harness.
mapfile -t ours < <(cd "$TOP" && git ls-files --cached --others --exclude-standard)
for f in "${ours[@]}"; do
	# perf's asciidoc pages carry no SPDX line upstream (its build takes
	# the page as it is): ours follows them.
	case $f in *.patch | tools/perf/Documentation/*.txt) continue ;; esac
	[ -f "$TOP/$f" ] || continue
	# A binary file (the README's plot) carries its SPDX line in a
	# FILE.license next to it, as the REUSE specification has it.
	case $f in *.png) f=$f.license; [ -f "$TOP/$f" ] || { echo "$f: missing"; continue; } ;; esac
	head -n 5 "$TOP/$f" | grep -q 'SPDX-License-Identifier:' || echo "$f: no SPDX-License-Identifier line"
done >"$tmp/spdx"
result "spdx: every file has an SPDX-License-Identifier" "$tmp/spdx"

# Kernel sources of ours (not tools/: userspace is held to -Werror).
mapfile -t ksrc < <(printf '%s\n' "${ours[@]}" |
	grep -E '^(arch|drivers|include|kernel|lib)/.*\.[ch]$' || true)
if [ ${#ksrc[@]} -gt 0 ]; then
	(cd "$TREE" && scripts/kernel-doc -none -Wall "${ksrc[@]}") >"$tmp/kdoc" 2>&1
fi
touch "$tmp/kdoc"
result "kernel-doc: no warnings on ${#ksrc[@]} kernel files" "$tmp/kdoc"

# Conditional code for other kernels than the one a file is part of.
(cd "$TOP" && grep -nE '^[[:space:]]*#[[:space:]]*(if|elif|ifn?def).*\b(MODULE|LINUX_VERSION_CODE|KERNEL_VERSION|PERF_EVENT_IOC_FLUSH)\b' \
	"${ksrc[@]}" /dev/null) >"$tmp/intree"
result "in-tree: no out-of-tree conditionals in ${#ksrc[@]} kernel files" "$tmp/intree"

# A .c file that another of ours #includes (a KUnit test that reaches
# static functions that way) is compiled as part of that file, not alone.
objs=()
for f in "${ksrc[@]}"; do
	case $f in *.c) ;; *) continue ;; esac
	(cd "$TOP" && grep -lqF "#include \"${f##*/}\"" "${ksrc[@]}") && continue
	objs+=("${f%.c}.o")
done
mkdir -p "$O"
if [ ! -f "$O/.config" ] || ! cmp -s "$BUILD/obj/qemu/.config" "$O/.config"; then
	cp "$BUILD/obj/qemu/.config" "$O/.config"
fi
KMAKE=(make -C "$TREE" O="$O" -j"$JOBS" CC="ccache gcc" HOSTCC="ccache gcc")
if ! "${KMAKE[@]}" -s olddefconfig prepare >"$tmp/prep.log" 2>&1; then
	echo "style: could not prepare $O:" >"$tmp/sparse"
	cat "$tmp/prep.log" >>"$tmp/sparse"
	cp "$tmp/sparse" "$tmp/w1"
else
	# C=2 checks every named object even if it is up to date; W=1 needs a
	# real compile, so drop the objects first.  Only lines naming one of
	# our files count: sparse and W=1 warnings in upstream headers are
	# not ours to fix here.
	#
	# Debian bookworm's sparse (0.6.4) does not know __typeof_unqual__,
	# which 7.3's headers use: the kernel's Makefile then turns C=2 off
	# with a warning (scripts/checker-valid.sh) and checks nothing.  It
	# gets __typeof__ in its place (the qualifiers that keeps matter to
	# sparse's address spaces in per-CPU accessors, not to our code), and
	# the gate fails if sparse is still refused or checked no object.
	"${KMAKE[@]}" C=2 CHECK="sparse -D__typeof_unqual__=__typeof__" "${objs[@]}" >"$tmp/sparse.log" 2>&1 ||
		echo "make C=2 failed" >>"$tmp/sparse.log"
	if grep -q 'is not available or not up to date' "$tmp/sparse.log"; then
		echo "make C=2 failed: the kernel's Makefile refused sparse ($(sparse --version 2>&1))" >>"$tmp/sparse.log"
	fi
	checked=$(grep -c '^ *CHECK ' "$tmp/sparse.log" || true)
	[ "$checked" -ge "${#objs[@]}" ] ||
		echo "make C=2 failed: sparse checked $checked of ${#objs[@]} objects" >>"$tmp/sparse.log"
	for o in "${objs[@]}"; do rm -f "$O/$o"; done
	"${KMAKE[@]}" W=1 "${objs[@]}" >"$tmp/w1.log" 2>&1 || echo "make W=1 failed" >>"$tmp/w1.log"
	pat=$(printf '%s\n' "${ksrc[@]}" | sed 's/[.]/[.]/g' | paste -sd'|')
	grep -E "($pat):[0-9]+:[0-9]+: (warning|error)|make (C=2|W=1) failed" "$tmp/sparse.log" >"$tmp/sparse.all" || true
	# sparse 0.6.4 cannot evaluate the static_assert() with
	# __builtin_strlen() that 7.3's MODULE_INFO() (MODULE_LICENSE(), ...)
	# begins with: "bad constant expression" on those lines is sparse's,
	# not ours.  Every other finding stays.
	while IFS= read -r line; do
		if [[ $line =~ ^(.*):([0-9]+):[0-9]+:\ error:\ bad\ constant\ expression$ ]] &&
			sed -n "${BASH_REMATCH[2]}p" "${BASH_REMATCH[1]}" | grep -qE '^MODULE_[A-Z_]+\('; then
			continue
		fi
		printf '%s\n' "$line"
	done <"$tmp/sparse.all" >"$tmp/sparse"
	grep -E "($pat):[0-9]+:[0-9]+: (warning|error)|make (C=2|W=1) failed" "$tmp/w1.log" >"$tmp/w1" || true
fi
result "sparse: no warnings on ${#objs[@]} kernel objects" "$tmp/sparse"
result "W=1: no warnings on ${#objs[@]} kernel objects" "$tmp/w1"
ktap_close
