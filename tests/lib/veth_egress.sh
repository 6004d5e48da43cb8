# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# The scenario of net/test_veth_egress and net/test_veth_egress_nofamily,
# on top of tests/lib/netns.sh: an egress veth (r-sink) whose peer (sink0)
# takes no redirected frames, then gets GRO, loses it, gets an XDP program
# and loses it; each time pings from gen to the sink are all answered, by
# the router kernel (counted as pass_egress_no_xmit) or by XDP (the
# kernel's forwarding counters flat), as xfib's decision says.
#
# xfib learns what a veth takes from the kernel's netdev netlink family
# (Linux 6.3 and later), or without it by probing the veth's peer itself;
# XFIB_TEST_NO_NETDEV_FAMILY=1 makes xfibd and xfibctl act as without it
# on any kernel. ve_fallback says which way this run goes, and the
# scenario checks that xfibd and xfibctl status went that way too.

VE_N=30
VE_FIX="enable GRO on the peer: ethtool -K <peer> gro on, or attach an XDP program to it"
VE_PROBE_LOG="veth ports are checked by probing their peers"
VE_PROBE_LACK="read from its peer instead"

# ve_fallback: this run learns without the netdev family: the kernel has
# none, or the test hook says to act as if.
ve_fallback() {
	[ "${XFIB_TEST_NO_NETDEV_FAMILY:-}" = 1 ] && return 0
	! genl ctrl get name netdev >/dev/null 2>&1
}

# sink_ns CMD...: CMD in the sink's namespace, by its name or, while it has
# none (VE_SINK_NS), by a path to it.
sink_ns() { nsenter --net="${VE_SINK_NS:-/run/netns/$SNK}" -- "$@"; }

# sink_gro on|off: sets GRO on the sink's end.
sink_gro() { sink_ns ethtool -K "$SNK_IF" gro "$1" >/dev/null || fail "ethtool -K $SNK_IF gro $1"; }

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
	ping_both "$VE_N"
	((D_K4 >= VE_N && D_K6 >= VE_N)) ||
		fail "$1: router kernel forwarded v4 +$D_K4 v6 +$D_K6, expected >= $VE_N each"
	(($(no_xmit) - c0 >= 2 * VE_N)) ||
		fail "$1: pass_egress_no_xmit grew by $(($(no_xmit) - c0)), expected >= $((2 * VE_N))"
	((D_X4 >= VE_N && D_X6 >= VE_N)) ||
		fail "$1: the replies were not XDP-forwarded: v4 +$D_X4 v6 +$D_X6"
	log "$1: kernel forwarded, pass_egress_no_xmit +$(($(no_xmit) - c0))"
}

# by_xdp WHAT: the same pings, all by XDP, none by the kernel or no_xmit.
by_xdp() {
	local c0
	wait_until 5 decides forwarded_v4 forwarded_v6 ||
		fail "$1: not picked up: v4 $(lookup_reason "$SNK4"), v6 $(lookup_reason "$SNK6")"
	c0=$(no_xmit)
	ping_both "$VE_N"
	forwarded_by xdp $((2 * VE_N)) "$1"
	(($(no_xmit) == c0)) || fail "$1: pass_egress_no_xmit grew by $(($(no_xmit) - c0))"
}

# sink_reason_is TEXT: status -j gives r-sink as no redirect target, for a
# reason containing TEXT.
sink_reason_is() {
	rctl status -j | jqe --arg s "$R_SNK" --arg t "$1" '
		.interfaces[] | select(.name == $s) |
		.xdp_redirect_target == false and (.no_redirect_reason | contains($t))' >/dev/null
}

# ve_start: the topology, with the sink's end back at the veth default
# (GRO off, no XDP program), and xfibd running; checks that xfibd and
# status learn the ports the way ve_fallback says.
ve_start() {
	local st
	topo_create
	# topo_create turns GRO on at the hosts; the sink's end goes back to
	# the veth default, and carries no XDP program.
	sink_gro off
	sink_ns ethtool -k "$SNK_IF" | grep -qx 'generic-receive-offload: off' ||
		fail "GRO still on at $SNK/$SNK_IF"
	! xdp_prog_on "$SNK" "$SNK_IF" || fail "an XDP program is attached to $SNK/$SNK_IF"

	xfibd_start
	resolve_neighbours

	st=$(rctl status)
	if ve_fallback; then
		log "without the netdev family: xfib probes the veths' peers"
		grep -qF "$VE_PROBE_LOG" "$XFIBD_LOG" ||
			fail "xfibd does not say it probes the veths' peers: $(head -n 20 "$XFIBD_LOG")"
		grep -qF "$VE_PROBE_LACK" <<<"$st" || fail "status does not say how veths are checked: $st"
		rctl status -j | jqe '.kernel.lacks | index("netdev_netlink_family") != null' >/dev/null ||
			fail "status -j: netdev_netlink_family not among the lacks: $(rctl status -j | jq -c .kernel)"
	else
		log "with the netdev family"
		! grep -qF "$VE_PROBE_LOG" "$XFIBD_LOG" || fail "xfibd probes the peers although the kernel has the netdev family"
		rctl status -j | jqe '.kernel.lacks | index("netdev_netlink_family") == null' >/dev/null ||
			fail "status -j: netdev_netlink_family among the lacks: $(rctl status -j | jq -c .kernel)"
	fi
}

# ve_attach: attach warns about r-sink, with the reason and the fix, and
# status says the same (text and -j).
ve_attach() {
	local out want st p
	out=$(rctl attach "$R_GEN" "$R_SNK" 2>&1) || fail "xfibctl attach: $out"
	log "attach said: $out"
	want="xfibctl: attach warning: $R_SNK cannot take XDP-redirected frames (the kernel forwards what leaves by it): its veth peer (ifindex"
	grep -qF "$want" <<<"$out" || fail "attach: no warning about $R_SNK ($want...): $out"
	grep -qF "in another network namespace) has neither GRO nor an XDP program: $VE_FIX" <<<"$out" ||
		fail "attach: the warning gives no reason or fix: $out"
	! grep -qF "$R_GEN cannot" <<<"$out" || fail "attach warned about $R_GEN, whose peer has GRO on: $out"
	for p in $(router_ports); do
		xdp_prog_on "$RTR" "$p" || fail "no XDP program on $RTR/$p after attach"
	done

	st=$(rctl status)
	grep -qF "  $R_SNK: cannot take XDP-redirected frames" <<<"$st" || fail "status text: $st"
	grep -qF "$VE_FIX" <<<"$st" || fail "status text gives no fix: $st"
	rctl status -j | jqe --arg s "$R_SNK" --arg g "$R_GEN" --arg fix "$VE_FIX" '
		(.interfaces[] | select(.name == $s) |
			.xdp_redirect_target == false and (.no_redirect_reason | endswith($fix))) and
		(.interfaces[] | select(.name == $g) |
			.xdp_redirect_target == true and (has("no_redirect_reason") | not))' >/dev/null ||
		fail "status -j: $(rctl status -j | jq -c .interfaces)"
}

# ve_peer_changes: the peer's GRO on and off, an XDP program on it and
# off, each followed by the running xfibd (polled through xfibctl lookup,
# which runs the dataplane's decision).
ve_peer_changes() {
	by_kernel "peer without GRO"

	sink_gro on
	by_xdp "peer's GRO turned on"
	rctl status -j | jqe --arg s "$R_SNK" \
		'.interfaces[] | select(.name == $s) | .xdp_redirect_target == true' >/dev/null ||
		fail "status -j after gro on: $(rctl status -j | jq -c .interfaces)"

	sink_gro off
	by_kernel "peer's GRO turned off again"

	# xfib's own program, attached in the sink namespace with a pin
	# directory of its own and no daemon there: it passes every packet
	# to the sink's kernel.
	SINK_PIN="$PIN-sinkside"
	XFIB_PIN_DIRS+=("$SINK_PIN")
	xctl "$SNK" "$SINK_PIN" attach "$SNK_IF" >/dev/null 2>&1 || fail "attach an XDP program to $SNK/$SNK_IF"
	xdp_prog_on "$SNK" "$SNK_IF" || fail "no XDP program on $SNK/$SNK_IF"
	# An XDP program need not turn the veth's GRO on (6.1 and 6.18 leave
	# it off): the program alone makes it a target.
	log "with an XDP program, $SNK_IF has $(sink_ns ethtool -k "$SNK_IF" | grep '^generic-receive-offload:')"
	by_xdp "XDP program on the peer"

	xctl "$SNK" "$SINK_PIN" detach "$SNK_IF" || fail "detach the XDP program of $SNK/$SNK_IF"
	by_kernel "peer's XDP program detached"
}
