#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The dataplane outlives its daemon for the daemon's lease: with a steady
# stream running, xfibd is killed with SIGKILL; traffic keeps flowing and
# is still forwarded by xfib, not the kernel, and no packet goes to the
# kernel for want of a lease (pass_stale). A new xfibd, started within the
# lease (30 s by default), adopts the pinned state: traffic still flows,
# status shows the new daemon and its lease, and a route added afterwards
# is reflected in the dataplane. (After the lease, the kernel takes over:
# test_lease.)
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

topo_up

# A steady stream in both families for the whole test: 50 echoes/s each,
# ended once the last step is done (the deadline only bounds a hang).
stream_start stream4 4 "$SNK4" -i 0.02 -w 300
stream_start stream6 6 "$SNK6" -i 0.02 -w 300
sleep 1

check_flowing "xfibd running"
stale0=$(counter pass_stale)

OLD=$XFIBD_PID
log "kill -9 xfibd (pid $OLD)"
kill -KILL "$OLD"
wait "$OLD" 2>/dev/null || true # reap it: a zombie still looks alive
kill -0 "$OLD" 2>/dev/null && fail "xfibd $OLD survived SIGKILL"
check_flowing "xfibd killed"
rctl status -j | jqe '.daemon.running == false' >/dev/null ||
	fail "status still shows a running daemon after kill -9: $(rctl status -j | jq -c .daemon)"
# Interfaces stay attached with nobody watching.
rctl status -j | jqe '.interfaces | length == 2' >/dev/null || fail "ports lost after kill -9"
rctl status -j | jqe '.lease.valid == true' >/dev/null ||
	fail "the lease ran out right after kill -9: $(rctl status -j | jq -c .lease)"

log "restart xfibd"
xfibd_start
pid=$(rctl status -j | jq -r .daemon.pid)
[ "$pid" = "$XFIBD_PID" ] || fail "status shows daemon pid $pid, expected $XFIBD_PID"
rctl status -j | jqe --argjson p "$XFIBD_PID" '.lease.valid and .lease.pid == $p' >/dev/null ||
	fail "the new xfibd did not renew the lease: $(rctl status -j | jq -c .lease)"
check_flowing "xfibd restarted"

# The new daemon mirrors changes: a route added now is used.
D4="198.19.$((16 * TOPO_ID + 7)).1" D6="2001:db8:f$((16 * TOPO_ID + 7))::1"
ip -n "$SNK" addr add "$D4/32" dev lo
ip -n "$SNK" addr add "$D6/128" dev lo nodad
ip -n "$RTR" route add "${D4%.1}.0/24" via "$SNK4"
ip -n "$RTR" route add "${D6%1}/64" via "$SNK6"
expect_xdp 4 "$D4" 2000 "$SNK"
expect_xdp 6 "$D6" 2000 "$SNK"

# The stream ran through kill and restart without a gap.
for f in 4 6; do
	stream_finish "stream$f"
	[ "$PING_TX" -ge 200 ] || fail "stream v$f sent only $PING_TX"
	# At most the echoes in flight when the stream was ended.
	[ $((PING_TX - PING_RX)) -le 3 ] ||
		fail "stream v$f lost $((PING_TX - PING_RX)) of $PING_TX echoes across kill -9 and restart"
done

stale=$(($(counter pass_stale) - stale0))
[ "$stale" = 0 ] || fail "$stale packets went to the kernel for want of a lease across kill -9 and restart"

log "PASS: forwarding survived kill -9 and restart within the lease; changes mirrored after restart"
