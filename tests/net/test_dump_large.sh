#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Dumps of many parts. xfibd reads a dump on a second thread into a ring
# of buffers while it parses the parts already read; a route dump of
# 50k + 20k routes is a few hundred parts, many times the ring. It must:
#
# - read every part, in order: right after the start, before any
#   notification could repair anything, xfib holds as many prefixes as
#   the kernel, and verify is clean;
# - dump as well while routes change under the dump: started again with
#   routes churning and a receive buffer that overruns (each overrun a
#   full resync), it never fails a dump, and ends equal to the kernel.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

N4=50000
N6=20000
topo_create 0
batch="$XFIB_TMP/routes.batch"
for ((i = 0; i < N4; i++)); do
	printf 'route add 198.19.%d.%d/32 via %s\n' $((i / 256)) $((i % 256)) "$SNK4"
done >"$batch"
for ((i = 0; i < N6; i++)); do
	printf 'route add 2001:db8:f0:%x::/64 via %s\n' "$i" "$SNK6"
done >>"$batch"
ip -n "$RTR" -batch "$batch" || fail "adding $N4 + $N6 routes"
k4=$(kernel_prefixes "$RTR" 4)
k6=$(kernel_prefixes "$RTR" 6)
((k4 > N4 && k6 > N6)) || fail "kernel holds ipv4 $k4 ipv6 $k6 prefixes, want more than $N4 / $N6"

# ---- a cold start on a still table ------------------------------------
XFIBD_SYNC_TIMEOUT=60 xfibd_start
st=$(rctl status -j)
x4=$(jq .ipv4.routes <<<"$st")
x6=$(jq .ipv6.routes <<<"$st")
[ "$x4" = "$k4" ] && [ "$x6" = "$k6" ] && ok=1 || ok=0
((ok)) || fail "after the start: kernel ipv4 $k4 ipv6 $k6, xfib ipv4 $x4 ipv6 $x6"
grep -q "sync (start) done .* $k4 ipv4 routes, $k6 ipv6 routes" "$XFIBD_LOG" ||
	fail "the start's dump did not count ipv4 $k4 ipv6 $k6: $(grep "sync (start)" "$XFIBD_LOG")"
verify_clean "after the start"
# dir24_8 built its first tbl24 in the template the outer maps were made
# with (ctl/lib/pin.c); no other 64 MiB map is held.
n=$(xfibd_tbl24_maps "$XFIBD_PID")
[ "$n" = 1 ] || fail "on $(jq -r '.ipv4.algorithm + " and " + .ipv6.algorithm' <<<"$st"), xfibd holds $n 64 MiB tbl24 maps, not 1"
log "start: $(grep -o 'dumps read in [0-9]* ms' "$XFIBD_LOG" | head -n 1), ipv4 $x4 ipv6 $x6 prefixes"

kill -TERM "$XFIBD_PID"
wait "$XFIBD_PID" || fail "xfibd exited with status $? on SIGTERM"

# ---- dumps racing changes ---------------------------------------------
for ((i = 0; i < 1000; i++)); do
	printf 'route add 198.19.%d.%d/32 via %s\n' $((200 + i / 256)) $((i % 256)) "$SNK4"
	printf 'route add 2001:db8:f1:%x::/64 via %s\n' "$i" "$SNK6"
done >"$batch.churn-add"
sed 's/^route add/route del/; s/ via .*//' "$batch.churn-add" >"$batch.churn-del"
CHURN_STOP="$XFIB_TMP/churn.stop"
churn() {
	until [ -e "$CHURN_STOP" ]; do
		ip -n "$RTR" -batch "$batch.churn-add" 2>/dev/null || true
		ip -n "$RTR" -batch "$batch.churn-del" 2>/dev/null || true
	done
}
churn &
CHURN_PID=$!
XFIB_PIDS+=("$CHURN_PID")
sleep 0.5

log_from=$(($(wc -l <"$XFIBD_LOG") + 1))
XFIBD_SYNC_TIMEOUT=60 xfibd_start_ns "$RTR" "$PIN" "$XFIBD_LOG" --rcvbuf 4096
# Resyncs, each a full dump while the churn goes on (at most 60 s).
deadline=$((SECONDS + 60))
while :; do
	resyncs=$(rctl status -j | jq .daemon.resyncs)
	((resyncs >= 3)) && break
	((SECONDS < deadline)) || fail "only $resyncs resyncs in 60 s of churn"
	kill -0 "$XFIBD_PID" 2>/dev/null || fail "xfibd died under churn"
	sleep 0.2
done
touch "$CHURN_STOP"
wait "$CHURN_PID" || true
kill -0 "$XFIBD_PID" 2>/dev/null || fail "xfibd died under churn"
if tail -n "+$log_from" "$XFIBD_LOG" | grep -E "netlink dump: |resync .* failed|netlink: "; then
	fail "a dump failed under churn"
fi
log "churn stopped after $resyncs resyncs"

# The resync the last overrun asked for settles, then xfib equals the
# kernel again.
wait_prefixes_match 60
verify_clean "after the churn"
log "PASS: $N4 + $N6 routes dumped complete at the start, and consistent after $resyncs resyncs under churn"
