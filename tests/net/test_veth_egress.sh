#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A veth takes XDP-redirected frames only while its peer has GRO on or an
# XDP program; otherwise the kernel drops every frame redirected to it.
# Here the sink's end (sink0, the peer of router port r-sink) has neither
# (the scenario is in tests/lib/veth_egress.sh):
#
#  - xfibctl attach warns about r-sink, with the reason and the fix, and
#    status says the same (text and -j);
#  - pings from gen to the sink are all answered: the router kernel
#    forwards them, counted by xfib as pass_egress_no_xmit;
#  - `ethtool -K sink0 gro on` in the sink's namespace is picked up by the
#    running xfibd (polled through xfibctl lookup, which runs the
#    dataplane's decision): the same pings are then forwarded by XDP and
#    none by the router kernel;
#  - gro off again sends them back to the kernel;
#  - an XDP program on sink0 (xfib's own, attached in the sink namespace
#    with a pin directory of its own and no daemon there, so it passes
#    every packet to the sink's kernel) makes r-sink a redirect target
#    again, and detaching it undoes that.
#
# xfib learns all this from the kernel's netdev netlink family, or on a
# kernel without it (before 6.3) by probing sink0 itself; the test checks
# that xfibd and status go the way the kernel calls for.
# net/test_veth_egress_nofamily runs the same without the family on any
# kernel, and what only that way has.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
# shellcheck source=tests/lib/veth_egress.sh
. "$(dirname "$0")/../lib/veth_egress.sh"
xfib_init

ve_start
ve_attach
ve_peer_changes

log "PASS: an egress veth whose peer takes no redirected frames is left to the kernel, and follows the peer's GRO and XDP program"
