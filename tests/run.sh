#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Runs xfib's tests: tests/run.sh [SUITE|SUITE/TEST]... (default: all
# suites: unit prog fuzz net doc; a test by name, e.g. net/test_ecmp).
# A test is an executable that exits 0 (pass), 77 (skip) or else (fail).
# Prints one line per test and a closing "N passed, N failed, N skipped".
# Each test gets XFIB_TEST_TIMEOUT seconds (default 600); one that runs
# longer is stopped with SIGTERM (its traps clean up), then SIGKILL 30 s
# later, and counts as failed with its log shown.
# XFIB_SAN=1 (binaries built with SAN=1): sanitizer reports of every
# process a test runs are written to files, and a test with any report
# fails, whatever its exit status.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
export BUILD=$build
args=("$@")
[ ${#args[@]} -eq 0 ] && args=(unit prog fuzz net doc)

limit=${XFIB_TEST_TIMEOUT:-600}
san=${XFIB_SAN:-0}
pass=0 fail=0 skip=0 failed=()
logdir=$build/test-logs
mkdir -p "$logdir"

# san_setup NAME: a fresh report directory for one test, writable by the
# unprivileged users some tests run xfibctl as.
san_setup() {
	san_dir="$logdir/san-$1"
	rm -rf "$san_dir"
	mkdir -p "$san_dir"
	chmod 1777 "$san_dir"
	export ASAN_OPTIONS="log_path=$san_dir/asan:detect_leaks=1"
	export UBSAN_OPTIONS="log_path=$san_dir/ubsan:print_stacktrace=1:halt_on_error=1"
}

run_one() {
	local name=$1
	shift
	local log="$logdir/${name//\//_}.log" start rc reports=""
	[ "$san" = 1 ] && san_setup "${name//\//_}"
	start=$(date +%s)
	timeout -k 30 "$limit" "$@" >"$log" 2>&1
	rc=$?
	local secs=$(($(date +%s) - start))
	# timeout(1) exits 124 when the limit hit, 137 when it had to kill.
	if [ "$rc" -eq 124 ] || { [ "$rc" -eq 137 ] && [ "$secs" -ge "$limit" ]; }; then
		echo "run.sh: stopped after the ${limit} s limit" >>"$log"
	fi
	if [ "$san" = 1 ]; then
		reports=$(find "$san_dir" -type f | sort)
		if [ -n "$reports" ]; then
			for f in $reports; do
				echo "run.sh: sanitizer report $f:"
				head -n 60 "$f"
			done >>"$log"
			rc=99
		fi
	fi
	case $rc in
	0) pass=$((pass + 1)); printf 'PASS  %-40s %3ss\n' "$name" "$secs" ;;
	77) skip=$((skip + 1)); printf 'SKIP  %-40s %3ss  %s\n' "$name" "$secs" "$(tail -n1 "$log")" ;;
	*) fail=$((fail + 1)); failed+=("$name")
	   printf 'FAIL  %-40s %3ss  (exit %d%s)\n' "$name" "$secs" "$rc" \
		"${reports:+, sanitizer reports}"
	   sed 's/^/    | /' "$log" | tail -n 60 ;;
	esac
}

# run_test SUITE NAME: one test of a suite, by its name without prefix.
run_test() {
	local suite=$1 t=$2 path
	case $suite in
	unit | prog) path="$build/tests/${suite}_$t" ;;
	net | doc | fuzz) path="$top/tests/$suite/$t.sh" ;;
	esac
	if [ -x "$path" ]; then
		run_one "$suite/$t" "$path"
	else
		fail=$((fail + 1)); failed+=("$suite/$t")
		printf 'FAIL  %-40s       (no such test: %s)\n' "$suite/$t" "$path"
	fi
}

for arg in "${args[@]}"; do
	case $arg in
	unit | prog) for t in "$build"/tests/"$arg"_*; do
			[ -x "$t" ] && run_test "$arg" "${t##*/"$arg"_}"
		done ;;
	net | doc | fuzz) for t in "$top"/tests/"$arg"/test_*.sh; do
			[ -x "$t" ] && run_test "$arg" "$(basename "$t" .sh)"
		done ;;
	unit/* | prog/* | net/* | doc/* | fuzz/*) run_test "${arg%%/*}" "${arg#*/}" ;;
	*) echo "run.sh: unknown suite or test '$arg' (unit, prog, fuzz, net, doc, or e.g. net/test_ecmp)" >&2; exit 2 ;;
	esac
done

echo
[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
