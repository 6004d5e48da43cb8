#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Ports attached before any xfibd ran: no daemon has vouched for the maps
# yet (no lease), so the program hands every packet to the kernel
# (pass_stale moves, status says the lease was never given) and the kernel
# forwards it: pings still work. Once xfibd starts and syncs, the same
# traffic is XDP-forwarded.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

topo_create
attach_all
st=$(rctl status -j) || fail "status without a daemon failed"
jqe '.daemon.running == false' <<<"$st" >/dev/null || fail "status shows a daemon: $(jq -c .daemon <<<"$st")"
jqe '.interfaces | length == 2' <<<"$st" >/dev/null || fail "status does not list both ports: $(jq -c .interfaces <<<"$st")"
jqe '.lease.given == false and .lease.valid == false' <<<"$st" >/dev/null ||
	fail "status shows a lease before any xfibd: $(jq -c .lease <<<"$st")"

# Before xfibd: the kernel forwards everything, xfib forwards nothing.
early() { counter pass_stale; }
e0=$(early)
ping_both 10
forwarded_by kernel 20 "before xfibd ran"
e1=$(early)
[ $((e1 - e0)) -ge 40 ] || fail "pass_stale grew by $((e1 - e0)), expected >= 40 ($(stats_line))"

xfibd_start
expect_xdp 4 "$SNK4"
expect_xdp 6 "$SNK6"
ping_both 20
forwarded_by xdp 40 "after xfibd started"
e2=$(early)
ping_both 20
[ "$(early)" = "$e2" ] || fail "pass_stale moved with xfibd in sync: $e2 -> $(early)"

log "PASS: attach before xfibd: kernel path first, XDP after sync"
