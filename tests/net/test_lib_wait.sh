#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The test library's clock. Every latency bound in the suite is a
# wait_until (or wait_lookup) with a timeout of whole seconds: a
# condition that never holds must be polled for the full timeout, never
# less (a deadline counted in $SECONDS could pass a moment after it was
# set, which failed "1 s" bounds after a few ms), and one that holds must
# return at once.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

# elapsed_ms CMD...: runs CMD (its status ignored), prints how long it took.
elapsed_ms() {
	local t0
	t0=$(now_ms)
	"$@" || true
	echo $(($(now_ms) - t0))
}

t0=$(now_ms)
sleep 0.3
d=$(($(now_ms) - t0))
((d >= 290 && d < 3000)) || fail "now_ms: sleep 0.3 measured as $d ms"

for limit in 1 2; do
	for round in 1 2 3 4 5; do
		# Start anywhere within a second: a deadline kept in whole
		# seconds expires up to a second early, depending on where.
		sleep "0.$(printf '%03d' $((RANDOM % 1000)))"
		ms=$(elapsed_ms wait_until "$limit" false)
		((ms >= limit * 1000 && ms < limit * 1000 + 1500)) ||
			fail "wait_until $limit false returned after $ms ms (round $round)"
	done
	log "wait_until $limit false: polled for the whole $limit s, 5 of 5 times"
done
wait_until 1 false && fail "wait_until 1 false succeeded"
ms=$(elapsed_ms wait_until 5 true)
((ms < 500)) || fail "wait_until 5 true took $ms ms"
log "PASS: wait_until waits its whole timeout and returns at once when the condition holds"

# A check of a command that printed nothing fails (jq 1.6's -e alone
# exits 0 when it reads no value).
printf '' | jqe '.a == 1' >/dev/null && fail "jqe passed on empty input"
printf '\n' | jqe '.a == 1' >/dev/null && fail "jqe passed on a blank line"
echo '{"a":2}' | jqe '.a == 1' >/dev/null && fail "jqe passed a false condition"
echo '{"a":1}' | jqe '.a == 1' >/dev/null || fail "jqe failed a true condition"
# xfibd_wait_synced against a status that prints nothing (no dataplane,
# a crashed xfibctl) must time out, not report "synced".
(
	xctl() { :; }
	xfibd_wait_synced ns-none /nonexistent 1 1
) && fail "xfibd_wait_synced reported synced on an empty status"
log "PASS: jqe and xfibd_wait_synced refuse an empty answer"
