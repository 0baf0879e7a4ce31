#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# ptsim: raw AUX area recording of ptsim_large (exclusive)
#
# ptsim_large is ptsim's engine under a name perf has no module for, so
# perf records its AUX area raw (Documentation/perf-raw-aux.txt): the
# AUXTRACE_INFO record names the PMU, and PERF_RAW_AUX_DIR gets every
# byte of the AUXTRACE records back out.

shelldir=$(dirname "$0")
# shellcheck source=lib/ptsim.sh
. "$shelldir/lib/ptsim.sh"

ptsim_need ptsim_large
ptsim_tmpdir

data=$tmpdir/perf.data
# config1 is ptsim's rate=8,period=1000 (us): about 128 KB of trace.
ptsim_record "$tmpdir/record.log" -o "$data" \
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
exit 0
