#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Routes with a lifetime (ip -6 route ... expires N, router
# advertisements). The kernel stops using such a route the moment its
# lifetime ends, but deletes it, and says so, only at its next garbage
# collection (net.ipv6.route.gc_interval, set to 15 s here, 30 s by
# default). The dataplane must stop using it when the kernel does, not
# when the kernel deletes it: learned from a notification, from the
# dump of a restarted xfibd, and for a route already expired when
# dumped. A lifetime extended by "replace" keeps the route in use. IPv4
# routes have no lifetime in this kernel (it ignores "expires").
#
# 2001:db8:40::1 is an address of both sinks: a /64 to it via sink
# expires under a covering /48 via sink2.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

GC_S=15
topo_create 0
topo_add_sink2
ip -n "$SNK" addr add 2001:db8:40::1/128 dev lo nodad
ip -n "$SNK2" addr add 2001:db8:40::1/128 dev lo nodad
ip netns exec "$RTR" sysctl -qw "net.ipv6.route.gc_interval=$GC_S"
ip -n "$RTR" -6 route add 2001:db8:40::/48 via "$SNK2_6"
D=2001:db8:40::1 P=2001:db8:40::/64

xfibd_start
attach_all
resolve_neighbours

r() { ip -n "$RTR" "$@" || fail "ip $*"; }

# gc_restart: runs the kernel's IPv6 route garbage collection now; its
# next run is then about GC_S after the route added next. Otherwise a
# timer armed by an earlier step could delete an expired route a moment
# after it expired, before the test has looked at it.
gc_restart() {
	ip netns exec "$RTR" sysctl -qw net.ipv6.route.flush=0 || fail "sysctl net.ipv6.route.flush"
}

kernel_via() { ip -n "$RTR" -6 route get "$D" 2>/dev/null | sed -n 's/.* via \([0-9a-f:]*\) .*/\1/p'; }
xfib_uses_route() { rctl lookup "$D" 2>/dev/null | grep -q "^gateway: *$SNK6\$"; }
kernel_holds() { [ -n "$(ip -n "$RTR" -6 route show "$P")" ]; }

# expire_check WHAT: waits for the kernel to stop using the /64 and
# checks that the dataplane stopped no later (within the time a change
# takes to reach it); then, while the kernel still holds the expired
# route, echoes go where the kernel sends them and verify agrees; after
# the kernel deletes it, they are XDP-forwarded by the covering route.
expire_check() {
	local t0 tk="" tx="" deadline e0 e1
	t0=$(now_ms)
	deadline=$((t0 + 15000))
	while [ -z "$tk" ] || [ -z "$tx" ]; do
		if [ -z "$tx" ] && ! xfib_uses_route; then
			tx=$(now_ms)
		fi
		if [ -z "$tk" ] && [ "$(kernel_via)" != "$SNK6" ]; then
			tk=$(now_ms)
		fi
		(($(now_ms) < deadline)) || fail "$1: the kernel or xfib kept using the route for 15 s"
		sleep 0.05
	done
	log "$1: the kernel stopped using the route after $((tk - t0)) ms, the dataplane after $((tx - t0)) ms"
	((tx <= tk + 500)) || fail "$1: the dataplane used the route $((tx - tk)) ms longer than the kernel"
	kernel_holds || fail "$1: the kernel deleted the route already: the test's premise is wrong"
	wait_lookup "$D" '.nexthop.kind == "unsupported" and .verdict == "deferred"' 2
	e0=$(icmp_in_echos "$SNK")
	e1=$(icmp_in_echos "$SNK2")
	ping_all "$GEN" 6 "$D" 3
	(($(icmp_in_echos "$SNK") == e0 && $(icmp_in_echos "$SNK2") >= e1 + 3)) ||
		fail "$1: echoes after expiry did not all go to sink2"
	verify_clean "$1: expired, not yet deleted"
	deadline=$((SECONDS + 3 * GC_S))
	while kernel_holds; do
		((SECONDS < deadline)) || fail "$1: the kernel did not delete the expired route"
		sleep 0.2
	done
	expect_xdp 6 "$D" 3000 "$SNK2"
	verify_clean "$1: deleted"
}

# ---- a notification ------------------------------------------------------
gc_restart
r -6 route add "$P" via "$SNK6" expires 3
expect_xdp 6 "$D" 2000 "$SNK"
expire_check "notified route"

# ---- a lifetime extended ---------------------------------------------------
r -6 route add "$P" via "$SNK6" expires 3
expect_xdp 6 "$D" 2000 "$SNK"
r -6 route replace "$P" via "$SNK6" expires 60
sleep 4
expect_xdp 6 "$D" 1000 "$SNK"
r -6 route replace "$P" via "$SNK6"
verify_clean "a lifetime extended, then made permanent"
r -6 route del "$P"

# ---- a dump ---------------------------------------------------------------
gc_restart
r -6 route add "$P" via "$SNK6" expires 4
kill -TERM "$XFIBD_PID"
wait "$XFIBD_PID" 2>/dev/null || true
xfibd_start
expect_xdp 6 "$D" 2000 "$SNK"
expire_check "dumped route"

# Already expired when dumped: handed to the kernel at once.
r -6 route add "$P" via "$SNK6" expires 2
deadline=$((SECONDS + 10))
until [ "$(kernel_via)" != "$SNK6" ]; do
	((SECONDS < deadline)) || fail "the kernel kept using a route that expired"
	sleep 0.05
done
kill -TERM "$XFIBD_PID"
wait "$XFIBD_PID" 2>/dev/null || true
xfibd_start
kernel_holds || fail "the expired route is gone before xfibd started: the test's premise is wrong"
lookup_is "$D" '.nexthop.kind == "unsupported"' ||
	fail "a route dumped after its expiry is used: $(rctl -j lookup "$D" | jq -c '{nexthop, gateway}')"
verify_clean "dumped after its expiry"
deadline=$((SECONDS + 3 * GC_S))
while kernel_holds; do
	((SECONDS < deadline)) || fail "the kernel did not delete the expired route"
	sleep 0.2
done

# ---- IPv4: no lifetime ------------------------------------------------------
r route add 198.19.40.0/24 via "$SNK4" expires 2
sleep 3
lookup_is 198.19.40.1 ".gateway == \"$SNK4\" and .verdict == \"match\"" ||
	fail "an IPv4 route given a lifetime the kernel ignores is not used"
verify_clean "IPv4 route with an ignored lifetime"

log "PASS: expiring routes stop being used when the kernel stops using them"
