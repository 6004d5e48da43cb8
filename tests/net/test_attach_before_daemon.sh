#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Ports attached before any xfibd ran: the program has no interfaces and
# no table yet, so it hands every packet to the kernel (pass_no_iface or
# pass_no_fib moves) and the kernel forwards it: pings still work. Once
# xfibd starts and syncs, the same traffic is XDP-forwarded.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

topo_create
attach_all
st=$(rctl status -j) || fail "status without a daemon failed"
jq -e '.daemon.running == false' <<<"$st" >/dev/null || fail "status shows a daemon: $(jq -c .daemon <<<"$st")"
jq -e '.interfaces | length == 2' <<<"$st" >/dev/null || fail "status does not list both ports: $(jq -c .interfaces <<<"$st")"

# Before xfibd: the kernel forwards everything, xfib forwards nothing.
early() { echo $(($(counter pass_no_iface) + $(counter pass_no_fib))); }
e0=$(early)
snapshot
ping_all "$GEN" 4 "$SNK4" 10
ping_all "$GEN" 6 "$SNK6" 10
deltas
(( D_X4 == 0 && D_X6 == 0 )) || fail "xfib forwarded packets before xfibd ran"
(( D_K4 >= 20 && D_K6 >= 20 )) || fail "kernel did not forward the pings (v4 +$D_K4, v6 +$D_K6)"
e1=$(early)
[ $((e1 - e0)) -ge 40 ] || fail "pass_no_iface + pass_no_fib grew by $((e1 - e0)), expected >= 40 ($(stats_line))"

xfibd_start
expect_xdp 4 "$SNK4"
expect_xdp 6 "$SNK6"
snapshot
ping_all "$GEN" 4 "$SNK4" 20
ping_all "$GEN" 6 "$SNK6" 20
deltas
(( D_X4 >= 40 && D_X6 >= 40 )) || fail "not XDP-forwarded after xfibd started"
(( D_K4 == 0 && D_K6 == 0 )) || fail "router kernel still forwarding after xfibd started"

log "PASS: attach before xfibd: kernel path first, XDP after sync"
