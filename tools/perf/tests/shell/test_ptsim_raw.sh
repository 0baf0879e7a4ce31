#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# ptsim: raw AUX area recording of ptsim_large (exclusive)
#
# ptsim_large is ptsim's engine under a name perf has no module for, so
# perf records its AUX area raw when asked to, with --aux-raw
# (Documentation/perf-raw-aux.txt): the AUXTRACE_INFO record names the
# PMU, and PERF_RAW_AUX_DIR gets every byte of the AUXTRACE records back
# out.  Without --aux-raw perf records it as it always did, without an
# AUX area; --aux-raw with no event that has one is an error.

shelldir=$(dirname "$0")
# shellcheck source=lib/ptsim.sh
. "$shelldir/lib/ptsim.sh"

ptsim_need ptsim_large
ptsim_tmpdir

data=$tmpdir/perf.data
# config1 is ptsim's rate=8,period=1000 (us): about 128 KB of trace.
ptsim_record "$tmpdir/record.log" -o "$data" --aux-raw \
	-e ptsim_large/pt,tsc,branch,config1=0xfa0002000/ -- perf test -w noploop 1
ptsim_dumped "$data"
dump=$tmpdir/dump.txt
# PERF_AUXTRACE_RAW
if ! grep -q 'type: 65536$' "$dump"; then
	ptsim_fail "perf report -D: no raw AUXTRACE_INFO" "$dump"
fi
if ! grep -q '^  PMU Name *ptsim_large$' "$dump"; then
	ptsim_fail "perf report -D: the AUXTRACE_INFO does not name ptsim_large" "$dump"
fi

want=0
sed -n 's/.*PERF_RECORD_AUXTRACE size: \(0x[0-9a-f]*\) .*/\1/p' "$dump" >"$tmpdir/sizes"
while read -r size; do
	want=$((want + size))
done <"$tmpdir/sizes"
mkdir "$tmpdir/raw"
if ! PERF_RAW_AUX_DIR=$tmpdir/raw perf report -D -i "$data" >/dev/null 2>"$tmpdir/raw.log"; then
	ptsim_fail "PERF_RAW_AUX_DIR=... perf report -D" "$tmpdir/raw.log"
fi
got=0
for f in "$tmpdir"/raw/*.bin; do
	[ -f "$f" ] && got=$((got + $(wc -c <"$f")))
done
if [ "$got" -ne "$want" ] || [ "$got" -eq 0 ]; then
	ptsim_fail "PERF_RAW_AUX_DIR: $got bytes written out, the AUXTRACE records hold $want"
fi
echo "PERF_RAW_AUX_DIR: $got bytes, as in the AUXTRACE records"

# Not asked: no AUX area, no AUXTRACE_INFO.
ptsim_record "$tmpdir/plain.log" -o "$tmpdir/plain.data" \
	-e ptsim_large/pt,tsc,branch/ -- true
if ! perf report -D -i "$tmpdir/plain.data" >"$dump" 2>&1; then
	ptsim_fail "perf report -D -i $tmpdir/plain.data" "$dump"
fi
if grep -q 'PERF_RECORD_AUXTRACE' "$dump"; then
	ptsim_fail "perf record without --aux-raw recorded ptsim_large's AUX area" "$dump"
fi
echo "without --aux-raw: no AUX area recorded"

# Asked, with no event that has an AUX area: refused.
log=$tmpdir/none.log
if perf record -B -N -o "$tmpdir/none.data" --aux-raw -e cpu-clock -- true >"$log" 2>&1; then
	ptsim_fail "perf record --aux-raw -e cpu-clock succeeded" "$log"
fi
if ! grep -q "aux-raw: no event's PMU can fill an AUX area" "$log"; then
	ptsim_fail "perf record --aux-raw -e cpu-clock: not refused as such" "$log"
fi
echo "--aux-raw without an AUX area event: refused"
exit 0
