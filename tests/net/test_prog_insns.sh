#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# scripts/prog-insns.sh reports the instructions the verifier processed
# for xfib_fwd as xfibctl attach loaded it: a count the kernel gives, the
# one build/prog-insns reads for the same program id, and at most 500,000
# (half the verifier's limit: the margin the project keeps, since kernel
# builds differ in how many they process). --max below the count fails
# with 3; a port without an XDP program, or no such program, with 1.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

PI="$XFIB_TOP/scripts/prog-insns.sh"
topo_up

out=$("$PI" -j xdp "$RTR" "$R_GEN") || fail "prog-insns.sh xdp $RTR $R_GEN failed"
log "xfib_fwd: $out"
[ "$(jq 'length' <<<"$out")" = 1 ] || fail "one program expected: $out"
name=$(jq -r '.[0].name' <<<"$out")
n=$(jq '.[0].verified_insns' <<<"$out")
id=$(jq '.[0].id' <<<"$out")
[ "$name" = xfib_fwd ] || fail "the program on $R_GEN is $name, not xfib_fwd"
((n > 0)) || fail "no processed-instruction count: $out"
((n <= 500000)) || fail "xfib_fwd: $n instructions processed, over half the verifier's limit"
[ "$(jq '.[0].margin' <<<"$out")" = $((1000000 - n)) ] || fail "margin is not the limit less the count: $out"

# The same count straight from the binary, by id; the text form agrees.
direct=$("$XFIB_BUILD/prog-insns" "$id" | jq '.verified_insns')
[ "$direct" = "$n" ] || fail "build/prog-insns $id says $direct, prog-insns.sh $n"
text=$("$PI" id "$id")
[ "$text" = "xfib_fwd $id $n 1000000 $((1000000 - n))" ] || fail "text form: $text"

# --max at the count passes, below it fails with 3.
"$PI" --max "$n" id "$id" >/dev/null || fail "--max $n refused a count of $n"
rc=0
"$PI" --max $((n - 1)) id "$id" >/dev/null 2>&1 || rc=$?
[ "$rc" = 3 ] || fail "--max $((n - 1)) with $n instructions: exit $rc, want 3"

# Nothing to read: exit 1.
rc=0
"$PI" xdp "$GEN" "$GEN_IF" >/dev/null 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "a port without XDP: exit $rc, want 1"
rc=0
"$PI" id 4294967295 >/dev/null 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "no such program: exit $rc, want 1"

log "PASS: prog-insns.sh reports xfib_fwd's $n processed instructions (margin $((1000000 - n)))"
