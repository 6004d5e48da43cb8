#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Netlink is lossy: with a deliberately tiny receive buffer, a route flood
# overruns xfibd's notification socket (ENOBUFS). xfibd must notice, dump
# the kernel's tables again (mark and sweep), and end equal to the kernel:
# status counts the resyncs and verify finds no mismatch. Traffic to an
# unchanged route keeps being XDP-forwarded throughout.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

topo_create
xfibd_start_ns "$RTR" "$PIN" "$XFIBD_LOG" --rcvbuf 4096
attach_all
resolve_neighbours
expect_xdp 4 "$SNK4"
expect_xdp 6 "$SNK6"

batch="$XFIB_TMP/flood.batch"
for b in $(seq 0 255); do
	for a in $(seq 0 15); do
		echo "route add 198.19.$b.$((a * 16))/28 via $SNK4"
	done
	echo "route add 2001:db8:ff$(printf %02x "$b")::/48 via $SNK6"
done >"$batch"

snapshot
stream_start ping4 4 "$SNK4" -c 300 -i 0.01
for round in 1 2 3; do
	ip -n "$RTR" -batch "$batch"
	sed 's/^route add/route del/; s/ via .*//' "$batch" >"$batch.del"
	[ "$round" = 3 ] || ip -n "$RTR" -batch "$batch.del"
done
stream_wait ping4

deadline=$((SECONDS + 20))
while :; do
	st=$(rctl status -j)
	[ "$(jq '.daemon.resyncs' <<<"$st")" -gt 0 ] && [ "$(jq '.ipv4.routes' <<<"$st")" -ge 4096 ] && break
	((SECONDS < deadline)) || fail "no resync after the flood, or routes missing: $(jq -c '.daemon, {v4: .ipv4.routes, v6: .ipv6.routes}' <<<"$st")"
	sleep 0.2
done
grep -q "receive buffer overrun" "$XFIBD_LOG" || fail "no overrun logged"
jqe '.daemon.overruns > 0 and .daemon.last_sync > 0' <<<"$st" >/dev/null ||
	fail "status does not count the overruns: $(jq -c .daemon <<<"$st")"
# One line per resync, saying why, with what it found and how long it took.
grep -Eq "sync \(resync [0-9]+: netlink receive buffer overrun\) done in [0-9]+ ms: .* ipv4 routes" \
	"$XFIBD_LOG" || fail "no resync line naming the overrun: $(grep -i sync "$XFIBD_LOG" | tail -n 3)"
log "resyncs: $(jq '.daemon.resyncs' <<<"$st"), ipv4 prefixes $(jq '.ipv4.routes' <<<"$st"), ipv6 $(jq '.ipv6.routes' <<<"$st")"

# Let the last resync settle, then compare with the kernel.
sleep 1.5
out=$(rctl verify --random 100000 2>&1) || fail "verify after overruns: $(tail -n 25 <<<"$out")"
stream_answered ping4 300 "during the flood"
deltas
((D_K4 == 0)) || fail "the kernel forwarded $D_K4 packets during the flood"
log "PASS: overruns resynced, verify clean, no echo lost"
