#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# IPsec (XFRM) on the router, xfib attached: the kernel checks forwarded
# packets against forward policies and looks output policies up for them,
# and XDP comes before both, so while a family has such a policy (or a
# state, or a default of block) its packets must go to the kernel.
#
# An IPv4 forward policy with action block from gen's net to sink's: the
# kernel alone drops the pings (checked before xfib runs); with xfib, the
# same pings arrive nowhere, pass_xfrm counts them, forwarded_v4 stays
# flat, and IPv6 stays XDP-forwarded; status says why. Deleting the policy
# brings IPv4 back to XDP. Then an IPv6 block policy (IPv4 unaffected), an
# IPv4 output policy the kernel forwards by, ip xfrm policy flush, a state
# found by the dump at xfibd's start and ip xfrm state flush, and a
# default forward policy of block (both families).
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

N=10

xfrm() { ip -n "$RTR" xfrm "$@"; }

# xfrm_mode FAMILY: the router's xfrm mode for ipv4 or ipv6 (forward, pass).
xfrm_mode() { rctl status -j | jq -r ".xfrm.ipv$1.mode"; }

# wait_xfrm MODE4 MODE6: xfibd publishes these modes.
wait_xfrm() {
	local deadline=$(($(now_ms) + 5000))
	until [ "$(xfrm_mode 4)" = "$1" ] && [ "$(xfrm_mode 6)" = "$2" ]; do
		(($(now_ms) < deadline)) ||
			fail "xfrm modes $(xfrm_mode 4)/$(xfrm_mode 6), expected $1/$2: $(rctl status -j | jq -c .xfrm)"
		sleep 0.1
	done
	log "xfrm modes: ipv4 $1, ipv6 $2"
}

# blocked FAMILY DST: N pings from gen to DST, none answered, none arrived
# at the sink's kernel; with xfib, none forwarded by it, all counted as
# pass_xfrm.
blocked() {
	local fam=$1 dst=$2 e0 x0 p0 out
	e0=$(icmp_in_echos "$SNK")
	if [ -n "${PIN:-}" ] && [ -d "$PIN" ]; then
		x0=$(counter "forwarded_v$fam")
		p0=$(counter pass_xfrm)
	fi
	out=$(nping "$GEN" "-$fam" -q -c "$N" -i 0.05 -W 0.3 "$dst" 2>&1) || true
	grep -q ' 0 received' <<<"$out" || fail "ping -$fam $dst crossed a block policy: $out"
	[ "$(icmp_in_echos "$SNK")" = "$e0" ] ||
		fail "$(($(icmp_in_echos "$SNK") - e0)) echoes arrived at the sink through a block policy"
	if [ -n "${x0:-}" ]; then
		[ "$(counter "forwarded_v$fam")" = "$x0" ] ||
			fail "xfib forwarded IPv$fam packets a forward policy blocks"
		(($(counter pass_xfrm) - p0 >= N)) ||
			fail "pass_xfrm grew by $(($(counter pass_xfrm) - p0)), expected >= $N"
	fi
	log "ping -$fam $dst: blocked"
}

# by_kernel FAMILY DST: N pings from gen to DST, all answered, forwarded by
# the router's kernel and not by xfib (counted as pass_xfrm).
by_kernel() {
	local fam=$1 dst=$2 x0 k0 p0
	x0=$(counter "forwarded_v$fam")
	k0=$("kfwd$fam" "$RTR")
	p0=$(counter pass_xfrm)
	ping_all "$GEN" "$fam" "$dst" "$N"
	[ "$(counter "forwarded_v$fam")" = "$x0" ] || fail "xfib forwarded IPv$fam with XFRM policies"
	(($("kfwd$fam" "$RTR") - k0 >= 2 * N)) || fail "the kernel did not forward the IPv$fam pings"
	(($(counter pass_xfrm) - p0 >= 2 * N)) ||
		fail "pass_xfrm grew by $(($(counter pass_xfrm) - p0)), expected >= $((2 * N))"
	log "ping -$fam $dst: forwarded by the kernel"
}

# The kernel alone: the forward policy drops the pings.
topo_create 0
PIN_SAVED=$PIN
PIN=
ping_all "$GEN" 4 "$SNK4" 3
xfrm policy add src "$NET4_G.0/24" dst "$NET4_S.0/24" dir fwd action block
blocked 4 "$SNK4"
xfrm policy flush
ping_all "$GEN" 4 "$SNK4" 3
PIN=$PIN_SAVED

xfibd_start
attach_all
resolve_neighbours
expect_xdp 4 "$SNK4"
expect_xdp 6 "$SNK6"
wait_xfrm forward forward
rctl status | grep -qF 'xfrm:        ipv4: forward (no IPsec forward/output policies or states)' ||
	fail "status: $(rctl status | grep -A 1 '^xfrm')"

# IPv4 forward policy, block: IPv4 to the kernel, which drops; IPv6 in XDP.
xfrm policy add src "$NET4_G.0/24" dst "$NET4_S.0/24" dir fwd action block
wait_xfrm pass forward
rctl status | grep -A 1 '^xfrm'
rctl status | grep -qF 'ipv4: to the kernel (IPsec: 1 forward policy)' ||
	fail "status does not say why: $(rctl status | grep -A 1 '^xfrm')"
status_is '.xfrm.ipv4.forward_policies == 1 and .xfrm.ipv4.reason == "1 forward policy"
	and .xfrm.ipv6.forward_policies == 0' || fail "status -j: $(rctl status -j | jq -c .xfrm)"
rctl -j lookup "$SNK4" | jqe '.reason == "pass_xfrm"' >/dev/null ||
	fail "lookup $SNK4: $(rctl -j lookup "$SNK4" | jq -c '{action, reason}')"
blocked 4 "$SNK4"
expect_xdp 6 "$SNK6"

# Deleted: IPv4 back to XDP.
xfrm policy delete src "$NET4_G.0/24" dst "$NET4_S.0/24" dir fwd
wait_xfrm forward forward
expect_xdp 4 "$SNK4"
log "policy deleted: IPv4 XDP-forwarded again"

# IPv6 forward policy, block: IPv6 to the kernel, IPv4 unaffected.
xfrm policy add src "$NET6_G::/64" dst "$NET6_S::/64" dir fwd action block
wait_xfrm forward pass
blocked 6 "$SNK6"
expect_xdp 4 "$SNK4"

# An IPv4 output policy that lets packets out unchanged: the kernel
# forwards by it; then ip xfrm policy flush removes both.
xfrm policy add src "$NET4_G.0/24" dst "$NET4_S.0/24" dir out
wait_xfrm pass pass
status_is '.xfrm.ipv4.output_policies == 1' || fail "status -j: $(rctl status -j | jq -c .xfrm)"
by_kernel 4 "$SNK4"
xfrm policy flush
wait_xfrm forward forward
expect_xdp 4 "$SNK4"
expect_xdp 6 "$SNK6"
log "policy flush: both families XDP-forwarded again"

# A transport-mode IPv4 state (the larval one XFRM_MSG_ALLOCSPI makes:
# this kernel has no ESP to complete it with; and no one is told of it),
# made while xfibd is stopped: its dump at start finds it. ip xfrm state
# flush is announced.
kill "$XFIBD_PID"
wait "$XFIBD_PID" || true
xfrm state allocspi src "$R_SNK4" dst "$SNK4" proto esp mode transport >/dev/null
xfibd_start
wait_xfrm pass forward
status_is '.xfrm.ipv4.states == 1 and .xfrm.ipv6.states == 0' ||
	fail "status -j: $(rctl status -j | jq -c .xfrm)"
rctl status | grep -qF 'ipv4: to the kernel (IPsec: 1 state)' ||
	fail "status: $(rctl status | grep -A 1 '^xfrm')"
by_kernel 4 "$SNK4"
expect_xdp 6 "$SNK6"
# In tunnel mode, without a selector family, it may decrypt to either.
xfrm state allocspi src "$R_SNK4" dst "$SNK4" proto esp mode tunnel >/dev/null
xfrm state delete src "$R_SNK4" dst "$SNK4" proto esp \
	spi "$(xfrm state | awk '/mode transport/ { print $4 }')"
wait_xfrm pass pass
xfrm state flush
wait_xfrm forward forward
expect_xdp 4 "$SNK4"
log "state flush: IPv4 XDP-forwarded again"

# Default forward policy block: every forwarded packet without a policy
# allowing it is dropped, in both families.
if xfrm policy setdefault fwd block 2>/dev/null; then
	wait_xfrm pass pass
	status_is '.xfrm.ipv4.default_forward_block and .xfrm.ipv6.default_forward_block' ||
		fail "status -j: $(rctl status -j | jq -c .xfrm)"
	blocked 4 "$SNK4"
	blocked 6 "$SNK6"
	xfrm policy setdefault fwd accept
	wait_xfrm forward forward
	expect_xdp 4 "$SNK4"
	expect_xdp 6 "$SNK6"
	log "default forward policy block: both families to the kernel"
else
	log "ip xfrm policy setdefault not supported by this iproute2: default policies not tested"
fi
log "PASS"
