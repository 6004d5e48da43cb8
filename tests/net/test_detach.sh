#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Detaching every port hands forwarding back to the kernel: IpForwDatagrams
# and Ip6OutForwDatagrams grow again, xfib's forwarded counters stop, no
# router port carries an XDP program and status lists no interfaces.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

topo_up

# shellcheck disable=SC2046 # word splitting of the port list intended
rctl detach $(router_ports) || fail "xfibctl detach $(router_ports | tr '\n' ' ')"

for p in $(router_ports); do
	! xdp_prog_on "$RTR" "$p" || fail "XDP program still on $p after detach: $(ip -n "$RTR" -d link show dev "$p" | grep -i xdp)"
done
# Nothing else in the namespace carries one either.
if ip -n "$RTR" -d link show | grep -q 'prog/xdp'; then
	fail "an XDP program is left in the router: $(ip -n "$RTR" -d link show | grep 'prog/xdp')"
fi
n=$(rctl status -j | jq '.interfaces | length') || fail "status -j failed after detach"
[ "$n" -eq 0 ] || fail "status lists $n interfaces after detach: $(rctl status -j | jq -c .interfaces)"

ping_both 20
forwarded_by kernel 40 "after detach"

# The daemon keeps running; attaching again brings XDP back.
kill -0 "$XFIBD_PID" || fail "xfibd exited after detach"
attach_all
expect_xdp 4 "$SNK4"
expect_xdp 6 "$SNK6"

log "PASS: detach returns forwarding to the kernel; re-attach restores XDP"
