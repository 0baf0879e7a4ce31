#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make check's gate for our .kunitconfig files: that
#
#   ./tools/testing/kunit/kunit.py run --kunitconfig=DIR --arch=x86_64
#
# would run, in the assembled tree, the suites make check already runs,
# without building a third kernel for it.  For every .kunitconfig of ours
# (kernel/events: the AUX area's suite, ours only; drivers/hwtracing/ptsim:
# the packet encoder's, both kernels) and every kernel of VARIANTS whose
# tree has it, three results:
#
#   1. kunit.py itself accepts it: "kunit.py config --arch=x86_64" (no
#      build) writes a .config in which every option the file asks for
#      survived olddefconfig (kunit.py checks that and fails otherwise);
#   2. the kernel make check booted has every one of those options, so
#      the suites kunit.py would build are built in there;
#   3. every KUnit suite defined in our sources of the directory (".name"
#      of a struct kunit_suite in this repository's files there, not in
#      upstream's) is in the manifest for that kernel (tests/suites.py),
#      so make check fails if it does not run.
#
# Usage: kunit-check.sh TAPFILE
set -uo pipefail
. "$(dirname "$0")/lib.sh"

tap=${1:?usage: kunit-check.sh TAPFILE}
manifest=$(python3 "$TOP/tests/suites.py" manifest) || die "tests/suites.py manifest failed"
VARIANTS=${VARIANTS:-$(variants check)}
done_cfg=()
ktap_open "$tap"
res() {	# res ok|not-ok DESCRIPTION [DETAIL...]
	local st=$1 d=$2 l
	shift 2
	ktap_result "$([ "$st" = ok ]; echo $?)" "$d"
	for l in "$@"; do ktap_note "$l"; done
}

for rel in kernel/events drivers/hwtracing/ptsim; do
	for v in $VARIANTS; do
		# A kernel not built here (Debian's stock one) has no KUnit
		# suite of ours.
		variant_env "$v"
		[ -n "$K_TREE" ] || continue
		tree=$K_SRC
		kc=$tree/$rel/.kunitconfig
		[ -f "$kc" ] || continue
		cfg=$BUILD/obj/$v/.config
		opts=$(grep -E '^CONFIG_[A-Za-z0-9_]+=' "$kc")

		# 1. kunit.py's own check, on a throwaway build directory; once
		# per tree (qemu and debug share the ours tree; upstream on
		# 6.12 and on 7.3 have one each).
		t=${K_SRC#"$BUILD"/}
		t=${t//\//_}
		if [[ " ${done_cfg[*]:-} " != *" $t:$rel "* ]]; then
			done_cfg+=("$t:$rel")
			kd=$BUILD/kunit-check/$t/${rel//\//_}
			rm -rf "$kd"
			mkdir -p "$kd"
			desc="$t tree: kunit.py config --kunitconfig=$rel --arch=x86_64"
			if out=$(cd "$tree" && python3 tools/testing/kunit/kunit.py config \
				--kunitconfig="$rel" --arch=x86_64 --build_dir="$kd" 2>&1); then
				res ok "$desc"
			else
				mapfile -t detail < <(printf '%s\n' "$out" | tail -n 15)
				res not-ok "$desc" "${detail[@]}"
			fi
		fi

		# 2. The booted kernel has every option.
		missing=()
		while IFS= read -r o; do
			grep -qxF "$o" "$cfg" 2>/dev/null || missing+=("$o")
		done <<<"$opts"
		if [ ${#missing[@]} -eq 0 ]; then
			res ok "$v: the booted kernel has every option of $rel/.kunitconfig"
		else
			res not-ok "$v: the booted kernel lacks options of $rel/.kunitconfig" "${missing[@]}"
		fi

		# 3. Every suite of the directory is one make check requires.
		mapfile -t suites < <(awk '
			/struct kunit_suite [A-Za-z0-9_]+ = \{/ { in_suite = 1 }
			in_suite && match($0, /\.name *= *"[^"]*"/) {
				s = substr($0, RSTART, RLENGTH)
				sub(/^[^"]*"/, "", s)
				sub(/"$/, "", s)
				print s
				in_suite = 0
			}' "$TOP/$rel"/*.c | sort -u)
		if [ ${#suites[@]} -eq 0 ]; then
			res not-ok "$v: no KUnit suite found in $rel"
			continue
		fi
		for s in "${suites[@]}"; do
			if awk -v v="$v" -v s="kunit/$s" '
				/^#/ || NF < 3 { next }
				($1 == "*" || index("," $1 ",", "," v ",")) && $2 == s { f = 1 }
				END { exit !f }' <<<"$manifest"; then
				res ok "$v: suite $s of $rel is required by the manifest (tests/suites.py)"
			else
				res not-ok "$v: suite $s of $rel is not in the manifest (tests/suites.py) for $v"
			fi
		done
	done
done

ktap_close || exit 1
[ "$KTAP_TESTNO" -gt 1 ] || exit 1
exit 0
