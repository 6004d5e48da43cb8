#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The dataplane does not outlive the truth: xfibd (--lease 2) is killed
# with SIGKILL, then, in a second round, stopped with SIGSTOP, under a
# steady stream to a route; the route is then moved to another sink, and
# later deleted, in the kernel. After the lease:
#
# - every packet follows the kernel: the moved route's echoes reach the
#   new sink, none the old one, xfib forwards nothing, and pass_stale
#   counts them; once the route is deleted no sink gets an echo;
# - status says the lease expired (text and -j), lookup says pass_stale,
#   verify defers every address to the kernel and says why;
# - a daemon back in sync (a new one after the kill, the stopped one on
#   SIGCONT) takes over: XDP forwards again, following the kernel.
#
# Then SIGTERM (what the service's "keep" stop sends): the lease is renewed
# on the way out, XDP forwards for the lease, then the kernel takes over.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

LEASE=2
topo_create 0
topo_add_sink2
xfibd_start_ns "$RTR" "$PIN" "$XFIBD_LOG" --lease "$LEASE"
attach_all
resolve_neighbours
expect_xdp 4 "$SNK4"
expect_xdp 6 "$SNK6"
expect_xdp 4 "$SNK2_4" 3000 "$SNK2"
expect_xdp 6 "$SNK2_6" 3000 "$SNK2"

# The destination, on both sinks' loopbacks: whichever the route names
# answers.
n=$((16 * TOPO_ID + 9))
D4="198.19.$n.1" D6="2001:db8:f$n::1"
for ns in "$SNK" "$SNK2"; do
	ip -n "$ns" addr add "$D4/32" dev lo
	ip -n "$ns" addr add "$D6/128" dev lo nodad
done
route() { # route add|replace|del SINK_ADDR4 SINK_ADDR6
	ip -n "$RTR" route "$1" "198.19.$n.0/24" ${2:+via "$2"}
	ip -n "$RTR" -6 route "$1" "2001:db8:f$n::/64" ${3:+via "$3"}
}
route add "$SNK4" "$SNK6"
expect_xdp 4 "$D4" 3000 "$SNK"
expect_xdp 6 "$D6" 3000 "$SNK"

lease_valid() { status_is '.lease.valid == true and .lease.seconds == '"$LEASE"; }
lease_valid || fail "lease not valid with xfibd running: $(rctl status -j | jq -c .lease)"

# window WHAT [CMD...]: counters over one second of the streams, or over
# CMD (echoes received by each sink, xfib and kernel forwarding,
# pass_stale).
window() {
	local what=$1 e1 e2 st
	shift
	e1=$(icmp_in_echos "$SNK") e2=$(icmp_in_echos "$SNK2") st=$(counter pass_stale)
	snapshot
	if [ $# -gt 0 ]; then "$@"; else sleep 1; fi
	deltas
	W_SNK=$(($(icmp_in_echos "$SNK") - e1))
	W_SNK2=$(($(icmp_in_echos "$SNK2") - e2))
	W_STALE=$(($(counter pass_stale) - st))
	log "$what: echoes at sink +$W_SNK, at sink2 +$W_SNK2, pass_stale +$W_STALE"
}

# single_echoes N: N echoes from gen to the destination in each family,
# one ping each.
single_echoes() {
	local i
	for ((i = 0; i < $1; i++)); do
		nping "$GEN" -4 -c 1 -W 0.2 "$D4" >/dev/null 2>&1 || true
		nping "$GEN" -6 -c 1 -W 0.2 "$D6" >/dev/null 2>&1 || true
	done
}

# stale_round SIGNAL: the daemon stops renewing; the route moves, then
# goes; every packet follows the kernel after the lease.
stale_round() {
	local sig=$1 pid=$XFIBD_PID
	stream_start "s4$sig" 4 "$D4" -i 0.02 -w 12
	stream_start "s6$sig" 6 "$D6" -i 0.02 -w 12
	sleep 0.5
	log "SIG$sig xfibd (pid $pid), then the route moves to sink2"
	kill -"$sig" "$pid"
	[ "$sig" != KILL ] || wait "$pid" 2>/dev/null || true
	route replace "$SNK2_4" "$SNK2_6"
	# The lease (renewed at most a quarter of it before the signal),
	# plus the coarse clock's tick.
	sleep $((LEASE + 1))
	window "SIG$sig, route moved, lease over"
	((D_X4 == 0 && D_X6 == 0)) ||
		fail "SIG$sig: xfib still forwarded v4 +$D_X4 v6 +$D_X6 after the lease"
	((W_SNK == 0)) || fail "SIG$sig: $W_SNK echoes still reached the old nexthop after the lease"
	((W_SNK2 >= 80 && D_K4 >= 40 && D_K6 >= 40)) ||
		fail "SIG$sig: the kernel did not take the moved route: sink2 +$W_SNK2, kernel v4 +$D_K4 v6 +$D_K6"
	((W_STALE >= 80)) || fail "SIG$sig: pass_stale grew by $W_STALE, expected >= 80 ($(stats_line))"
	status_is '.lease.valid == false and .lease.expired_ms > 0' ||
		fail "SIG$sig: status -j does not say the lease expired: $(rctl status -j | jq -c .lease)"
	rctl status | grep -q '^lease: .*expired .* ago: every packet goes to the kernel (pass_stale)' ||
		fail "SIG$sig: status text: $(rctl status | grep '^lease:')"
	lookup_is "$D4" '.reason == "pass_stale"' ||
		fail "SIG$sig: lookup $D4: $(rctl -j lookup "$D4" | jq -c '{action, reason}')"
	# verify: the tables still hold the old nexthop, but no packet
	# follows them: every address is deferred to the kernel, as stale.
	v=$(rctl -j verify 2>"$XFIB_TMP/verify.err") ||
		fail "SIG$sig: verify failed with the lease expired: $(cat "$XFIB_TMP/verify.err") $v"
	jq -e '.stale > 0 and .stale == .ipv4.checked + .ipv6.checked and
		.ipv4.deferred == .ipv4.checked and .ipv6.deferred == .ipv6.checked' <<<"$v" >/dev/null ||
		fail "SIG$sig: verify does not defer every address as stale: $(jq -c 'del(.mismatches)' <<<"$v")"
	grep -q "lease has expired" "$XFIB_TMP/verify.err" ||
		fail "SIG$sig: verify did not say the lease expired: $(cat "$XFIB_TMP/verify.err")"

	log "the route is deleted"
	stream_stop "s4$sig"
	stream_stop "s6$sig"
	route del
	# ping slows down once echoes come back as unreachable: single
	# echoes, each answered at once by the router's kernel.
	window "SIG$sig, route deleted" single_echoes 15
	((D_X4 == 0 && D_X6 == 0 && W_SNK == 0 && W_SNK2 == 0)) ||
		fail "SIG$sig: a deleted route still forwarded: xfib v4 +$D_X4 v6 +$D_X6, sink +$W_SNK, sink2 +$W_SNK2"
	((W_STALE >= 25)) || fail "SIG$sig: pass_stale grew by $W_STALE after the delete, 30 echoes sent"
}

# back_in_sync WHAT: the route (re-added via sink2) is XDP-forwarded to
# sink2 by a daemon whose lease runs.
back_in_sync() {
	route add "$SNK2_4" "$SNK2_6"
	wait_until 10 lease_valid || fail "$1: lease not renewed: $(rctl status -j | jq -c .lease)"
	expect_xdp 4 "$D4" 3000 "$SNK2"
	expect_xdp 6 "$D6" 3000 "$SNK2"
	log "$1: XDP forwards again, following the kernel"
}

stale_round KILL
xfibd_start_ns "$RTR" "$PIN" "$XFIBD_LOG" --lease "$LEASE"
back_in_sync "new xfibd after kill -9"

route replace "$SNK4" "$SNK6"
expect_xdp 4 "$D4" 3000 "$SNK"
stale_round STOP
# Back from SIGSTOP, the daemon reads what it missed (the route moved and
# deleted) before it renews.
kill -CONT "$XFIBD_PID"
back_in_sync "xfibd after SIGCONT"

# SIGTERM (the service's stop): the daemon renews on its way out, for a
# successor, so XDP forwards for the lease, and then the kernel. A lease
# of 6 s leaves room for the checks made within it.
kill -TERM "$XFIBD_PID"
wait "$XFIBD_PID" 2>/dev/null || true
LEASE=6
xfibd_start_ns "$RTR" "$PIN" "$XFIBD_LOG" --lease "$LEASE"
wait_until 10 lease_valid || fail "lease of $LEASE s not given: $(rctl status -j | jq -c .lease)"
stream_start term4 4 "$D4" -i 0.02 -w 16
stream_start term6 6 "$D6" -i 0.02 -w 16
sleep 0.5
kill -TERM "$XFIBD_PID"
wait "$XFIBD_PID" 2>/dev/null || true
grep -q "keeps forwarding for the $LEASE s lease" "$XFIBD_LOG" ||
	fail "xfibd did not say it left a lease: $(tail -n 3 "$XFIBD_LOG")"
status_is '.daemon.running == false and .lease.valid == true and .lease.left_ms > 3000' ||
	fail "SIGTERM: the lease was not renewed on the way out: $(rctl status -j | jq -c .lease)"
window "SIGTERM, within the lease"
forwarded_by xdp 40 "SIGTERM, within the lease"
((W_STALE == 0)) || fail "SIGTERM: pass_stale grew by $W_STALE within the lease"
wait_until 10 status_is '.lease.valid == false' || fail "SIGTERM: the lease did not run out"
window "SIGTERM, lease over"
forwarded_by kernel 40 "SIGTERM, lease over"
((W_STALE >= 80)) || fail "SIGTERM: pass_stale grew by $W_STALE after the lease"
stream_stop term4
stream_stop term6

log "PASS: after the lease every packet follows the kernel (kill -9, SIGSTOP, SIGTERM); a daemon back in sync takes over"
