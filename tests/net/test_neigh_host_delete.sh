#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A neighbour's entry in xfib_neigh_hosts cannot be deleted (the map is
# frozen here, so that the kernel refuses writes to it from userspace):
# xfibd must say so, resync, and keep the neighbour's index out of use.
# Were the index handed to the next neighbour, the entry left behind would
# send the first neighbour's traffic, forwarded by XDP, to the second
# neighbour's MAC. So: host A (static neighbour) on the sink's port; the
# map frozen; A's neighbour deleted; host B (static neighbour) on the same
# port; then pings to A must not be forwarded by XDP.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init
command -v bpftool >/dev/null || skip "bpftool not installed"

topo_up
A=${SNK4%.*}.77
B=${SNK4%.*}.78

ip -n "$RTR" neigh replace "$A" lladdr 02:00:5e:10:00:aa dev "$R_SNK" nud permanent
wait_lookup "$A" '.neighbour.state == "valid"' 10
bpftool map freeze pinned "$PIN/xfib_neigh_hosts" ||
	fail "bpftool map freeze $PIN/xfib_neigh_hosts failed"

ip -n "$RTR" neigh del "$A" dev "$R_SNK"
wait_until 10 grep -q "delete from the neighbour hosts map: Operation not permitted" "$XFIBD_LOG" ||
	fail "xfibd did not report the failed delete: $(tail -n 5 "$XFIBD_LOG" | tr '\n' ' ')"
wait_until 10 grep -q "resync" "$XFIBD_LOG" ||
	fail "xfibd did not resync after the failed delete"
log "xfibd: $(grep -m1 "delete from the neighbour hosts map" "$XFIBD_LOG")"

# B takes a neighbour index (its own hosts entry cannot be written: the
# map is frozen, and xfibd says so); never A's.
ip -n "$RTR" neigh replace "$B" lladdr 02:00:5e:10:00:bb dev "$R_SNK" nud permanent
wait_until 10 grep -q "update neighbour hosts map" "$XFIBD_LOG" ||
	fail "xfibd did not try to add B's hosts entry"

x0=$(counter forwarded_v4)
in_ns "$GEN" ping -q -c 5 -i 0.05 -W 1 "$A" >/dev/null 2>&1 || true
dx=$(($(counter forwarded_v4) - x0))
[ "$dx" -eq 0 ] ||
	fail "$dx pings to $A (neighbour deleted) forwarded by XDP ($(stats_line))"
log "PASS: a failed neighbour-host delete is reported, resynced, and its index kept"
