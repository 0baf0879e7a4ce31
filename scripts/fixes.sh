#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# "make fixes": the fixes to upstream code that stand on their own (the
# commits of patches/series.txt with a "fix:" line), exported as a small
# series of their own with a cover letter, and checked as series-check
# checks the main series:
#
#   1. export  make-series.sh --fixes: the whole series is built and
#              checked as by make series, then its first commits, the
#              fixes, go to $OUT/fixes/ with the series' fixes-cover:
#              letter;
#   2. style   checkpatch.pl --strict on every patch (checkpatch-series.sh,
#              TAP in $OUT/fixes-checkpatch.tap);
#   3. apply   git am on a fresh extract of the base, every commit's tree
#   + build    that of branch "fixes", and the kernel built with
#              configs/qemu.config less the options only the series
#              defines (series-check.sh --fixes, in $BUILD/fixes-check).
#
# On another base (make fixes BASE=6.12, the stable backports): the fixes
# of that base (their "base 6.12:" blocks, the dropped ones left out)
# into $OUT/fixes-6.12/, each mail addressed by that base's
# get_maintainer.pl (as on the default base), checkpatch.pl of that
# base, and git am on a fresh extract of it ($BUILD/fixes-6.12-check).
#
# Every step runs, then one line sums them up; any failure fails it.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

"$TOP/scripts/make-series.sh" --fixes
fx=$(fixes_dir)
n=$(find "$OUT/$fx" -maxdepth 1 -name '[0-9][0-9][0-9][0-9]-*.patch' ! -name '0000-cover-letter.patch' | wc -l)

stage "$fx: checkpatch --strict on $n patches"
cp_res=ok
if ! "$TOP/scripts/checkpatch-series.sh" "$OUT/$fx" >"$OUT/$fx-checkpatch.tap"; then
	cp_res=FAIL
	grep -v '^ok ' "$OUT/$fx-checkpatch.tap" >&2 || true
fi

am_res=ok
"$TOP/scripts/series-check.sh" --fixes || am_res=FAIL

line="$fx: $n patches in ${OUT#"$TOP"/}/$fx/; checkpatch $cp_res; git am + kernel build $am_res"
if [ $cp_res = ok ] && [ $am_res = ok ]; then
	info "$line"
else
	die "$line"
fi
