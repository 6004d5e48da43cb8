#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Runs xfib's tests: tests/run.sh [-j N] [SUITE|SUITE/TEST]... (default:
# all suites: unit prog fuzz net doc; a test by name, e.g. net/test_ecmp).
# A test is an executable that exits 0 (pass), 77 (skip) or else (fail).
# Prints one line per test as it finishes (a failed test's log tail with
# it), the skipped and failed tests, and a closing line "N passed, N
# failed, N skipped".
#
# -j N (or XFIB_TEST_JOBS) runs N tests at a time; the default is
# twice the CPUs (see default_jobs). Each test already runs in namespaces
# and pin directories of its own, so tests run side by side by design; one
# that only passes alone is a bug. Two marks, on a line of their own among
# a test's first 40 lines, change how it is scheduled:
#   "# run.sh: alone"  the test measures the machine itself (a latency
#                      bound under its own load, or a load that would
#                      starve the others' bounds): it runs before the
#                      others, with no other test of this runner beside
#                      it but one at a time of the unit, fuzz and doc
#                      suites, which time nothing and touch no network;
#   "# run.sh: long"   the test takes minutes: it starts before the
#                      unmarked ones, so that it does not end the run.
#
# Each test gets XFIB_TEST_TIMEOUT seconds (default 600); one that runs
# longer is stopped with SIGTERM (its traps clean up), then SIGKILL 30 s
# later, and counts as failed with its log shown. Stopping the runner
# (SIGINT, SIGTERM) stops the running tests the same way.
# XFIB_SAN=1 (binaries built with SAN=1): sanitizer reports of every
# process a test runs are written to files, and a test with any report
# fails, whatever its exit status. XFIB_SAN_TESTS="NAME..." with
# XFIB_SAN_BUILD=DIR (a SAN=1 build): those tests alone run so, with the
# binaries of DIR (make test: the mirror tests), the others as usual.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
export BUILD=$build

usage() {
	echo "usage: tests/run.sh [-j N] [SUITE|SUITE/TEST]..." >&2
	exit 2
}

# default_jobs: twice the CPUs. A namespace test spends most of its time
# waiting (for the kernel, the daemon's batching and selection timers,
# pings, address detection), not computing, so two per CPU keeps the CPUs
# busy without a test's own work queueing behind others' for long; tests
# that measure rates or latency are marked to run alone.
default_jobs() {
	local n
	n=$(nproc 2>/dev/null) || n=1
	echo $((2 * n))
}

jobs_max=${XFIB_TEST_JOBS:-}
args=()
while [ $# -gt 0 ]; do
	case $1 in
	-j) [ $# -ge 2 ] || usage; jobs_max=$2; shift 2 ;;
	-j*) jobs_max=${1#-j}; shift ;;
	--) shift; args+=("$@"); break ;;
	-*) usage ;;
	*) args+=("$1"); shift ;;
	esac
done
[ -n "$jobs_max" ] || jobs_max=$(default_jobs)
[[ $jobs_max =~ ^[1-9][0-9]*$ ]] || usage
[ ${#args[@]} -eq 0 ] && args=(unit prog fuzz net doc)

limit=${XFIB_TEST_TIMEOUT:-600}
san=${XFIB_SAN:-0}
san_tests=" ${XFIB_SAN_TESTS:-} "
san_build=${XFIB_SAN_BUILD:-}
[ -z "${XFIB_SAN_TESTS:-}" ] || [ -x "$san_build/xfibd" ] || {
	echo "run.sh: XFIB_SAN_TESTS needs XFIB_SAN_BUILD, a SAN=1 build (no xfibd in '$san_build')" >&2
	exit 2
}
pass=0 fail=0 skip=0 failed=() skipped=()
logdir=$build/test-logs
mkdir -p "$logdir"

# ---- one test -------------------------------------------------------------

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

# sanitized NAME: the test runs with sanitized binaries.
sanitized() {
	[ "$san" = 1 ] || [[ $san_tests == *" $1 "* ]]
}

# run_one NAME PATH: runs one test (in a subshell of its own), its output
# to SLUG.log (SLUG: the name with _ for /); leaves "RC SECONDS
# SANITIZED" in SLUG.status.
run_one() {
	local slug=${1//\//_} path=$2 start rc secs sanrep=0 f tsan=0
	local log="$logdir/$slug.log"
	rm -f "$logdir/$slug.status"
	if sanitized "$1"; then
		tsan=1
		san_setup "$slug"
		export XFIB_SAN=1
		[ -z "$san_build" ] || export BUILD=$san_build
	fi
	start=$(date +%s)
	timeout -k 30 "$limit" "$path" </dev/null >"$log" 2>&1 &
	timeout_pid=$!
	wait "$timeout_pid"
	rc=$?
	# A SIGTERM to this subshell (run_one_bg) interrupts the wait: wait on
	# for the test's own end (a zombie still answers kill -0).
	while kill -0 "$timeout_pid" 2>/dev/null; do
		wait "$timeout_pid"
		rc=$?
	done
	secs=$(($(date +%s) - start))
	# timeout(1) exits 124 when the limit hit, 137 when it had to kill.
	if [ "$rc" -eq 124 ] || { [ "$rc" -eq 137 ] && [ "$secs" -ge "$limit" ]; }; then
		echo "run.sh: stopped after the ${limit} s limit" >>"$log"
	fi
	if [ "$tsan" = 1 ] && [ -n "$(find "$san_dir" -type f)" ]; then
		for f in $(find "$san_dir" -type f | sort); do
			echo "run.sh: sanitizer report $f:"
			head -n 60 "$f"
		done >>"$log"
		rc=99 sanrep=1
	fi
	echo "$rc $secs $sanrep" >"$logdir/$slug.status"
}

# The test's subshell: a SIGTERM from the runner goes on to timeout(1),
# which passes it to the test (whose traps clean up), and the subshell
# still records how the test ended.
run_one_bg() {
	timeout_pid=""
	trap '[ -z "$timeout_pid" ] || kill -TERM "$timeout_pid" 2>/dev/null' TERM
	run_one "$@"
}

# report NAME SLUG: the line of a finished test, and the counts.
report() {
	local name=$1 slug=$2 log="$logdir/$2.log" rc=1 secs=0 sanrep=0
	[ -r "$logdir/$slug.status" ] && read -r rc secs sanrep <"$logdir/$slug.status"
	case $rc in
	0) pass=$((pass + 1)); printf 'PASS  %-40s %3ss%s\n' "$name" "$secs" \
		"$(sanitized "$name" && echo "  sanitized")" ;;
	77) skip=$((skip + 1)); skipped+=("$name")
	    printf 'SKIP  %-40s %3ss  %s\n' "$name" "$secs" "$(tail -n1 "$log")" ;;
	*) fail=$((fail + 1)); failed+=("$name")
	   printf 'FAIL  %-40s %3ss  (exit %d%s)\n' "$name" "$secs" "$rc" \
		"$([ "$sanrep" = 1 ] && echo ", sanitizer reports")"
	   sed 's/^/    | /' "$log" | tail -n 60 ;;
	esac
}

# ---- the list of tests ----------------------------------------------------

names=() paths=()

# add_test SUITE NAME: one test of a suite, by its name without prefix.
add_test() {
	local suite=$1 t=$2 path
	case $suite in
	unit | prog) path="$build/tests/${suite}_$t" ;;
	net | doc | fuzz) path="$top/tests/$suite/$t.sh" ;;
	esac
	if [ -x "$path" ]; then
		names+=("$suite/$t") paths+=("$path")
	else
		fail=$((fail + 1)); failed+=("$suite/$t")
		printf 'FAIL  %-40s       (no such test: %s)\n' "$suite/$t" "$path"
	fi
}

for arg in "${args[@]}"; do
	case $arg in
	unit | prog) for t in "$build"/tests/"$arg"_*; do
			[ -x "$t" ] && add_test "$arg" "${t##*/"$arg"_}"
		done ;;
	net | doc | fuzz) for t in "$top"/tests/"$arg"/test_*.sh; do
			[ -x "$t" ] && add_test "$arg" "$(basename "$t" .sh)"
		done ;;
	unit/* | prog/* | net/* | doc/* | fuzz/*) add_test "${arg%%/*}" "${arg#*/}" ;;
	*) echo "run.sh: unknown suite or test '$arg' (unit, prog, fuzz, net, doc, or e.g. net/test_ecmp)" >&2; exit 2 ;;
	esac
done

# marked PATH MARK: the test carries "# run.sh: MARK" in its first lines.
marked() {
	head -n 40 "$1" 2>/dev/null | grep -q "^# run.sh: $2\$"
}

# The order: the tests that run alone first (then no test ends early to
# make room for them), then the long ones, then the rest, each group in
# the order given.
order=() mark=()
for i in "${!names[@]}"; do
	if marked "${paths[$i]}" alone; then mark[i]=alone
	elif marked "${paths[$i]}" long; then mark[i]=long
	else mark[i]=""
	fi
done
for m in alone long ""; do
	for i in "${!names[@]}"; do
		[ "${mark[i]}" = "$m" ] && order+=("$i")
	done
done

# ---- running them ---------------------------------------------------------

declare -A running=() # pid of a test's subshell -> its index
alone_pid=""

# reap: waits for one test to end and reports it.
reap() {
	local pid="" i
	wait -n -p pid "${!running[@]}"
	# A signal interrupts wait without a pid: the caller waits again.
	[ -n "$pid" ] && [ -n "${running[$pid]+x}" ] || return 0
	i=${running[$pid]}
	unset "running[$pid]"
	[ "$pid" = "$alone_pid" ] && alone_pid=""
	report "${names[$i]}" "${names[$i]//\//_}"
}

# closing: the skipped and failed tests and the closing line.
closing() {
	echo
	[ ${#skipped[@]} -gt 0 ] && echo "skipped: ${skipped[*]}"
	[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
	echo "$pass passed, $fail failed, $skip skipped"
}

# stop_all: the runner was stopped: so are the running tests (each
# counts as failed), and the tests not started are left out.
stop_all() {
	trap '' INT TERM
	echo "run.sh: stopping ${#running[@]} running test(s)" >&2
	[ ${#running[@]} -eq 0 ] || kill -TERM "${!running[@]}" 2>/dev/null
	while [ ${#running[@]} -gt 0 ]; do reap; done
	closing
	exit 130
}
trap stop_all INT TERM

declare -A started=() # index of a test started

# start I: starts test I in the background.
start() {
	run_one_bg "${names[$1]}" "${paths[$1]}" &
	running[$!]=$1
	started[$1]=1
	[ "${mark[$1]}" != alone ] || alone_pid=$!
}

# next_quiet: sets NEXT to the first test not yet started that times
# nothing and touches no network (the unit, fuzz and doc suites); returns
# 1 if there is none. One such test may run beside a test that runs
# alone, on the CPU that one leaves: it cannot stretch a bound of its own,
# and takes one CPU at most.
next_quiet() {
	local i
	for i in "${order[@]}"; do
		[ -z "${started[$i]+x}" ] || continue
		case ${names[$i]} in unit/* | fuzz/* | doc/*) NEXT=$i; return 0 ;; esac
	done
	return 1
}

for i in "${order[@]}"; do
	[ -z "${started[$i]+x}" ] || continue
	if [ "${mark[i]}" = alone ]; then
		while [ ${#running[@]} -gt 0 ]; do reap; done
		start "$i"
		while [ -n "$alone_pid" ]; do
			if [ ${#running[@]} -lt 2 ] && [ "$jobs_max" -gt 1 ] && next_quiet; then
				start "$NEXT"
			else
				reap
			fi
		done
	else
		while [ ${#running[@]} -ge "$jobs_max" ]; do reap; done
		start "$i"
	fi
done
while [ ${#running[@]} -gt 0 ]; do reap; done

closing
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
