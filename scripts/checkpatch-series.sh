#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# "make checkpatch": scripts/checkpatch.pl --strict on every patch that
# make series exported to $OUT/series/, as a TAP stream (one case per
# patch, each finding as a "# " diagnostic), then one summary line.
#
# A patch passes with zero ERRORs and zero WARNINGs.  A CHECK is allowed
# only where the commit message justifies it by naming its type (checkpatch
# --show-types, e.g. "checkpatch's MACRO_ARG_REUSE check: ..."), so that
# every one left in is visible to the reviewer with its reason; so is the
# WARNING FILE_PATH_CHANGES, which checkpatch gives every patch that adds
# a file without touching MAINTAINERS, even where an entry's pattern
# (kernel/events/*) covers the file.  A TYPO_SPELLING WARNING on a
# Fixes: line is noted and not counted: the tag quotes upstream's subject
# as it is.
#
# checkpatch runs in $TREE, the assembled tree, so that it sees the
# series' own MAINTAINERS entry and the base's spelling and API lists
# (7.3's; 6.12's for make fixes BASE=6.12).
#
# Exit status: 0 if every patch passes, 1 otherwise.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

SRC=${1:-$OUT/series}
mapfile -t patches < <(find "$SRC" -maxdepth 1 -name '[0-9][0-9][0-9][0-9]-*.patch' \
	! -name '0000-cover-letter.patch' | sort)
[ ${#patches[@]} -gt 0 ] || die "no patches in $SRC; run make series"
[ -x "$TREE/scripts/checkpatch.pl" ] || die "no $TREE/scripts/checkpatch.pl; run make tree"

# checkpatch validates SPDX tags with scripts/spdxcheck.py, which needs the
# ply and git Python modules; Debian ships them for /usr/bin/python3 only,
# so that python3 must come first in PATH (pyenv shims may not).  Without
# them the SPDX check silently does not happen, so insist.
PKGS=(python3-ply python3-git)
export PATH=/usr/bin:$PATH
if ! python3 -c 'import ply, git' 2>/dev/null; then
	SUDO=
	[ "$(id -u)" -eq 0 ] || SUDO=sudo
	stage "installing ${PKGS[*]} for checkpatch's SPDX check"
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
		"${PKGS[@]}" >/dev/null
	python3 -c 'import ply, git' || die "python3 cannot import ply and git after installing ${PKGS[*]}"
fi

ktap_open -
nerr=0 nwarn=0 nchk=0 njust=0
for p in "${patches[@]}"; do
	# checkpatch exits non-zero on any finding; its output is the verdict.
	# UNKNOWN_COMMIT_ID: the base is Debian's source tarball, with no
	# upstream history, so checkpatch can resolve no commit id a Fixes:
	# tag names; the form of the reference (GIT_COMMIT_ID) is still
	# checked, and each id was looked up upstream when it was written.
	out=$(cd "$TREE" && ./scripts/checkpatch.pl --strict --show-types --terse --no-summary \
		--ignore UNKNOWN_COMMIT_ID "$p" 2>&1) || true
	# The commit message: from the first blank line (end of the mail
	# headers) to the "---" that starts the diffstat.
	log=$(sed -n '/^$/,/^---$/p' "$p")
	e=0 w=0 u=0 bad=()
	# justified TYPE: $line is allowed if the message names TYPE.
	justified() {
		nchk=$((nchk + 1))
		if grep -qw -- "$1" <<<"$log"; then
			njust=$((njust + 1))
			bad+=("$line (justified in the commit message)")
		else
			bad+=("$line (not justified: name $1 in the commit message)")
			u=$((u + 1))
		fi
	}
	while IFS= read -r line; do
		[ -n "$line" ] || continue
		case $line in
		*': ERROR:'*) e=$((e + 1)); bad+=("$line") ;;
		# "does MAINTAINERS need updating?", asked of every patch that
		# adds a file without touching MAINTAINERS, whether an entry
		# covers the file or not: allowed as a CHECK is, where the
		# message says which entry does.
		*': WARNING:FILE_PATH_CHANGES:'*) justified FILE_PATH_CHANGES ;;
		# A spelling warning on a Fixes: line is upstream's subject,
		# which the tag must quote as it is ("useable" in
		# da916e96e2de's): noted, not counted.
		*': WARNING:TYPO_SPELLING:'*)
			n=${line#"$p":}
			n=${n%%:*}
			if sed -n "${n}p" "$p" | grep -q '^Fixes: [0-9a-f]\{12,\} ("'; then
				bad+=("$line (in the quoted subject of a Fixes: tag)")
			else
				w=$((w + 1)); bad+=("$line")
			fi ;;
		*': WARNING:'*) w=$((w + 1)); bad+=("$line") ;;
		*': CHECK:'*)
			type=${line#*: CHECK:}
			justified "${type%%:*}" ;;
		*)
			# Anything else is checkpatch itself going wrong (a
			# missing helper, a crash): not a clean result.
			e=$((e + 1)); bad+=("$line") ;;
		esac
	done <<<"$out"
	nerr=$((nerr + e)) nwarn=$((nwarn + w))
	ktap_result $((e + w + u)) "${p##*/}"
	for line in "${bad[@]}"; do ktap_note "${line#"$p":}"; done
done
rc=0
ktap_close || rc=1
echo "checkpatch: ${#patches[@]} patches, $KTAP_CNT_FAIL failing: $nerr errors, $nwarn warnings," \
	"$nchk checks ($njust justified)" >&2
exit $rc
