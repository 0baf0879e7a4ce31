#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Run one of make check's gates so that its TAP file can only be this
# run's, and a gate that dies says so:
#
#   - TAPFILE is deleted first: a gate killed, or dying before it writes
#     its results, cannot leave the previous run's file to be read as
#     this run's;
#   - if the gate exits non-zero (an error, a signal) and its TAP reports
#     no failure, TAPFILE is rewritten to one "not ok" naming the gate and
#     its exit status, what it had written kept as "# " lines.
#
# Usage: run-gate.sh [-o] NAME TAPFILE CMD...
#   -o: CMD's stdout and stderr are the TAP (otherwise CMD writes TAPFILE
#   itself).  Exits with CMD's status.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

out=0
if [ "${1:-}" = -o ]; then
	out=1
	shift
fi
[ $# -ge 3 ] || { echo "usage: run-gate.sh [-o] NAME TAPFILE CMD..." >&2; exit 2; }
name=$1 tap=$2
shift 2
rm -f "$tap"
mkdir -p "$(dirname "$tap")"
rc=0
if [ $out = 1 ]; then
	"$@" >"$tap" 2>&1 || rc=$?
else
	"$@" || rc=$?
fi
if [ $rc != 0 ] && ! grep -q '^not ok \|^Bail out!' "$tap" 2>/dev/null; then
	old=$(mktemp)
	cat "$tap" >"$old" 2>/dev/null
	ktap_open "$tap"
	ktap_result 1 "$name: exited with status $rc without reporting a failure"
	sed 's/^/# /' "$old" >>"$KTAP_BODY"
	ktap_close
	rm -f "$old"
fi
exit $rc
