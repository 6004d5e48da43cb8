#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Automatic algorithm selection (IPv4): preferences cross near a thousand
# prefixes, and the 5% hysteresis keeps a table between about 850 and
# 1230 prefixes on whatever it runs:
#  - 1000 prefixes: still bsearch4; 1400: dir24_8 (holding one 64 MiB
#    tbl24 map, and none before: the start's spare one is not kept);
#  - back to 1000: still dir24_8 (no flapping); 700: bsearch4;
#  - with a 1 h timer, only the 100-change rule triggers evaluation; with
#    the change rule out of reach, the timer does, and not before.
# run.sh: long
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

algo4() { rctl status -j | jq -r '.ipv4.algorithm'; }
prefixes4() { rctl status -j | jq '.ipv4.routes'; }

# /28s of 198.19.0.0/16, by index: no traffic goes to them.
pfx() { echo "198.19.$(($1 / 16)).$(($1 % 16 * 16))/28"; }
routes() { # routes add|del FROM TO
	local op=$1 i
	for ((i = $2; i < $3; i++)); do
		if [ "$op" = add ]; then
			echo "route add $(pfx "$i") via $SNK4"
		else
			echo "route del $(pfx "$i")"
		fi
	done >"$XFIB_TMP/batch"
	ip -n "$RTR" -batch "$XFIB_TMP/batch"
}
# wait_prefixes N: the dataplane holds N IPv4 prefixes (base included).
wait_prefixes() {
	wait_until 10 status_is ".ipv4.routes == $1" ||
		fail "dataplane has $(prefixes4) IPv4 prefixes, expected $1"
}
# expect_algo ALGO SECONDS: ALGO within SECONDS.
expect_algo() {
	wait_until "$2" status_is ".ipv4.algorithm == \"$1\"" ||
		fail "$(prefixes4) prefixes: $(algo4), expected $1 ($(rctl algo ipv4 | tr -s ' \n' ' '))"
}
# stays ALGO SECONDS: ALGO throughout.
stays() {
	local until_s=$((SECONDS + $2))
	while ((SECONDS < until_s)); do
		[ "$(algo4)" = "$1" ] || fail "$(prefixes4) prefixes: switched to $(algo4), expected to stay on $1"
		sleep 0.2
	done
}

topo_create
# Change rule only: the timer is an hour.
xfibd_start_ns "$RTR" "$PIN" "$XFIBD_LOG" --eval-changes 100 --eval-ms 3600000
attach_all
base=$(prefixes4)
log "base table: $base IPv4 prefixes"
# The start made the outer maps with a tbl24 template for a dir24_8 or
# trie6 start to build in; on bsearch it is not kept.
n=$(xfibd_tbl24_maps "$XFIBD_PID")
[ "$n" = 0 ] || fail "on bsearch4 and bsearch6, xfibd holds $n 64 MiB tbl24 maps"

routes add 0 $((1000 - base))
wait_prefixes 1000
# Nudge with 100 more changes (added and removed) so an evaluation
# surely ran at this size.
routes add 2000 2050
routes del 2000 2050
wait_prefixes 1000
stays bsearch4 2
log "1000 prefixes: bsearch4 (inside the hysteresis band)"

routes add $((1000 - base)) $((1400 - base))
expect_algo dir24_8 5
n=$(xfibd_tbl24_maps "$XFIBD_PID")
[ "$n" = 1 ] || fail "on dir24_8 and bsearch6, xfibd holds $n 64 MiB tbl24 maps, not 1"
log "1400 prefixes: dir24_8"

routes del $((1000 - base)) $((1400 - base))
wait_prefixes 1000
routes add 2000 2050
routes del 2000 2050
stays dir24_8 2
log "back to 1000 prefixes: still dir24_8, no flapping"

routes del $((700 - base)) $((1000 - base))
expect_algo bsearch4 5
log "700 prefixes: bsearch4"

# 99 changes are not 100: no evaluation without the timer.
routes add $((700 - base)) $((1400 - base)) # 700 changes: evaluated, switch
expect_algo dir24_8 5
routes del $((1400 - base - 99)) $((1400 - base)) # 99 changes, down to 1301
stays dir24_8 2
log "change rule honoured"

# Timer rule: restart with the change rule out of reach and a 3 s timer.
kill "$XFIBD_PID"
wait "$XFIBD_PID" 2>/dev/null || true
rctl algo ipv4 bsearch4 >/dev/null 2>&1 || true # applied at start
xfibd_start_ns "$RTR" "$PIN" "$XFIBD_LOG" --eval-changes 1000000 --eval-ms 3000
expect_algo bsearch4 5
rctl algo ipv4 auto >/dev/null
# Returning to automatic evaluates at once: 1301 prefixes -> dir24_8.
expect_algo dir24_8 5
routes del $((700 - base)) $((1301 - base)) # down to 700
t0=$SECONDS
stays dir24_8 1
expect_algo bsearch4 6
log "timer rule honoured: switched after $((SECONDS - t0)) s (timer 3 s)"
((SECONDS - t0 >= 2)) || fail "switched before the timer expired"
log "PASS: selection by scale with hysteresis, change and timer rules"
