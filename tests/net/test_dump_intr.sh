#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Dumps racing changes. The kernel flags a multi-part dump NLM_F_DUMP_INTR
# when what it dumps changed between two parts (links, addresses,
# netconf). With 3000 + 3000 addresses on the router (several parts per
# address dump) and addresses and routes churning, xfibd is started, then made to
# resync again and again (a tiny receive buffer overruns). It must:
#
# - start, and stay up, whatever dump is interrupted;
# - notice the interruptions and dump again ("dump interrupted" in its
#   log), never fail a dump;
# - count the resyncs and the time of the last full sync in status;
# - end equal to the kernel: prefixes, verify, and a steady flow through
#   an unchanged route answered every time, forwarded by XDP only.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

topo_create 0
# The addresses live on a veth pair inside the router, not attached.
ip -n "$RTR" link add r-many0 type veth peer name r-many1
ip -n "$RTR" link set r-many0 up
ip -n "$RTR" link set r-many1 up
batch="$XFIB_TMP/addrs.batch"
for ((i = 0; i < 3000; i++)); do
	printf 'address add 198.19.%d.%d/32 dev r-many0\n' $((100 + i / 250)) $((1 + i % 250))
	printf 'address add 2001:db8:ee::%x/128 dev r-many0 nodad\n' "$i"
done >"$batch"
ip -n "$RTR" -batch "$batch" || fail "adding 3000 + 3000 addresses"
# What churns, in separate loops so that address changes meet the dumps
# that overruns cause: 100 + 100 addresses, and 512 routes.
for i in $(seq 1 100); do
	echo "address add 198.19.140.$i/32 dev r-many1" >>"$batch.addr4-add"
	echo "address add 2001:db8:ef::$i/128 dev r-many1 nodad" >>"$batch.addr6-add"
done
sed 's/^address add/address del/' "$batch.addr4-add" >"$batch.addr4-del"
sed 's/^address add/address del/' "$batch.addr6-add" >"$batch.addr6-del"
for ((i = 0; i < 256; i++)); do
	printf 'route add 198.19.%d.%d/31 via %s\n' $((160 + i / 128)) $(((i % 128) * 2)) "$SNK4"
	printf 'route add 2001:db8:fe%02x::/48 via %s\n' "$i" "$SNK6"
done >"$batch.route-add"
sed 's/^route add/route del/; s/ via .*//' "$batch.route-add" >"$batch.route-del"

CHURN_STOP="$XFIB_TMP/churn.stop"
churn() { # churn addr4|addr6|route
	until [ -e "$CHURN_STOP" ]; do
		ip -n "$RTR" -batch "$batch.$1-add" 2>/dev/null || true
		ip -n "$RTR" -batch "$batch.$1-del" 2>/dev/null || true
	done
}
CHURN_T0=$(date +%s)
churn addr4 &
CHURN_PIDS=("$!")
churn addr6 &
CHURN_PIDS+=("$!")
churn route &
CHURN_PIDS+=("$!")
XFIB_PIDS+=("${CHURN_PIDS[@]}")
sleep 1

# Started in the middle of it, with a receive buffer that overruns.
XFIBD_SYNC_TIMEOUT=30 xfibd_start_ns "$RTR" "$PIN" "$XFIBD_LOG" --rcvbuf 4096
attach_all
resolve_neighbours
expect_xdp 4 "$SNK4" 5000
expect_xdp 6 "$SNK6" 5000

snapshot
stream_start ping4 4 "$SNK4" -i 0.02 -c 500 -W 2
stream_start ping6 6 "$SNK6" -i 0.02 -c 500 -W 2

# Churn until several resyncs ran into interrupted dumps (at most 40 s).
deadline=$((SECONDS + 40))
while :; do
	n_intr=$(grep -c "dump interrupted" "$XFIBD_LOG" || true)
	resyncs=$(rctl status -j | jq .daemon.resyncs)
	((n_intr >= 3 && resyncs >= 3)) && break
	((SECONDS < deadline)) || break
	kill -0 "$XFIBD_PID" 2>/dev/null || fail "xfibd died under churn"
	sleep 0.5
done
touch "$CHURN_STOP"
for p in "${CHURN_PIDS[@]}"; do wait "$p" || true; done
log "churn stopped: $resyncs resyncs, $n_intr interrupted dumps retried so far"
kill -0 "$XFIBD_PID" 2>/dev/null || fail "xfibd died under churn"
grep -q "receive buffer overrun" "$XFIBD_LOG" || fail "no overrun: the churn did not reach the daemon"
((n_intr >= 1)) || fail "no dump was interrupted in 40 s of churn; nothing was tested (resyncs: $resyncs)"
if grep -E "netlink dump: |resync failed|netlink: " "$XFIBD_LOG"; then
	fail "a dump failed instead of being retried"
fi

# The last resync settles, then xfib equals the kernel.
stream_wait ping4
stream_wait ping6
wait_prefixes_match 30
verify_clean "after the churn"
st=$(rctl status -j)
jqe --argjson t0 "$CHURN_T0" '.daemon.running and .daemon.synced and
	.daemon.resyncs >= 1 and .daemon.last_sync >= $t0' <<<"$st" >/dev/null ||
	fail "status after the churn: $(jq -c .daemon <<<"$st")"
log "status: $(jq -c '.daemon | {resyncs, last_sync, started}' <<<"$st"), $(grep -c "dump interrupted" "$XFIBD_LOG") interrupted dumps retried"
grep "sync (resync .*) done" "$XFIBD_LOG" | tail -n 3 | sed 's/^/    /'

for f in 4 6; do
	stream_answered "ping$f" 500 "v$f during the churn"
done
deltas
((D_K4 == 0 && D_K6 == 0)) || fail "the router kernel forwarded v4 +$D_K4 v6 +$D_K6 during the churn"
log "PASS: interrupted dumps retried, resyncs counted, verify clean, 500/500 echoes per family by XDP"
