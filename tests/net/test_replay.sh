#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Route and nexthop scenarios replayed against the mirror, in the manner
# of the kernel's own selftests (fib_tests.sh, fib_nexthops.sh), with
# `xfibctl verify` after every configuration step: routes added,
# replaced, changed, appended, prepended and deleted; metrics, MTUs,
# types (blackhole, unreachable, prohibit, throw); nested prefixes and
# default routes; IPv4 multipath and IPv6 siblings; TOS routes; IPv4 via
# IPv6 gateways; duplicate routes of one key; addresses shared by ports,
# with metrics, primaries and secondaries; links going down and up,
# losing carrier, with ignore_routes_with_linkdown; expiring IPv6
# routes; policy rules; nexthop objects and groups (single, blackhole,
# device-only, IPv6, mixed families, resilient, fdb), replaced, deleted
# under their routes, flushed by their device; resyncs in between.
#
# Each step is one `ip` command whose outcome (accepted or refused by the
# kernel) is part of the scenario. After it, verify must find no
# mismatch: it is polled until the mirror has caught up (a change takes
# milliseconds, a resync after a link comes up at most a second or so),
# and a mismatch that lasts 5 s fails the test. The summary counts the
# steps, the destinations checked and how many of them xfib answered
# itself rather than handing them to the kernel.
#
# The router's extra ports va, vb, vc, vd are veth pairs whose other ends
# stay in the router namespace; nothing is sent through them: verify
# compares the dataplane's tables with the kernel's answers.
# run.sh: long
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

topo_create 0
PORTS="va vb vc vd"
n=201
for p in $PORTS; do
	ip -n "$RTR" link add "$p" type veth peer name "$p-p"
	ip -n "$RTR" link set "$p-p" up
	ip -n "$RTR" link set "$p" up
	router_sysctls "$RTR" "$p"
	if [ "$p" != vd ]; then
		ip -n "$RTR" addr add "198.18.$n.1/24" dev "$p"
		ip -n "$RTR" addr add "2001:db8:$n::1/64" dev "$p" nodad
	fi
	n=$((n + 1))
done
ip netns exec "$RTR" sysctl -qw net.ipv6.route.gc_interval=2
wait_ipv6_ready "$RTR"
xfibd_start
attach_all

STEPS=0 NSCEN=0 SCEN="" WAITED=0 CHECKED=0 MATCHED=0 DEFERRED=0
T0=$SECONDS

scenario() {
	SCEN=$1
	NSCEN=$((NSCEN + 1))
	log "scenario $NSCEN: $SCEN (after $STEPS steps)"
}

# check WHAT: verify finds no mismatch, polled until the mirror caught up.
# REPLAY_KEEP_GOING=1 counts the steps that fail instead of stopping at
# the first (to survey a build).
BAD=0
check() {
	local out rc t0 re='([0-9]+) checked, ([0-9]+) matched, ([0-9]+) deferred'
	t0=$(now_ms)
	while :; do
		rc=0
		out=$(rctl verify --random 100 2>&1) || rc=$?
		[ "$rc" -eq 0 ] && break
		[ "$rc" -eq 1 ] || fail "step $STEPS ($SCEN: $1): verify exited $rc: $out"
		if (($(now_ms) - t0 >= 5000)); then
			[ "${REPLAY_KEEP_GOING:-0}" = 1 ] ||
				fail "step $STEPS ($SCEN: $1): $(grep -m 5 '^mismatch' <<<"$out" | tr '\n' ';')"
			log "MISMATCH at step $STEPS ($SCEN: $1): $(grep -m 1 '^mismatch' <<<"$out")"
			BAD=$((BAD + 1))
			break
		fi
		WAITED=$((WAITED + 1))
		sleep 0.1
	done
	while read -r line; do
		[[ $line =~ $re ]] || continue
		CHECKED=$((CHECKED + BASH_REMATCH[1]))
		MATCHED=$((MATCHED + BASH_REMATCH[2]))
		DEFERRED=$((DEFERRED + BASH_REMATCH[3]))
	done <<<"$out"
}

# s ARGS...: a step the kernel accepts (ip -n ROUTER ARGS...).
s() {
	STEPS=$((STEPS + 1))
	ip -n "$RTR" "$@" >/dev/null 2>"$XFIB_TMP/step.err" ||
		fail "step $STEPS ($SCEN): ip $* refused: $(cat "$XFIB_TMP/step.err")"
	check "ip $*"
}

# t ARGS...: a step the kernel may accept or refuse (seeded random
# changes): whatever it did, the mirror must follow.
T_OK=0
t() {
	STEPS=$((STEPS + 1))
	if ip -n "$RTR" "$@" >/dev/null 2>&1; then
		T_OK=$((T_OK + 1))
	fi
	check "ip $* (either way)"
}

# e ARGS...: a step the kernel refuses; the mirror must not change.
e() {
	STEPS=$((STEPS + 1))
	! ip -n "$RTR" "$@" >/dev/null 2>&1 || fail "step $STEPS ($SCEN): ip $* was accepted"
	check "ip $* (refused)"
}

# sx SYSCTL=VALUE...: a step that sets the router's sysctls.
sx() {
	STEPS=$((STEPS + 1))
	ip netns exec "$RTR" sysctl -qw "$@" || fail "step $STEPS ($SCEN): sysctl $*"
	check "sysctl $*"
}

# port_up P N: P up again with its IPv6 address (the kernel drops it
# when a port goes down), two steps.
port_up() {
	s link set "$1" up
	s -6 addr replace "2001:db8:$2::1/64" dev "$1" nodad
}

# kernel_leaves_via ADDR GW: waits until the kernel's route to ADDR
# leaves via GW (an expiring route ended).
kernel_leaves_via() {
	local deadline=$((SECONDS + 10))
	until ip -n "$RTR" route get "$1" 2>/dev/null | grep -q "via $2 "; do
		((SECONDS < deadline)) || fail "$SCEN: the kernel's route to $1 never left via $2"
		sleep 0.05
	done
	check "after expiry of the route to $1"
}

# The scenarios, one function each.
# shellcheck source=tests/net/replay/v4.sh
. "$(dirname "$0")/replay/v4.sh"
# shellcheck source=tests/net/replay/v6.sh
. "$(dirname "$0")/replay/v6.sh"
# shellcheck source=tests/net/replay/nh.sh
. "$(dirname "$0")/replay/nh.sh"

for f in $REPLAY_V4 $REPLAY_V6 $REPLAY_NH; do
	"$f"
done

log "$NSCEN scenarios, $STEPS steps in $((SECONDS - T0)) s; verify checked $CHECKED destinations: $MATCHED answered by xfib, $DEFERRED handed to the kernel; $WAITED verify runs waited for the mirror"
((BAD == 0)) || fail "$BAD steps left a mismatch"
((STEPS >= 300)) || fail "only $STEPS steps"
((MATCHED > DEFERRED)) || fail "xfib answered only $MATCHED of $CHECKED destinations itself"
log "PASS: every step of every scenario verified clean"
