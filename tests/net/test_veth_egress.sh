#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A veth takes XDP-redirected frames only while its peer has GRO on or an
# XDP program; otherwise the kernel drops every frame redirected to it.
# Here the sink's end (sink0, the peer of router port r-sink) has neither:
#
#  - xfibctl attach warns about r-sink, with the reason and the fix, and
#    status says the same (text and -j);
#  - pings from gen to the sink are all answered: the router kernel
#    forwards them, counted by xfib as pass_egress_no_xmit;
#  - `ethtool -K sink0 gro on` in the sink's namespace is picked up by the
#    running xfibd (polled through xfibctl lookup, which runs the
#    dataplane's decision): the same pings are then forwarded by XDP and
#    none by the router kernel;
#  - gro off again sends them back to the kernel;
#  - an XDP program on sink0 (xfib's own, attached in the sink namespace
#    with a pin directory of its own and no daemon there, so it passes
#    every packet to the sink's kernel) makes r-sink a redirect target
#    again, and detaching it undoes that.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

N=30
FIX="enable GRO on the peer: ethtool -K <peer> gro on, or attach an XDP program to it"

topo_create
# topo_create turns GRO on at the hosts; the sink's end goes back to the
# veth default, and carries no XDP program.
ip netns exec "$SNK" ethtool -K "$SNK_IF" gro off >/dev/null || fail "ethtool -K $SNK_IF gro off"
ip netns exec "$SNK" ethtool -k "$SNK_IF" | grep -qx 'generic-receive-offload: off' ||
	fail "GRO still on at $SNK/$SNK_IF"
! xdp_prog_on "$SNK" "$SNK_IF" || fail "an XDP program is attached to $SNK/$SNK_IF"

xfibd_start
resolve_neighbours

# ---- attach warns, status explains ------------------------------------------

out=$(rctl attach "$R_GEN" "$R_SNK" 2>&1) || fail "xfibctl attach: $out"
log "attach said: $out"
want="xfibctl: attach warning: $R_SNK cannot take XDP-redirected frames (the kernel forwards what leaves by it): its veth peer (ifindex"
grep -qF "$want" <<<"$out" || fail "attach: no warning about $R_SNK ($want...): $out"
grep -qF "in another network namespace) has neither GRO nor an XDP program: $FIX" <<<"$out" ||
	fail "attach: the warning gives no reason or fix: $out"
! grep -qF "$R_GEN cannot" <<<"$out" || fail "attach warned about $R_GEN, whose peer has GRO on: $out"
for p in $(router_ports); do
	xdp_prog_on "$RTR" "$p" || fail "no XDP program on $RTR/$p after attach"
done

st=$(rctl status)
grep -qF "  $R_SNK: cannot take XDP-redirected frames" <<<"$st" || fail "status text: $st"
grep -qF "$FIX" <<<"$st" || fail "status text gives no fix: $st"
rctl status -j | jqe --arg s "$R_SNK" --arg g "$R_GEN" --arg fix "$FIX" '
	(.interfaces[] | select(.name == $s) |
		.xdp_redirect_target == false and (.no_redirect_reason | endswith($fix))) and
	(.interfaces[] | select(.name == $g) |
		.xdp_redirect_target == true and (has("no_redirect_reason") | not))' >/dev/null ||
	fail "status -j: $(rctl status -j | jq -c .interfaces)"

# ---- what the dataplane decides ----------------------------------------------

# lookup_reason DST: the reason xfib's decision gives a packet to DST from gen.
lookup_reason() { rctl lookup "$1" --iif "$R_GEN" -j | jq -r .reason; }
# decides REASON4 REASON6: the pings to the sink get these reasons.
decides() {
	[ "$(lookup_reason "$SNK4")" = "$1" ] && [ "$(lookup_reason "$SNK6")" = "$2" ]
}
# no_xmit: pass_egress_no_xmit packets.
no_xmit() { counter pass_egress_no_xmit; }

# by_kernel WHAT: N pings per family to the sink, each answered; the
# router kernel forwarded the requests, counted by xfib as no_xmit; the
# replies (to gen, whose end has GRO on) went by XDP.
by_kernel() {
	local c0
	wait_until 5 decides pass_egress_no_xmit pass_egress_no_xmit ||
		fail "$1: xfib still forwards to $R_SNK: v4 $(lookup_reason "$SNK4"), v6 $(lookup_reason "$SNK6")"
	c0=$(no_xmit)
	ping_both "$N"
	((D_K4 >= N && D_K6 >= N)) ||
		fail "$1: router kernel forwarded v4 +$D_K4 v6 +$D_K6, expected >= $N each"
	(($(no_xmit) - c0 >= 2 * N)) ||
		fail "$1: pass_egress_no_xmit grew by $(($(no_xmit) - c0)), expected >= $((2 * N))"
	((D_X4 >= N && D_X6 >= N)) ||
		fail "$1: the replies were not XDP-forwarded: v4 +$D_X4 v6 +$D_X6"
	log "$1: kernel forwarded, pass_egress_no_xmit +$(($(no_xmit) - c0))"
}

# by_xdp WHAT: the same pings, all by XDP, none by the kernel or no_xmit.
by_xdp() {
	local c0
	wait_until 5 decides forwarded_v4 forwarded_v6 ||
		fail "$1: not picked up: v4 $(lookup_reason "$SNK4"), v6 $(lookup_reason "$SNK6")"
	c0=$(no_xmit)
	ping_both "$N"
	forwarded_by xdp $((2 * N)) "$1"
	(($(no_xmit) == c0)) || fail "$1: pass_egress_no_xmit grew by $(($(no_xmit) - c0))"
}

by_kernel "peer without GRO"

ip netns exec "$SNK" ethtool -K "$SNK_IF" gro on >/dev/null || fail "ethtool -K $SNK_IF gro on"
by_xdp "peer's GRO turned on"
rctl status -j | jqe --arg s "$R_SNK" \
	'.interfaces[] | select(.name == $s) | .xdp_redirect_target == true' >/dev/null ||
	fail "status -j after gro on: $(rctl status -j | jq -c .interfaces)"

ip netns exec "$SNK" ethtool -K "$SNK_IF" gro off >/dev/null || fail "ethtool -K $SNK_IF gro off"
by_kernel "peer's GRO turned off again"

SINK_PIN="$PIN-sinkside"
XFIB_PIN_DIRS+=("$SINK_PIN")
xctl "$SNK" "$SINK_PIN" attach "$SNK_IF" >/dev/null 2>&1 || fail "attach an XDP program to $SNK/$SNK_IF"
xdp_prog_on "$SNK" "$SNK_IF" || fail "no XDP program on $SNK/$SNK_IF"
by_xdp "XDP program on the peer"

xctl "$SNK" "$SINK_PIN" detach "$SNK_IF" || fail "detach the XDP program of $SNK/$SNK_IF"
by_kernel "peer's XDP program detached"

log "PASS: an egress veth whose peer takes no redirected frames is left to the kernel, and follows the peer's GRO and XDP program"
