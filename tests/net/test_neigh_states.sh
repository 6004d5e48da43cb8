#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Neighbour states, with real packets. The router's entry for the sink is
# put in each state; xfib must forward (XDP) exactly when the kernel would
# transmit to the cached address:
#
# - REACHABLE, STALE, DELAY, PROBE (IPv4: the sink stops answering ARP so
#   the probing lasts) and PERMANENT: forwarded by XDP;
# - INCOMPLETE and FAILED: the packet goes to the kernel (pass_neigh);
# - unresolved (no entry): the first packet goes to the kernel, which
#   resolves the neighbour, and its MAC reaches the dataplane: measured
#   from the REACHABLE notification (ip monitor) to the dataplane entry
#   turning valid, per family, asserted under 1 s;
# - STALE while only XDP carries the traffic: the kernel never sends to the
#   neighbour itself, so xfibd must tell it the entry is in use; the kernel
#   then re-probes and confirms it (REACHABLE), and when the sink has
#   silently changed its MAC, the probes fail, the kernel resolves again
#   and the traffic follows the new MAC, as it would through the kernel.
# run.sh: long
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init
command -v python3 >/dev/null 2>&1 || skip "missing tool: python3 (scripts/install-deps.sh)"

topo_up
R_SNK_IDX=$(ip -n "$RTR" -j link show dev "$R_SNK" | jq '.[0].ifindex')
# The sink never asks for the router's address: its ARP requests and
# neighbour solicitations would hand the router a STALE entry for the sink
# behind the test's back (the kernel learns the sender of a request).
ip -n "$SNK" neigh replace "$R_SNK4" lladdr "$R_SNK_MAC" dev "$SNK_IF" nud permanent
ip -n "$SNK" neigh replace "$R_SNK6" lladdr "$R_SNK_MAC" dev "$SNK_IF" nud permanent

# kstate ADDR: the router kernel's state for its neighbour ADDR on R_SNK.
kstate() {
	ip -n "$RTR" -j neigh show to "$1" dev "$R_SNK" | jq -r '.[0].state[0] // "NONE"'
}

# set_state ADDR STATE: the router's entry for ADDR, with the sink's MAC.
set_state() {
	ip -n "$RTR" neigh replace "$1" lladdr "$SNK_MAC" dev "$R_SNK" nud "$2" ||
		fail "ip neigh replace $1 nud $2"
}

fam_of() { [[ $1 == *:* ]] && echo 6 || echo 4; }

# usable ADDR STATE: the kernel's entry is in STATE, the dataplane's
# neighbour is valid and a ping is XDP-forwarded to the sink.
usable() {
	local addr=$1 want=$2 f s
	f=$(fam_of "$addr")
	wait_lookup "$addr" '.neighbour.state == "valid" and .action == "forward"'
	expect_xdp "$f" "$addr" 3000 "$SNK"
	s=$(kstate "$addr")
	log "$addr: kernel state $s after the ping (set $want)"
}

# not_usable ADDR STATE: the entry is in STATE and the dataplane leaves
# one echo to the kernel (pass_neigh +1); xfib forwards at most the reply.
not_usable() {
	local addr=$1 want=$2 f s pn0 pn1 x0 x1 ok=0
	f=$(fam_of "$addr")
	s=$(kstate "$addr")
	[ "$s" = "$want" ] || fail "$addr: kernel state $s, expected $want"
	wait_lookup "$addr" '.action == "pass" and .reason == "pass_neigh"'
	pn0=$(counter pass_neigh)
	x0=$(counter "forwarded_v$f")
	nping "$GEN" "-$f" -c 1 "$addr" >/dev/null 2>&1 && ok=1
	pn1=$(counter pass_neigh)
	x1=$(counter "forwarded_v$f")
	(((pn1 - pn0) == 1)) || fail "$addr in $want: pass_neigh +$((pn1 - pn0)) for one echo"
	(((x1 - x0) == ok)) || fail "$addr in $want: xfib forwarded +$((x1 - x0)), the echo answered: $ok"
	log "$addr in $want: echo passed to the kernel (answered: $ok)"
}

for a in "$SNK4" "$SNK6"; do
	log "== $a"
	for st in reachable permanent stale; do
		set_state "$a" "$st"
		usable "$a" "$st"
	done
	# DELAY: a STALE entry the kernel is told is in use waits
	# delay_first_probe_time (5 s) before probing.
	set_state "$a" stale
	ip -n "$RTR" neigh change "$a" dev "$R_SNK" use
	s=$(kstate "$a")
	[ "$s" = DELAY ] || fail "$a: kernel state $s after 'use' on a stale entry, expected DELAY"
	usable "$a" delay
	for st in failed incomplete; do
		set_state "$a" "$st"
		not_usable "$a" "${st^^}"
	done
	# The kernel resolves again (the entry may be stuck in a manually set
	# INCOMPLETE: start afresh).
	ip -n "$RTR" neigh del "$a" dev "$R_SNK" 2>/dev/null || true
	expect_xdp "$(fam_of "$a")" "$a" 5000 "$SNK"
done

# PROBE, IPv4: the sink ignores ARP, so the router's unicast probes go
# unanswered for ucast_probes x retrans_time (20 s here).
log "== $SNK4 PROBE"
ip netns exec "$SNK" sysctl -qw net.ipv4.conf.all.arp_ignore=8
ip -n "$RTR" ntable change name arp_cache dev "$R_SNK" delay_probe 100 ucast_probes 20 retrans 1000
set_state "$SNK4" stale
ip -n "$RTR" neigh change "$SNK4" dev "$R_SNK" use
deadline=$((SECONDS + 10))
until [ "$(kstate "$SNK4")" = PROBE ]; do
	((SECONDS < deadline)) || fail "$SNK4: kernel state $(kstate "$SNK4"), expected PROBE"
	sleep 0.05
done
usable "$SNK4" probe
[ "$(kstate "$SNK4")" = PROBE ] || fail "$SNK4 left PROBE during the test ($(kstate "$SNK4")): cannot tell"
# The next probe is answered. (The default probe count only afterwards:
# restored now, the probes already sent would exceed it: FAILED.)
ip netns exec "$SNK" sysctl -qw net.ipv4.conf.all.arp_ignore=0
deadline=$((SECONDS + 10))
until [ "$(kstate "$SNK4")" = REACHABLE ]; do
	((SECONDS < deadline)) || fail "$SNK4: not REACHABLE once the sink answers ARP again ($(kstate "$SNK4"))"
	sleep 0.1
done
ip -n "$RTR" ntable change name arp_cache dev "$R_SNK" delay_probe 5000 ucast_probes 3 retrans 1000

# ---- unresolved -> resolved: how long until the dataplane has the MAC ----

# resolution_latency ADDR: with no neighbour entry, one ping: the kernel
# resolves. LAT_MS: milliseconds from the REACHABLE notification, as ip
# monitor received it, to the dataplane entry being valid (ip monitor and
# xfibd receive the same notification: under load either may be scheduled
# first, so it can come out slightly negative). LAT_SEND_MS: from sending
# the first echo, so including the kernel's ARP/ND exchange.
resolution_latency() {
	local a=$1 f mon out t_reach t_valid t_send x0 x1
	f=$(fam_of "$a")
	mon="$XFIB_TMP/monitor.$f" out="$XFIB_TMP/valid.$f"
	ip -n "$RTR" neigh del "$a" dev "$R_SNK" 2>/dev/null || true
	wait_lookup "$a" '.reason == "pass_neigh"'
	ip -n "$RTR" -ts monitor neigh >"$mon" 2>&1 &
	local mpid=$!
	XFIB_PIDS+=("$mpid")
	python3 "$XFIB_TOP/tests/lib/neigh_poll.py" "$PIN" "$R_SNK_IDX" "$a" 20 >"$out" &
	local ppid=$!
	XFIB_PIDS+=("$ppid")
	local deadline=$((SECONDS + 20))
	until grep -q ready "$out" 2>/dev/null; do
		kill -0 "$ppid" 2>/dev/null || fail "neigh_poll.py $a: $(cat "$out")"
		((SECONDS < deadline)) || fail "neigh_poll.py did not start"
		sleep 0.05
	done
	# ip monitor is listening once it has been running a moment.
	sleep 0.2
	x0=$(counter pass_neigh)
	t_send=$(date +%s.%N)
	nping "$GEN" "-$f" -c 1 -W 3 "$a" >/dev/null 2>&1 || fail "first echo to unresolved $a not answered"
	x1=$(counter pass_neigh)
	(((x1 - x0) >= 1)) || fail "first echo to unresolved $a not passed to the kernel (pass_neigh +$((x1 - x0)))"
	wait "$ppid" || fail "$a: dataplane neighbour never valid after resolution"
	kill "$mpid" 2>/dev/null || true
	wait "$mpid" 2>/dev/null || true
	t_reach=$(grep -m1 -F " $a dev $R_SNK lladdr " "$mon" | grep ' REACHABLE' |
		sed -n 's/^\[\([^]]*\)\].*/\1/p')
	[ -n "$t_reach" ] || fail "no REACHABLE notification for $a: $(cat "$mon")"
	t_reach=$(date -d "$t_reach" +%s.%N)
	t_valid=$(sed -n 2p "$out")
	LAT_MS=$(awk -v a="$t_reach" -v b="$t_valid" 'BEGIN { printf "%.1f", (b - a) * 1000 }')
	LAT_SEND_MS=$(awk -v a="$t_send" -v b="$t_valid" 'BEGIN { printf "%.1f", (b - a) * 1000 }')
}

for a in "$SNK4" "$SNK6"; do
	resolution_latency "$a"
	log "neighbour resolution latency $a: REACHABLE notification -> dataplane valid: $LAT_MS ms; first packet sent -> valid: $LAT_SEND_MS ms"
	awk -v ms="$LAT_MS" 'BEGIN { exit !(ms < 1000) }' || fail "$a: resolved MAC reached the dataplane $LAT_MS ms after REACHABLE (> 1 s)"
	awk -v ms="$LAT_SEND_MS" 'BEGIN { exit !(ms < 1000) }' || fail "$a: resolved MAC reached the dataplane $LAT_SEND_MS ms after the first packet (> 1 s)"
	expect_xdp "$(fam_of "$a")" "$a" 3000 "$SNK"
done

# ---- STALE under XDP-only traffic ------------------------------------------

for a in "$SNK4" "$SNK6"; do
	f=$(fam_of "$a")
	log "== $a STALE, traffic only through XDP"
	set_state "$a" stale
	snapshot
	stream_start stale "$f" "$a" -i 0.05 -w 12
	t0=$SECONDS
	until [ "$(kstate "$a")" = REACHABLE ]; do
		((SECONDS - t0 < 12)) || fail "$a stayed $(kstate "$a") under XDP traffic: the kernel was never told the neighbour is in use"
		sleep 0.1
	done
	log "$a: kernel re-probed and confirmed the neighbour after $((SECONDS - t0)) s"
	stream_stop stale
	deltas
	((D_K4 == 0 && D_K6 == 0)) || fail "$a: the stream went through the router kernel"

	log "== $a STALE, the sink silently changed its MAC"
	OLD_MAC=$SNK_MAC
	set_state "$a" stale
	NEW_MAC=02:00:5e:10:00:0$f
	ip -n "$SNK" link set dev "$SNK_IF" address "$NEW_MAC"
	SNK_MAC=$NEW_MAC
	# The old entry is what the dataplane uses now: frames to the old MAC
	# are dropped by the sink, as they would be through the kernel.
	stream_start mac "$f" "$a" -i 0.05 -w 25
	t0=$SECONDS
	until ip -n "$RTR" -j neigh show to "$a" dev "$R_SNK" |
		jqe --arg m "$NEW_MAC" '.[0].lladdr == $m and .[0].state[0] == "REACHABLE"' >/dev/null; do
		((SECONDS - t0 < 25)) || fail "$a: the router still has $(ip -n "$RTR" neigh show to "$a" dev "$R_SNK") after the sink's MAC changed"
		sleep 0.1
	done
	log "$a: new MAC $NEW_MAC learnt $((SECONDS - t0)) s after the change (was $OLD_MAC)"
	stream_stop mac
	lookup_is "$a" ".neighbour.dst_mac == \"$NEW_MAC\" and .action == \"forward\"" ||
		fail "$a: dataplane neighbour $(rctl -j lookup "$a" | jq -c .neighbour)"
	expect_xdp "$f" "$a" 3000 "$SNK"
done

log "PASS: neighbour states as the kernel uses them; resolution reaches the dataplane in ms; stale neighbours re-probed"
