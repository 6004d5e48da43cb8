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
jqe '.daemon.running == false' <<<"$st" >/dev/null || fail "status shows a daemon: $(jq -c .daemon <<<"$st")"
jqe '.interfaces | length == 2' <<<"$st" >/dev/null || fail "status does not list both ports: $(jq -c .interfaces <<<"$st")"

# Before xfibd: the kernel forwards everything, xfib forwards nothing.
early() { echo $(($(counter pass_no_iface) + $(counter pass_no_fib))); }
e0=$(early)
ping_both 10
forwarded_by kernel 20 "before xfibd ran"
e1=$(early)
[ $((e1 - e0)) -ge 40 ] || fail "pass_no_iface + pass_no_fib grew by $((e1 - e0)), expected >= 40 ($(stats_line))"

xfibd_start
expect_xdp 4 "$SNK4"
expect_xdp 6 "$SNK6"
ping_both 20
forwarded_by xdp 40 "after xfibd started"

log "PASS: attach before xfibd: kernel path first, XDP after sync"
