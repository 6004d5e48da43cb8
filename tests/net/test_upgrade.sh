#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Upgrades without a gap: a router runs this tree's xfib (layout L) on
# three ports under ping streams in both families, and a second build of
# the same tree whose maps differ and whose layout is newer (make
# LAYOUT_TEST=1, built here into its own BUILD) takes it over:
#
# - failures before the switch, injected after the new maps' full sync
#   and at the second port's replace (XFIB_TEST_UPGRADE_FAULT): the new
#   xfibd exits 1 saying so, every port runs the old program, the pins
#   are the old maps, no staging directory is left, and the old dataplane
#   forwards on;
# - the upgrade (the old xfibd stopped with SIGTERM, the new one started):
#   every echo of both streams answered, every echo at the sink and every
#   reply at gen carried the router's MAC, the host's MAC and TTL / hop
#   limit 63, the router kernel forwarded nothing, and none of xfib's pass
#   counters for forwarded traffic moved, in the old maps (kept readable by
#   a pin of the test's own) nor in the new; every port runs the new
#   program, the one that reads the pinned maps, which are the new build's
#   (its xfib_neigh_hosts size, layout L + 1); the flow hash seed is the old
#   one; the new xfibctl's status works and the old xfibctl's fails,
#   naming the layouts; xfibd logs the upgrade with its numbers, and the
#   new status shows them;
# - the old build over the new maps: xfibd exits 1 naming both layouts,
#   with the ports' programs, the pins and the forwarding unchanged.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
# shellcheck source=tests/lib/layout_test.sh
. "$(dirname "$0")/../lib/layout_test.sh"
xfib_init
command -v bpftool >/dev/null || skip "missing tool: bpftool"

layout_test_build
# This tree's layout, L, and the test build's, L + 1.
L=$(sed -n 's/^#define XFIB_LAYOUT_VERSION \([0-9]*\)$/\1/p' "$XFIB_TOP/include/xfib/maps.h" | tail -n 1)
[[ "$L" =~ ^[0-9]+$ ]] || fail "no layout version in include/xfib/maps.h"
N=$((L + 1))
OLDD=$XFIBD OLDCTL=$XFIBCTL

topo_create 0
topo_add_sink2
STAGE="$PIN-upgrade"
HOLD="/sys/fs/bpf/xfib-test-$$-hold"
XFIB_PIN_DIRS+=("$STAGE" "$HOLD")

# Every xfibd here vouches for its dataplane for 300 s after it stops
# (--lease): the steps between a stop and the next start take seconds
# here, but minutes under an emulated CPU (tests/kernels), and the old
# dataplane must not hand its packets to the kernel for want of a lease
# meanwhile.
start_xfibd() { xfibd_start_ns "$RTR" "$PIN" "$XFIBD_LOG" --lease 300; }
start_xfibd
attach_all
resolve_neighbours
expect_xdp 4 "$SNK4" 3000 "$SNK"
expect_xdp 6 "$SNK6" 3000 "$SNK"
seed0=$(rctl status -j | jq -r .hash_seed.seed)

# ---- what the test looks at -----------------------------------------------
map_id() { bpftool -j map show pinned "$PIN/$1" | jq -r .id; }
pin_ids() { # the ids of a few pinned maps, one line
	local m
	for m in xfib_active xfib_neigh_hosts xfib_stats xfib_layout; do
		map_id "$m"
	done | tr '\n' ' '
}
# The pass reasons packets of the streams would be counted under, were they
# handed to the kernel: every one but the router's own traffic (ARP, ND,
# its own addresses).
mapfile -t REASONS < <(grep -o 'X([A-Z0-9_]*, "[a-z0-9_]*"' \
	"$XFIB_TOP/include/xfib/counters.h" | sed 's/.*"\(.*\)"/\1/')
data_pass() { # the sum of those counters in an xfib_stats map pinned at $1
	local i keys=()
	for i in "${!REASONS[@]}"; do
		case ${REASONS[$i]} in
		pass_not_ip | pass_special_addr | pass_not_for_us | pass_local) ;;
		pass_*) keys+=("$i") ;;
		esac
	done
	bpftool -j map dump pinned "$1" | jq --argjson k "[$(IFS=,; echo "${keys[*]}")]" '
		[.[].formatted | select(.key as $x | $k | index($x)) | .values[].value.packets] | add'
}
staging_gone() {
	[ ! -e "$STAGE" ] || fail "$1: the staging directory is left: $(ls "$STAGE" | tr '\n' ' ')"
}
# unchanged WHAT: the ports run the programs and the pins are the maps
# they were at the last `remember`.
remember() { P0=$(prog_ids) M0=$(pin_ids); }
unchanged() {
	[ "$(prog_ids)" = "$P0" ] || fail "$1: the ports' programs changed: $P0-> $(prog_ids)"
	[ "$(pin_ids)" = "$M0" ] || fail "$1: the pins changed: $M0-> $(pin_ids)"
	staging_gone "$1"
}
# start_streams: echoes at 50/s per family to the sink, until
# finish_streams: as long as the steps between take, on any machine.
start_streams() {
	stream_start s4 4 "$SNK4" -i 0.02 -c 1000000 -W 2
	stream_start s6 6 "$SNK6" -i 0.02 -c 1000000 -W 2
}
# finish_streams WHAT: the streams end; every echo was answered but those
# in flight when they were ended (counted exactly across the upgrade, by
# the captures, below). Sets TX4 and TX6, the echoes sent.
finish_streams() {
	stream_finish s4
	TX4=$PING_TX
	(( PING_TX >= 100 && PING_TX - PING_RX <= 2 )) ||
		fail "$1, IPv4: $PING_RX of $PING_TX echoes answered"
	stream_finish s6
	TX6=$PING_TX
	(( PING_TX >= 100 && PING_TX - PING_RX <= 2 )) ||
		fail "$1, IPv6: $PING_RX of $PING_TX echoes answered"
}
# A new xfibd that must refuse or fail: exit 1 with PATTERN in its log.
xfibd_fails() { # WHAT BINARY PATTERN [ENV...]
	local what=$1 bin=$2 pattern=$3 rc=0 logf="$XFIB_TMP/xfibd-fail.log"
	shift 3
	: >"$logf"
	env "$@" nsenter --net="/run/netns/$RTR" -- timeout 60 "$bin" -v \
		--pin-dir "$PIN" >"$logf" 2>&1 || rc=$?
	cat "$logf" >>"$XFIBD_LOG"
	[ "$rc" = 1 ] || fail "$what: xfibd exited $rc, not 1: $(tail -n 5 "$logf")"
	grep -q "$pattern" "$logf" || fail "$what: no \"$pattern\" in: $(tail -n 5 "$logf")"
	log "$what: $(grep -o "$pattern.*" "$logf" | head -n 1)"
}
stop_xfibd() {
	kill -TERM "$XFIBD_PID"
	wait "$XFIBD_PID" || fail "xfibd exited $? on SIGTERM"
}

# ---- failures before the switch -------------------------------------------
k40=$(kfwd4 "$RTR") k60=$(kfwd6 "$RTR")
start_streams
sleep 1
remember
stop_xfibd
xfibd_fails "a failure after the new maps' sync" "$NEWD" \
	"failure injected after the sync, before the switch" XFIB_TEST_UPGRADE_FAULT=sync
grep -q "the old dataplane keeps forwarding" "$XFIB_TMP/xfibd-fail.log" ||
	fail "the failed upgrade did not say the old dataplane forwards on"
unchanged "after a failure before the switch"
rctl status >/dev/null || fail "the old xfibctl's status after a failed upgrade"
check_flowing "after a failure before the switch"
xfibd_fails "a failure at the second port's switch" "$NEWD" \
	"putting the old one back on the 1 ports switched" XFIB_TEST_UPGRADE_FAULT=switch
unchanged "after a failure during the switch"
check_flowing "after a failure during the switch"
# Back to a daemon renewing the old dataplane's lease.
start_xfibd
finish_streams "across two failed upgrades"
((k40 == $(kfwd4 "$RTR") && k60 == $(kfwd6 "$RTR"))) ||
	fail "the router kernel forwarded during the failed upgrades"

# ---- the upgrade ------------------------------------------------------------
mkdir -m 0700 "$HOLD"
bpftool map pin pinned "$PIN/xfib_stats" "$HOLD/old_stats"
OLD_ACTIVE=$(map_id xfib_active)
remember
# Every echo at the sink, every reply at gen, as they arrive.
ip netns exec "$SNK" tcpdump -l -e -v -n -i "$SNK_IF" \
	'(icmp and icmp[icmptype] == icmp-echo) or (icmp6 and ip6[40] == 128)' \
	>"$XFIB_TMP/sink.cap" 2>"$XFIB_TMP/sink.err" &
XFIB_PIDS+=("$!")
CAP_SNK=$!
ip netns exec "$GEN" tcpdump -l -e -v -n -i "$GEN_IF" \
	'(icmp and icmp[icmptype] == icmp-echoreply) or (icmp6 and ip6[40] == 129)' \
	>"$XFIB_TMP/gen.cap" 2>"$XFIB_TMP/gen.err" &
XFIB_PIDS+=("$!")
CAP_GEN=$!
wait_until 5 grep -q 'listening on' "$XFIB_TMP/sink.err" || fail "tcpdump at the sink"
wait_until 5 grep -q 'listening on' "$XFIB_TMP/gen.err" || fail "tcpdump at gen"
k40=$(kfwd4 "$RTR") k60=$(kfwd6 "$RTR")
old_pass0=$(data_pass "$HOLD/old_stats")
start_streams
sleep 2
stop_xfibd
t0=$(now_ms)
XFIBD=$NEWD XFIBCTL=$NEWCTL start_xfibd
log "the new xfibd synced $(($(now_ms) - t0)) ms after its start"
XFIBCTL=$NEWCTL
sleep 1
finish_streams "across the upgrade"
# The last replies, in flight when the streams ended, reach the capture.
sleep 1
kill -INT "$CAP_SNK" "$CAP_GEN"
wait "$CAP_SNK" "$CAP_GEN" || true

# Nothing lost (above), nothing to the kernel, nothing misrouted.
k4=$(($(kfwd4 "$RTR") - k40)) k6=$(($(kfwd6 "$RTR") - k60))
((k4 == 0 && k6 == 0)) || fail "the router kernel forwarded v4 +$k4 v6 +$k6 across the upgrade"
old_pass=$(($(data_pass "$HOLD/old_stats") - old_pass0))
new_pass=$(data_pass "$PIN/xfib_stats")
((old_pass == 0 && new_pass == 0)) ||
	fail "xfib handed forwarded traffic to the kernel: old maps +$old_pass, new maps $new_pass ($(rctl stats -j | jq -c 'with_entries(select(.key | startswith("pass_")) | select(.value.packets > 0))'))"
# frames CAPTURE SRC_MAC DST_MAC: every echo sent crossed the router once
# in this direction (none lost, even in flight when the streams ended, and
# none twice), from its port and with TTL / hop limit 63.
frames() {
	local n4 n6 bad
	n4=$(grep -c 'ethertype IPv4' "$1" || true)
	n6=$(grep -c 'ethertype IPv6' "$1" || true)
	bad=$(grep 'ethertype IPv' "$1" | grep -vE "$2 > $3, .*(ttl|hlim) 63[,)]" | head -n 3 || true)
	[ -z "$bad" ] || fail "$1: frames not from the router's port with TTL 63: $bad"
	((n4 == TX4 && n6 == TX6)) ||
		fail "$1: $n4 IPv4 and $n6 IPv6 frames for $TX4 and $TX6 echoes sent"
	log "$(basename "$1"): $n4 + $n6 frames for as many echoes, each $2 > $3, TTL 63"
}
frames "$XFIB_TMP/sink.cap" "$R_SNK_MAC" "$SNK_MAC"
frames "$XFIB_TMP/gen.cap" "$R_GEN_MAC" "$GEN_MAC"

# The new dataplane: its program on every port, its maps pinned.
NEW_ACTIVE=$(map_id xfib_active)
[ "$NEW_ACTIVE" != "$OLD_ACTIVE" ] || fail "xfib_active is still the old map"
i=0
for id in $(prog_ids); do
	old=$(cut -d ' ' -f $((i + 1)) <<<"$P0")
	[ "$id" != "$old" ] || fail "port $i still runs the old program $old"
	bpftool -j prog show id "$id" | jqe --argjson m "$NEW_ACTIVE" '.map_ids | index($m)' >/dev/null ||
		fail "port $i runs program $id, which does not read the pinned xfib_active $NEW_ACTIVE"
	i=$((i + 1))
done
((i == 3)) || fail "$i ports"
bpftool -j map show pinned "$PIN/xfib_neigh_hosts" | jqe '.max_entries == 131073' >/dev/null ||
	fail "the pinned xfib_neigh_hosts is not the new build's: $(bpftool -j map show pinned "$PIN/xfib_neigh_hosts")"
bpftool -j map dump pinned "$PIN/xfib_layout" | jqe --argjson l "$L" --argjson n "$N" '.[0].formatted.value.version == $n and
	.[0].formatted.value.from_version == $l and .[0].formatted.value.ports == 3' >/dev/null ||
	fail "xfib_layout: $(bpftool -j map dump pinned "$PIN/xfib_layout")"
staging_gone "after the upgrade"
[ "$(rctl status -j | jq -r .hash_seed.seed)" = "$seed0" ] ||
	fail "the flow hash seed changed: $seed0 -> $(rctl status -j | jq -r .hash_seed.seed)"
rctl status -j | jqe --argjson pid "$XFIBD_PID" --argjson l "$L" --argjson n "$N" '.daemon.pid == $pid and .daemon.synced and
	(.interfaces | length == 3) and .layout.version == $n and
	.layout.upgrade.from_version == $l and .layout.upgrade.ports == 3' >/dev/null ||
	fail "the new xfibctl's status: $(rctl status -j | jq -c '{layout, daemon, interfaces}')"
verify_clean "after the upgrade"
out=$(XFIBCTL=$OLDCTL rctl status 2>&1) && fail "the old xfibctl's status worked on the new maps: $out"
grep -q "the pinned maps are layout $N, a newer xfib's; this xfib is layout $L" <<<"$out" ||
	fail "the old xfibctl's refusal: $out"
grep -q "upgraded the dataplane from layout $L to $N on 3 ports" "$XFIBD_LOG" ||
	fail "xfibd did not log the upgrade"
log "$(grep -o "upgraded the dataplane.*" "$XFIBD_LOG")"

# ---- the old build over the new maps ----------------------------------------
k40=$(kfwd4 "$RTR") k60=$(kfwd6 "$RTR")
start_streams
sleep 1
remember
stop_xfibd
xfibd_fails "the old build over the new maps" "$OLDD" \
	"the pinned maps are layout $N, a newer xfib's; this xfib is layout $L and leaves them alone"
unchanged "after the old build's refusal"
check_flowing "after the old build's refusal"
XFIBD=$NEWD start_xfibd
finish_streams "across the refusal"
((k40 == $(kfwd4 "$RTR") && k60 == $(kfwd6 "$RTR"))) ||
	fail "the router kernel forwarded around the refusal"

log "PASS: failed upgrades left the old dataplane; the upgrade lost nothing and handed nothing to the kernel; the old build refused the new maps"
