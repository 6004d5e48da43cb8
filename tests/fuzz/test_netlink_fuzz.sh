#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The netlink fuzzer (build/fuzz/fuzz_netlink, from tests/fuzz/
# fuzz_netlink.c): first every input of the seed corpus (tests/fuzz/corpus,
# real rtnetlink traffic recorded by make-corpus.sh) as a regression run
# in which no message may be malformed, then FUZZ_SECONDS (default 30) of
# fuzzing from it, into a scratch copy.
# Any crash, sanitizer report, leak or broken RIB invariant fails the test;
# the input that caused it is kept in build/fuzz/ to reproduce with
#   build/fuzz/fuzz_netlink FILE
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$top/build}
fuzzer=$build/fuzz/fuzz_netlink
secs=${FUZZ_SECONDS:-30}
[ -x "$fuzzer" ] || { echo "FAIL: $fuzzer not built (make $fuzzer)"; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/xfib-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp "$top"/tests/fuzz/corpus/*.nl "$work/"
echo "seed corpus: $(find "$work" -type f | wc -l) inputs"
"$fuzzer" -runs=0 -artifact_prefix="$build/fuzz/" "$work" 2>&1 | grep -E "INITED|DONE|ERROR|SUMMARY" || true
# Recorded from the kernel, the seed corpus must also parse without a
# single malformed message (XFIB_FUZZ_STRICT); and a strict run must
# catch one: an IPv4 route whose RTA_DST has 3 bytes.
XFIB_FUZZ_STRICT=1 "$fuzzer" -runs=0 -artifact_prefix="$build/fuzz/" "$work" >/dev/null 2>&1 ||
	{ echo "FAIL: the seed corpus itself fails, or has malformed messages"; exit 1; }
bad=$(mktemp -d "${TMPDIR:-/tmp}/xfib-fuzz-bad.XXXXXX")
trap 'rm -rf "$work" "$bad"' EXIT
printf '\x24\0\0\0\x18\0\0\0\0\0\0\0\0\0\0\0\x02\x18\0\0\xfe\x04\0\x01\0\0\0\0\x07\0\x01\0\xc6\x13\x05\0' \
	>"$bad/short-dst.nl"
"$fuzzer" -runs=0 "$bad" >/dev/null 2>&1 ||
	{ echo "FAIL: a malformed message fails the fuzzer outside strict runs"; exit 1; }
if XFIB_FUZZ_STRICT=1 "$fuzzer" -runs=0 -artifact_prefix="$bad/" "$bad" >/dev/null 2>&1; then
	echo "FAIL: a strict run let a malformed message (a 3-byte RTA_DST) through"
	exit 1
fi
echo "seed corpus: no malformed message (a 3-byte RTA_DST is caught)"
out=$("$fuzzer" -max_total_time="$secs" -print_final_stats=1 \
	-artifact_prefix="$build/fuzz/" "$work" 2>&1) && rc=0 || rc=$?
grep -E "^#[0-9]+.*(INITED|DONE)|stat::(number_of_executed_units|average_exec_per_sec|new_units_added)" <<<"$out" || true
if [ "$rc" -ne 0 ]; then
	grep -E "ERROR|invariant|SUMMARY|Test unit written" <<<"$out" | head -n 20
	echo "FAIL: the fuzzer found a failing input (exit $rc)"
	exit 1
fi
echo "PASS: $secs s of fuzzing, no crash, leak or broken invariant"
