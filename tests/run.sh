#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Runs xfib's tests: tests/run.sh [unit|prog|net|doc]... (default: all).
# A test is an executable that exits 0 (pass), 77 (skip) or else (fail).
# Prints one line per test and a closing "N passed, N failed, N skipped".
# Each test gets XFIB_TEST_TIMEOUT seconds (default 600); one that runs
# longer is stopped with SIGTERM (its traps clean up), then SIGKILL 30 s
# later, and counts as failed with its log shown.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
suites=("$@")
[ ${#suites[@]} -eq 0 ] && suites=(unit prog net doc)

limit=${XFIB_TEST_TIMEOUT:-600}
pass=0 fail=0 skip=0 failed=()
logdir=$build/test-logs
mkdir -p "$logdir"

run_one() {
	local name=$1
	shift
	local log="$logdir/${name//\//_}.log" start rc
	start=$(date +%s)
	timeout -k 30 "$limit" "$@" >"$log" 2>&1
	rc=$?
	local secs=$(($(date +%s) - start))
	# timeout(1) exits 124 when the limit hit, 137 when it had to kill.
	if [ "$rc" -eq 124 ] || { [ "$rc" -eq 137 ] && [ "$secs" -ge "$limit" ]; }; then
		echo "run.sh: stopped after the ${limit} s limit" >>"$log"
	fi
	case $rc in
	0) pass=$((pass + 1)); printf 'PASS  %-40s %3ss\n' "$name" "$secs" ;;
	77) skip=$((skip + 1)); printf 'SKIP  %-40s %3ss  %s\n' "$name" "$secs" "$(tail -n1 "$log")" ;;
	*) fail=$((fail + 1)); failed+=("$name")
	   printf 'FAIL  %-40s %3ss  (exit %d)\n' "$name" "$secs" "$rc"
	   sed 's/^/    | /' "$log" | tail -n 40 ;;
	esac
}

for suite in "${suites[@]}"; do
	case $suite in
	unit) for t in "$build"/tests/unit_*; do [ -x "$t" ] && run_one "unit/$(basename "$t")" "$t"; done ;;
	prog) for t in "$build"/tests/prog_*; do [ -x "$t" ] && run_one "prog/$(basename "$t")" "$t"; done ;;
	net) for t in "$top"/tests/net/test_*.sh; do [ -x "$t" ] && run_one "net/$(basename "$t" .sh)" "$t"; done ;;
	doc) for t in "$top"/tests/doc/test_*.sh; do [ -x "$t" ] && run_one "doc/$(basename "$t" .sh)" "$t"; done ;;
	*) echo "run.sh: unknown suite '$suite' (unit, prog, net, doc)" >&2; exit 2 ;;
	esac
done

echo
[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
