#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The multipath flow hash is seeded per router (polarisation). Two xfib
# routers in series, each with a 4-way multipath route:
#
#   gen -- r1 ==(4 paths: 1 to r2, 3 to sinka)
#                r2 ==(4 paths: 4 links to sinkb)
#
# r2 gets the flows r1 hashed to its member. With one seed on both
# routers, r2 hashes them alike and sends all of them down one of its
# four paths; with each router's own seed every path of r2 carries
# traffic. Also: a seed drawn at random at the first start (status says
# so, the two routers' differ), kept across a restart; --hash-seed sets
# it.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

FLOWS=256
PKTS=2
flows_py="$XFIB_TOP/tests/lib/flows.py"
T="$XFIB_TAG-hs"
GEN="$T-gen" R1="$T-r1" R2="$T-r2" SA="$T-sinka" SB="$T-sinkb"
for ns in "$GEN" "$R1" "$R2" "$SA" "$SB"; do add_ns "$ns"; done
P1="/sys/fs/bpf/xfib-test-$$-hs1" P2="/sys/fs/bpf/xfib-test-$$-hs2"
XFIB_PIN_DIRS+=("$P1" "$P2")
LOG1="$XFIB_TMP/xfibd-r1.log" LOG2="$XFIB_TMP/xfibd-r2.log"

# Addresses: 198.18.80.0/24 gen-r1, .81 r1-r2, .82 r1-sinka (sinka .2-.4),
# .90-.93 r2-sinkb; the flows go to 198.19.80.1, on sinka and sinkb.
link_ns "$GEN" g0 "$R1" r1-gen
link_ns "$R1" r1-r2 "$R2" r2-r1
link_ns "$R1" r1-a "$SA" a0
ip -n "$GEN" addr add 198.18.80.2/24 dev g0
ip -n "$GEN" route add default via 198.18.80.1
ip -n "$R1" addr add 198.18.80.1/24 dev r1-gen
ip -n "$R1" addr add 198.18.81.1/24 dev r1-r2
ip -n "$R2" addr add 198.18.81.2/24 dev r2-r1
ip -n "$R1" addr add 198.18.82.1/24 dev r1-a
for h in 2 3 4; do ip -n "$SA" addr add "198.18.82.$h/24" dev a0; done
ip netns exec "$SA" ethtool -K a0 gro on >/dev/null
R2_PORTS=(r2-r1)
for i in 0 1 2 3; do
	link_ns "$R2" "r2-b$i" "$SB" "b$i"
	ip -n "$R2" addr add "198.18.9$i.1/24" dev "r2-b$i"
	ip -n "$SB" addr add "198.18.9$i.2/24" dev "b$i"
	ip netns exec "$SB" ethtool -K "b$i" gro on >/dev/null
	R2_PORTS+=("r2-b$i")
done
for ns in "$SA" "$SB"; do
	ip -n "$ns" addr add 198.19.80.1/32 dev lo
	ip netns exec "$ns" sysctl -qw net.ipv4.conf.all.rp_filter=0
done
router_sysctls "$R1" r1-gen r1-r2 r1-a
router_sysctls "$R2" "${R2_PORTS[@]}"
ip -n "$R1" route add 198.19.80.0/24 nexthop via 198.18.81.2 \
	nexthop via 198.18.82.2 nexthop via 198.18.82.3 nexthop via 198.18.82.4
ip -n "$R2" route add 198.19.80.0/24 nexthop via 198.18.90.2 \
	nexthop via 198.18.91.2 nexthop via 198.18.92.2 nexthop via 198.18.93.2
ip -n "$R2" route add 198.18.80.0/24 via 198.18.81.1

# Every gateway resolved, so the routers forward in XDP from the start.
for a in 198.18.81.2 198.18.82.2 198.18.82.3 198.18.82.4; do
	ip netns exec "$R1" ping -c 1 -W 1 "$a" >/dev/null || fail "r1 cannot reach $a"
done
for i in 0 1 2 3; do
	ip netns exec "$R2" ping -c 1 -W 1 "198.18.9$i.2" >/dev/null || fail "r2 cannot reach 198.18.9$i.2"
done
ip netns exec "$GEN" ping -c 1 -W 1 198.18.80.1 >/dev/null || fail "gen cannot reach r1"
hosts_fill_checksums "$GEN:g0"

ip netns exec "$GEN" ethtool -K g0 gro on >/dev/null
# r2 first: r1's port to it takes redirected frames once r2's has XDP.
in_ns "$R2" "$XFIBCTL" --pin-dir "$P2" attach "${R2_PORTS[@]}" >/dev/null || fail "attach on r2"
in_ns "$R1" "$XFIBCTL" --pin-dir "$P1" attach r1-gen r1-r2 r1-a >/dev/null || fail "attach on r1"

# routers ARGS...: (re)starts both xfibd with ARGS.
PID1="" PID2=""
routers() {
	local p
	for p in $PID1 $PID2; do
		kill -TERM "$p"
		wait "$p" 2>/dev/null || true
	done
	xfibd_start_ns "$R1" "$P1" "$LOG1" "$@"
	PID1=$XFIBD_PID
	xfibd_start_ns "$R2" "$P2" "$LOG2" "$@"
	PID2=$XFIBD_PID
}

seed_of() { xctl "$1" "$2" status -j | jq -r '.hash_seed | "\(.seed) \(.origin)"'; }

# rx_b: sinkb's received packets per path, on one line.
rx_b() {
	local i
	for i in 0 1 2 3; do
		ip -n "$SB" -s -j link show dev "b$i" | jq -r '.[0].stats64.rx.packets'
	done | tr '\n' ' '
}

# send WHAT: the flows from gen; sets PATHS to the datagrams each of r2's
# paths carried and USED to the number of paths that carried 10 or more.
send() {
	local before after i b a k0 k1
	read -ra before <<<"$(rx_b)"
	k0=$(($(kfwd4 "$R1") + $(kfwd4 "$R2")))
	ip netns exec "$GEN" python3 "$flows_py" send 198.19.80.1 "$FLOWS" "$PKTS"
	sleep 0.5
	read -ra after <<<"$(rx_b)"
	k1=$(($(kfwd4 "$R1") + $(kfwd4 "$R2")))
	PATHS="" USED=0 TOTAL=0
	for i in 0 1 2 3; do
		b=${before[$i]} a=${after[$i]}
		PATHS="$PATHS $((a - b))"
		TOTAL=$((TOTAL + a - b))
		((a - b < 10)) || USED=$((USED + 1))
	done
	log "$1: r2's paths carried$PATHS datagrams ($USED of 4 used)"
	# r2 got about a quarter of the flows, and the routers' kernels
	# forwarded none of them: XDP did.
	((TOTAL >= FLOWS * PKTS / 8)) || fail "$1: r2 forwarded only $TOTAL datagrams"
	((k1 == k0)) || fail "$1: the routers' kernels forwarded $((k1 - k0)) packets"
}

# ---- each router its own seed, drawn at the first start -----------------
routers
read -r s1 o1 <<<"$(seed_of "$R1" "$P1")"
read -r s2 o2 <<<"$(seed_of "$R2" "$P2")"
[ "$o1" = random ] && [ "$o2" = random ] || fail "seeds not drawn at random: r1 $o1, r2 $o2"
[ "$s1" != "$s2" ] || fail "both routers drew seed $s1"
grep -q "flow hash seed .* drawn at random" "$LOG1" || fail "r1 did not log its seed"
xctl "$R1" "$P1" status | grep -q "^ecmp hash:   seed 0x[0-9a-f]\{8\} (drawn at random at the first start)$" ||
	fail "status text: $(xctl "$R1" "$P1" status | grep '^ecmp')"
send "own seeds"
((USED == 4)) || fail "with their own seeds, r2 used $USED of its 4 paths:$PATHS"

# Kept across a restart: the same seeds, the same split.
routers
[ "$(seed_of "$R1" "$P1")" = "$s1 random" ] || fail "r1's seed changed across a restart: $(seed_of "$R1" "$P1")"
[ "$(seed_of "$R2" "$P2")" = "$s2 random" ] || fail "r2's seed changed across a restart: $(seed_of "$R2" "$P2")"
read -ra own <<<"$PATHS"
send "own seeds, after a restart"
read -ra now <<<"$PATHS"
# The same flows on each path: the counts agree but for a few frames of
# the hosts' own (neighbour discovery).
for i in 0 1 2 3; do
	d=$((now[i] - own[i]))
	((d >= -3 && d <= 3)) || fail "flows changed paths across a restart: ${own[*]} -> ${now[*]}"
done

# ---- one seed for both: polarised -----------------------------------------
routers --hash-seed 7
[ "$(seed_of "$R1" "$P1")" = "7 set" ] && [ "$(seed_of "$R2" "$P2")" = "7 set" ] ||
	fail "--hash-seed 7 not applied: r1 $(seed_of "$R1" "$P1"), r2 $(seed_of "$R2" "$P2")"
send "one seed for both"
((USED == 1)) || fail "with one seed for both routers, r2 used $USED paths (the premise: 1):$PATHS"

# ---- set apart by hand ---------------------------------------------------
kill -TERM "$PID2"
wait "$PID2" 2>/dev/null || true
xfibd_start_ns "$R2" "$P2" "$LOG2" --hash-seed 0x5eed
PID2=$XFIBD_PID
send "seeds 7 and 0x5eed"
((USED == 4)) || fail "with seeds 7 and 0x5eed, r2 used $USED of its 4 paths:$PATHS"

log "PASS: per-router seeds use every second-tier path; one seed for both polarises; seeds drawn, kept, set"
