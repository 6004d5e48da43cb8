#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# net/test_veth_egress without the netdev netlink family, on any kernel:
# with XFIB_TEST_NO_NETDEV_FAMILY=1 xfibd and xfibctl act as on a kernel
# before 6.3, probing each veth's peer in its namespace and following its
# changes. The same scenario (tests/lib/veth_egress.sh), then what only
# that way has:
#
#  - a peer in the router's own namespace (r-loop's, r-loop-p): attach
#    names it in the warning and the fix, and xfibd follows its GRO (the
#    decision for a host behind r-loop, by xfibctl lookup);
#  - the sink's namespace without its name (/run/netns/NAME unmounted) and
#    held by a process: xfibd finds it through /proc/PID/ns/net and
#    follows sink0's GRO;
#  - held by no process either (only by a file descriptor of this test):
#    sink0 cannot be read, so r-sink is left to the kernel although sink0
#    has GRO on, and xfibd and status say why;
#  - named again: found again at sink0's next change, back in XDP;
#  - xfibd with only CAP_BPF and CAP_NET_ADMIN, as the systemd unit runs
#    it: it cannot hear other namespaces, so r-sink (and r-gen) go to the
#    kernel with sink0's GRO on, while r-loop's peer is still followed.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
# shellcheck source=tests/lib/veth_egress.sh
. "$(dirname "$0")/../lib/veth_egress.sh"
export XFIB_TEST_NO_NETDEV_FAMILY=1
xfib_init

ve_start
ve_attach
ve_peer_changes

# ---- a peer in the router's own namespace -----------------------------------

LOOP=r-loop LOOP_P=r-loop-p
NET4_L="198.18.$((16 * TOPO_ID + 5))"
ip -n "$RTR" link add "$LOOP" type veth peer name "$LOOP_P" || fail "veth $LOOP"
ip -n "$RTR" link set "$LOOP_P" up
ip -n "$RTR" link set "$LOOP" up
ip -n "$RTR" addr add "$NET4_L.1/24" dev "$LOOP"
ip -n "$RTR" neigh replace "$NET4_L.2" lladdr 02:00:00:00:00:02 dev "$LOOP" nud permanent
out=$(rctl attach "$LOOP" 2>&1) || fail "xfibctl attach $LOOP: $out"
grep -qF "$LOOP cannot take XDP-redirected frames (the kernel forwards what leaves by it): its veth peer $LOOP_P has neither GRO nor an XDP program: enable GRO on the peer: ethtool -K $LOOP_P gro on, or attach an XDP program to it" <<<"$out" ||
	fail "attach $LOOP: no warning naming $LOOP_P: $out"

# loop_decides REASON: xfib's decision for a packet to the host behind r-loop.
loop_decides() { [ "$(lookup_reason "$NET4_L.2")" = "$1" ]; }
loop_target() {
	rctl status -j | jqe --arg l "$LOOP" --argjson t "$1" \
		'.interfaces[] | select(.name == $l) | .xdp_redirect_target == $t' >/dev/null
}
wait_until 5 loop_decides pass_egress_no_xmit ||
	fail "peer $LOOP_P without GRO: $(lookup_reason "$NET4_L.2")"
ip netns exec "$RTR" ethtool -K "$LOOP_P" gro on >/dev/null || fail "ethtool -K $LOOP_P gro on"
wait_until 5 loop_decides forwarded_v4 ||
	fail "peer $LOOP_P with GRO: $(lookup_reason "$NET4_L.2")"
loop_target true || fail "status -j, $LOOP_P with GRO: $(rctl status -j | jq -c .interfaces)"
ip netns exec "$RTR" ethtool -K "$LOOP_P" gro off >/dev/null || fail "ethtool -K $LOOP_P gro off"
wait_until 5 loop_decides pass_egress_no_xmit ||
	fail "peer $LOOP_P without GRO again: $(lookup_reason "$NET4_L.2")"
loop_target false || fail "status -j, $LOOP_P without GRO: $(rctl status -j | jq -c .interfaces)"
log "a peer in the router's namespace: followed"

# ---- the sink's namespace, held by a process only -----------------------------

# A process in the sink's namespace (nsenter execs it: $! is the
# process), then the namespace's name taken away.
nsenter --net="/run/netns/$SNK" -- sleep 600 &
HOLDER=$!
XFIB_PIDS+=("$HOLDER")
same_ns() { [ "$(stat -L -c %i "/proc/$HOLDER/ns/net")" = "$(stat -L -c %i "/run/netns/$SNK")" ]; }
wait_until 5 same_ns || fail "the holder did not enter $SNK"
umount "/run/netns/$SNK" || fail "umount /run/netns/$SNK"
VE_SINK_NS=/proc/$HOLDER/ns/net
sink_gro on
by_xdp "sink namespace found through a process, sink0's GRO turned on"

# ---- held by no process, without a name ---------------------------------------

exec {ns_fd}<"/proc/$HOLDER/ns/net"
VE_SINK_NS=/proc/$$/fd/$ns_fd
sink_ns ethtool -k "$SNK_IF" | grep -qx 'generic-receive-offload: on' || fail "GRO off at $SNK_IF"
kill "$HOLDER"
wait "$HOLDER" 2>/dev/null || true
# A change of r-sink (an alias) makes xfibd probe its peer again. Made on
# the router's side: a change made in the sink's namespace would put a
# process there (nsenter), through which xfibd could find it while it
# reads the change.
ip -n "$RTR" link set dev "$R_SNK" alias "xfib test: no namespace to find" ||
	fail "ip link set $R_SNK alias"
by_kernel "sink namespace neither named nor held by a process, sink0's GRO on"
why="cannot be read: no namespace with its nsid"
sink_reason_is "$why" || fail "status -j gives no reason: $(rctl status -j | jq -c .interfaces)"
grep -F "veth $R_SNK (ifindex" "$XFIBD_LOG" | grep -qF "$why" ||
	fail "xfibd does not say why: $(grep -F "veth $R_SNK" "$XFIBD_LOG" | tail -n 3)"

# ---- named again ------------------------------------------------------------------

mount --bind "/proc/$$/fd/$ns_fd" "/run/netns/$SNK" || fail "mount --bind the sink's namespace again"
VE_SINK_NS=
exec {ns_fd}<&-
sink_ns ip link set dev "$SNK_IF" alias "xfib test: named again" || fail "ip link set $SNK_IF alias"
by_xdp "sink namespace named again"

# ---- xfibd with the two capabilities of the systemd unit ---------------------------

# Without CAP_NET_BROADCAST it cannot hear other namespaces: r-sink goes
# to the kernel although sink0 has GRO on, and xfibd says why. The peer
# in its own namespace is still followed.
kill -TERM "$XFIBD_PID"
wait "$XFIBD_PID" || fail "xfibd exited with status $? on SIGTERM"
nsenter --net="/run/netns/$RTR" -- setpriv --bounding-set=-all,+bpf,+net_admin \
	--inh-caps=-all --no-new-privs "$XFIBD" -v --pin-dir "$PIN" >>"$XFIBD_LOG" 2>&1 &
XFIBD_PID=$!
XFIB_PIDS+=("$XFIBD_PID")
xfibd_wait_synced "$RTR" "$PIN" "${XFIBD_SYNC_TIMEOUT:-10}" "$XFIBD_PID" ||
	fail "xfibd with CAP_BPF and CAP_NET_ADMIN only did not sync: $(tail -n 5 "$XFIBD_LOG")"
grep -qF "NETLINK_LISTEN_ALL_NSID: Operation not permitted; it needs CAP_NET_BROADCAST" "$XFIBD_LOG" ||
	fail "xfibd does not say it cannot hear other namespaces: $(tail -n 20 "$XFIBD_LOG")"
# gen0, r-gen's peer, is in another namespace too: the kernel forwards
# both ways.
wait_until 5 decides pass_egress_no_xmit pass_egress_no_xmit ||
	fail "xfibd without CAP_NET_BROADCAST still forwards to $R_SNK: v4 $(lookup_reason "$SNK4"), v6 $(lookup_reason "$SNK6")"
c0=$(no_xmit)
ping_both "$VE_N"
forwarded_by kernel $((2 * VE_N)) "xfibd without CAP_NET_BROADCAST"
(($(no_xmit) - c0 >= 4 * VE_N)) ||
	fail "xfibd without CAP_NET_BROADCAST: pass_egress_no_xmit grew by $(($(no_xmit) - c0)), expected >= $((4 * VE_N))"
loop_decides pass_egress_no_xmit ||
	fail "xfibd without CAP_NET_BROADCAST, peer $LOOP_P without GRO: $(lookup_reason "$NET4_L.2")"
ip netns exec "$RTR" ethtool -K "$LOOP_P" gro on >/dev/null || fail "ethtool -K $LOOP_P gro on"
wait_until 5 loop_decides forwarded_v4 ||
	fail "xfibd without CAP_NET_BROADCAST, peer $LOOP_P with GRO: $(lookup_reason "$NET4_L.2")"

log "PASS: without the netdev family, a veth's peer is probed where it is and followed: in another namespace, named or a process's, in the router's own; and a peer that cannot be read or heard leaves its veth to the kernel"
