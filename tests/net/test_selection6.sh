#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Automatic algorithm selection between the large IPv6 tables: trie6's
# and poptrie6's preferences cross near 30k prefixes, and the 5%
# hysteresis moves a growing table to poptrie6 only past about 100k and a
# shrinking one back to trie6 only below about 13k:
#  - 20k prefixes: trie6; 150k: poptrie6, verified against the kernel;
#  - back to 60k: still poptrie6 (no flapping); 10k: trie6.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

algo6() { rctl status -j | jq -r '.ipv6.algorithm'; }
prefixes6() { rctl status -j | jq '.ipv6.routes'; }

# /56s of 2001:db8:4000::/34, by index: no traffic goes to them.
routes() { # routes add|del FROM TO
	awk -v op="$1" -v from="$2" -v to="$3" -v gw="$SNK6" 'BEGIN {
		for (i = from; i < to; i++) {
			p = sprintf("2001:db8:%x:%x00::/56", 16384 + int(i / 256), i % 256)
			if (op == "add")
				print "route add " p " via " gw
			else
				print "route del " p
		}
	}' >"$XFIB_TMP/batch"
	ip -n "$RTR" -6 -batch "$XFIB_TMP/batch"
}
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
	routes add 1000000 1000050
	routes del 1000000 1000050
	wait_prefixes "$n"
}

topo_create
# Change rule only: the timer is an hour.
xfibd_start_ns "$RTR" "$PIN" "$XFIBD_LOG" --eval-changes 100 --eval-ms 3600000
attach_all
base=$(prefixes6)
log "base table: $base IPv6 prefixes"

routes add 0 $((20000 - base))
wait_prefixes 20000
nudge 20000
expect_algo trie6 10
log "20k prefixes: trie6"

routes add $((20000 - base)) $((150000 - base))
wait_prefixes 150000
expect_algo poptrie6 20
st=$(rctl status -j)
log "150k prefixes: poptrie6 ($(jq -c '.ipv6 | {memory, bytes_per_prefix, build_us, preferences}' <<<"$st"))"
out=$(rctl verify --random 200000 2>&1) || fail "verify on poptrie6 found mismatches or failed: $(tail -n 25 <<<"$out")"
grep -q "ipv6: poptrie6.* 0 mismatched" <<<"$out" || fail "verify did not check ipv6 on poptrie6: $out"

routes del $((60000 - base)) $((150000 - base))
wait_prefixes 60000
nudge 60000
stays poptrie6 2
log "back to 60k prefixes: still poptrie6, no flapping"

routes del $((10000 - base)) $((60000 - base))
wait_prefixes 10000
nudge 10000
expect_algo trie6 10
log "PASS: IPv6 selection between trie6 and poptrie6 with hysteresis"
