#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# ptsim: AUX area flush at a --switch-output rotation (exclusive)
#
# A PMU that holds trace back (ptsim's FIFO here, as CoreSight's ETF)
# still holds part of what was traced before a --switch-output rotation
# when perf closes the file; perf flushes the AUX events first
# (PERF_EVENT_IOC_FLUSH), so that the file holds all of it.
#
# ptsim on CPU 0 queues 2 KiB a tick (4 ms) into a 4 MiB FIFO drained at
# 1 KiB a tick, so the FIFO holds back 1 KiB more every tick, whatever
# runs on the CPU.  After 0.8 s the workload has perf record switch
# files, and ends soon after: about 450 KB of trace, of which about 200 KB
# held back at the rotation, which perf report -D reads in seconds under
# emulation too.  config1 is ptsim's rate=128,period=4000,fifo=22,drain=1
# (perf takes a term "period" for the sample period).  Then:
#
#  - the first file's last PERF_RECORD_AUX records, those of the last
#    50 ms, hold the FIFO written out at the rotation (at least 64 KiB);
#  - no data PTW packet in a later file has a time (that of the TSC in
#    the PSB+ before it, by the file's TIME_CONV) earlier than the first
#    file's last PERF_RECORD_AUX: nothing produced before the rotation
#    was held back (16 KiB allowed);
#  - ptsim's sequence numbers in the PTWs go on from file to file:
#    each CPU's first in a file follows its last in the file before;
#  - and the first file and the later ones hold PTWs at all: perf
#    report -D shows the packets only of what perf's intel-pt module
#    recorded, and without them the two checks above see nothing.
#
# The packets are read from perf report -D, which needs no decoder.
# Every kernel with ptsim has PERF_EVENT_IOC_FLUSH.

shelldir=$(dirname "$0")
# shellcheck source=lib/ptsim.sh
. "$shelldir/lib/ptsim.sh"

ptsim_need ptsim
ptsim_tmpdir

# shellcheck disable=SC2016
ptsim_record "$tmpdir/record.log" -o "$tmpdir/perf.data" -C 0 \
	--switch-output=signal -e ptsim/config1=0xdbe80020000/ -- \
	sh -c 'sleep 0.8; kill -USR2 $PPID; sleep 0.1'
set -- "$tmpdir"/perf.data.*
if [ $# -lt 2 ] || [ ! -f "$1" ]; then
	ptsim_fail "perf record --switch-output: $# files, want 2" "$tmpdir/record.log"
fi
first=$1
shift

# The rotation (ns), what the first file's last 50 ms published, and
# what perf report -D says of every file (the lines these need).
for f in "$first" "$@"; do
	if ! perf report -D -i "$f" >"$tmpdir/dump.txt" 2>&1; then
		ptsim_fail "perf report -D -i $f" "$tmpdir/dump.txt"
	fi
	# (older perf spells the TIME_CONV multiplier "Muliplier")
	grep -E -e 'PERF_RECORD_AUX(TRACE size:| offset:)' \
		-e ' TSC 0x| PTWRITE 0x[0-9a-f]+ IP:0$' \
		-e '\.\.\. Time (Shift|Mult?iplier|Zero) ' "$tmpdir/dump.txt" >"$f.lines"
done
awk '
function hex(s,	i, v) {
	v = 0
	for (i = 3; i <= length(s); i++)
		v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	return v
}
$5 == "PERF_RECORD_AUX" && $6 == "offset:" {
	n++; t[n] = $2; sz[n] = hex($9)
	if ($2 > rot)
		rot = $2
}
END {
	for (i = 1; i <= n; i++)
		if (t[i] >= rot - 50000000)
			flushed += sz[i]
	printf "%.0f %.0f\n", rot, flushed
}' "$first.lines" >"$tmpdir/rotation" || ptsim_fail "awk on perf report -D of $first"
read -r rot flushed <"$tmpdir/rotation"
echo "rotation at $rot ns; the first file's last 50 ms published $flushed bytes"
if [ "$rot" = 0 ]; then
	ptsim_fail "no PERF_RECORD_AUX in $first"
fi
if [ "$flushed" -lt 65536 ]; then
	ptsim_fail "the FIFO held back only $flushed bytes at the rotation: the test proves nothing"
fi

# Per file: the data PTWs of a later file timed before the rotation, and
# the breaks in the sequence where the file begins (the last number of
# each CPU's buffer goes from file to file in $tmpdir/last).
: >"$tmpdir/last"
held=0 breaks=0 ptws=0 later_ptws=0
for f in "$first" "$@"; do
	awk -v rot="$rot" -v later="$([ "$f" = "$first" ] || echo 1)" '
	function hex(s,	i, v) {
		v = 0
		for (i = 3; i <= length(s); i++)
			v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return v
	}
	FILENAME != ARGV[ARGC - 1] { last[$1] = $2; next }
	/\.\.\. Time Shift / { shift = $4 }
	/\.\.\. Time Mult?iplier / { mult = $4 }
	/\.\.\. Time Zero / { zero = $4 }
	/PERF_RECORD_AUXTRACE size:/ { cpu = $NF; tsc = -1 }
	/ TSC 0x/ { tsc = hex($NF) }
	/ PTWRITE 0x[0-9a-f]+ IP:0$/ {
		v = hex($(NF - 1))
		if (!(cpu in seen) && cpu in last && v != last[cpu] + 1)
			breaks++
		seen[cpu] = 1
		last[cpu] = v
		ptws++
		if (later && tsc >= 0) {
			# perf time = Time Zero + TSC * Time Multiplier >> Time
			# Shift, modulo 2^64 (busybox awk has no ^)
			if (!scale)
				for (scale = 1; shift-- > 0;)
					scale *= 2
			ns = zero + tsc * mult / scale
			if (ns >= 18446744073709551616)
				ns -= 18446744073709551616
			if (ns < rot)
				held += 16
		}
	}
	END {
		printf "" > "'"$tmpdir/last.new"'"
		for (c in last)
			printf "%s %.0f\n", c, last[c] > "'"$tmpdir/last.new"'"
		printf "%.0f %d %d\n", held, breaks, ptws
	}' "$tmpdir/last" "$f.lines" >"$tmpdir/counts" ||
		ptsim_fail "awk on perf report -D of $f"
	mv "$tmpdir/last.new" "$tmpdir/last"
	read -r h b p <"$tmpdir/counts"
	held=$((held + h)) breaks=$((breaks + b)) ptws=$((ptws + p))
	[ "$f" = "$first" ] || later_ptws=$((later_ptws + p))
done
echo "held back at the rotation: $held bytes; breaks in the PTW sequence between files: $breaks"
echo "data PTWs: $((ptws - later_ptws)) in the first file, $later_ptws in later ones"
if [ $((ptws - later_ptws)) -eq 0 ] || [ "$later_ptws" -eq 0 ]; then
	ptsim_fail "perf report -D: no PTW packets in the first file or in later ones"
fi
if [ "$held" -gt 16384 ]; then
	ptsim_fail "$held bytes traced before the rotation are in later files: no flush"
fi
if [ "$breaks" -ne 0 ]; then
	ptsim_fail "$breaks breaks in ptsim's PTW sequence between the files"
fi
exit 0
