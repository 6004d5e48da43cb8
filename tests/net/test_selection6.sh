#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Automatic algorithm selection for IPv6 tables: bsearch6's and poptrie6's
# preferences cross near 600 prefixes, and the 5% hysteresis keeps a table
# between about 470 and 700 prefixes on whatever it runs; poptrie6's stays
# more than 5% above trie6's at every size:
#  - 400 prefixes: bsearch6; 800: poptrie6; back to 550: still poptrie6
#    (no flapping); 300: bsearch6;
#  - 20k prefixes on trie6 (forced), then automatic: poptrie6 at once;
#  - 150k prefixes: still poptrie6, verified against the kernel.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

algo6() { rctl status -j | jq -r '.ipv6.algorithm'; }
prefixes6() { rctl status -j | jq '.ipv6.routes'; }

# wait_prefixes N: the dataplane holds N IPv6 prefixes (base included).
wait_prefixes() {
	wait_until 60 status_is ".ipv6.routes == $1" ||
		fail "dataplane has $(prefixes6) IPv6 prefixes, expected $1"
}
# expect_algo ALGO SECONDS: ALGO within SECONDS.
expect_algo() {
	wait_until "$2" status_is ".ipv6.algorithm == \"$1\"" ||
		fail "$(prefixes6) prefixes: $(algo6), expected $1 ($(rctl algo ipv6 | tr -s ' \n' ' '))"
}
# stays ALGO SECONDS: ALGO throughout.
stays() {
	local until_s=$((SECONDS + $2))
	while ((SECONDS < until_s)); do
		[ "$(algo6)" = "$1" ] || fail "$(prefixes6) prefixes: switched to $(algo6), expected to stay on $1"
		sleep 0.2
	done
}
# nudge: 100 more changes, so an evaluation surely ran at this size.
nudge() {
	local n=$1
	routes56 add 1000000 1000050
	routes56 del 1000000 1000050
	wait_prefixes "$n"
}

topo_create
# Change rule only: the timer is an hour.
xfibd_start_ns "$RTR" "$PIN" "$XFIBD_LOG" --eval-changes 100 --eval-ms 3600000
attach_all
base=$(prefixes6)
log "base table: $base IPv6 prefixes"

routes56 add 0 $((400 - base))
wait_prefixes 400
nudge 400
stays bsearch6 2
log "400 prefixes: bsearch6"

routes56 add $((400 - base)) $((800 - base))
wait_prefixes 800
expect_algo poptrie6 5
log "800 prefixes: poptrie6"

routes56 del $((550 - base)) $((800 - base))
wait_prefixes 550
nudge 550
stays poptrie6 2
log "back to 550 prefixes: still poptrie6, no flapping"

routes56 del $((300 - base)) $((550 - base))
wait_prefixes 300
expect_algo bsearch6 5
log "300 prefixes: bsearch6"

routes56 add $((300 - base)) $((20000 - base))
wait_prefixes 20000
rctl algo ipv6 trie6 >/dev/null || fail "forcing trie6 failed"
expect_algo trie6 5
rctl algo ipv6 auto >/dev/null || fail "back to automatic selection failed"
# Returning to automatic evaluates at once.
expect_algo poptrie6 5
log "20k prefixes: poptrie6 over trie6 ($(rctl status -j | jq -c '.ipv6.preferences'))"

routes56 add $((20000 - base)) $((150000 - base))
wait_prefixes 150000
nudge 150000
stays poptrie6 2
st=$(rctl status -j)
log "150k prefixes: poptrie6 ($(jq -c '.ipv6 | {memory, bytes_per_prefix, build_us, preferences}' <<<"$st"))"
out=$(rctl verify --random 200000 2>&1) || fail "verify on poptrie6 found mismatches or failed: $(tail -n 25 <<<"$out")"
grep -q "ipv6: poptrie6.* 0 mismatched" <<<"$out" || fail "verify did not check ipv6 on poptrie6: $out"
log "PASS: IPv6 selection of bsearch6 and poptrie6 with hysteresis, poptrie6 over trie6"
