#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Many nexthop objects. 65536 blackhole objects are added in one batch
# while a route is replaced back and forth and another added: each change
# must reach the dataplane within the usual latency (bounded here at
# 1 s, what a lookup poll can resolve on a busy machine; it took tens of
# seconds when each object cost a scan of all objects), with no netlink
# overrun and no log line per object. With them present, changes keep
# their latency. Then more group objects used by routes than the group
# table holds: the routes beyond it go to the kernel, counted in status,
# with a log line or two, and verify stays clean. Flushing every object
# takes the routes by them away.
# Alone: it bounds route change latency at 1 s under its own load
# of 65536 objects, not under other tests' load.
# run.sh: alone
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

NOBJ=65536
LIMIT_MS=1000
topo_create 0
topo_add_sink2
xfibd_start
attach_all
resolve_neighbours

r() { ip -n "$RTR" "$@" || fail "ip $*"; }
P=198.19.102.0/24 D=198.19.102.1

# change_ms GW: replaces P via GW and prints how long until the
# dataplane's lookup of D leaves by GW.
change_ms() {
	local t0 deadline
	t0=$(now_ms)
	r route replace "$P" via "$1"
	deadline=$((t0 + 30000))
	until rctl lookup "$D" 2>/dev/null | grep -q "^gateway: *$1\$"; do
		(($(now_ms) < deadline)) || fail "route change via $1 not in the dataplane after 30 s"
	done
	echo $(($(now_ms) - t0))
}

# changes N WHAT: N changes, each within LIMIT_MS; logs the median and
# the largest.
changes() {
	local i ms all=()
	for ((i = 0; i < $1; i++)); do
		if ((i % 2)); then ms=$(change_ms "$SNK4"); else ms=$(change_ms "$SNK2_4"); fi
		all+=("$ms")
	done
	read -r med max < <(printf '%s\n' "${all[@]}" | sort -n |
		awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)], v[NR] }')
	log "$2: $1 route changes, median $med ms, max $max ms (lookup polls)"
	((max <= LIMIT_MS)) || fail "$2: a route change took $max ms to reach the dataplane"
}

r route add "$P" via "$SNK4"
changes 6 "no nexthop objects"

# ---- 65536 objects in one batch, changes meanwhile ----------------------
seq 1 "$NOBJ" | sed 's/.*/nexthop add id & blackhole/' >"$XFIB_TMP/nh.batch"
t0=$(now_ms)
ip -n "$RTR" -batch "$XFIB_TMP/nh.batch" &
batch_pid=$!
XFIB_PIDS+=("$batch_pid")
changes 6 "while $NOBJ objects are added"
r route add 198.19.103.0/24 via "$SNK2_4"
wait_lookup 198.19.103.1 ".gateway == \"$SNK2_4\"" 1
wait "$batch_pid" || fail "adding $NOBJ nexthop objects failed"
log "the kernel took $(($(now_ms) - t0)) ms for $NOBJ objects"
deadline=$((SECONDS + 30))
until st=$(rctl status -j) && [ "$(jq '.daemon.nexthop_objects' <<<"$st")" = "$NOBJ" ]; do
	((SECONDS < deadline)) || fail "status: $(jq -c .daemon <<<"$st"), expected $NOBJ nexthop objects"
	sleep 0.2
done
jqe '.daemon.overruns == 0 and .daemon.resyncs == 0 and .daemon.no_room == 0' <<<"$st" >/dev/null ||
	fail "xfibd fell behind or ran out of room: $(jq -c .daemon <<<"$st")"
(($(wc -l <"$XFIBD_LOG") < 100)) || fail "xfibd logged $(wc -l <"$XFIBD_LOG") lines"
changes 10 "with $NOBJ objects present"
r route add 198.19.104.0/24 nhid 5
wait_lookup 198.19.104.1 '.nexthop.kind == "blackhole" and .verdict == "match"' 2
verify_clean "$NOBJ objects"

# ---- more used group objects than groups ----------------------------------
CAP=$(jq '.daemon.capacity.groups' <<<"$st")
NGRP=$((CAP + 50))
{
	for i in $(seq 10 209); do
		echo "nexthop add id $((100000 + i)) via $NET4_S.$i dev $R_SNK"
	done
	i=0
	for a in $(seq 10 209); do
		for b in $(seq $((a + 1)) 209); do
			((i < NGRP)) || break 2
			echo "nexthop add id $((200000 + i)) group $((100000 + a))/$((100000 + b))"
			echo "route add 198.19.$((128 + i / 256)).$((i % 256))/32 nhid $((200000 + i))"
			i=$((i + 1))
		done
	done
} >"$XFIB_TMP/grp.batch"
r -batch "$XFIB_TMP/grp.batch"
deadline=$((SECONDS + 60))
until st=$(rctl status -j) && [ "$(jq '.daemon.no_room' <<<"$st")" -ge 50 ]; do
	((SECONDS < deadline)) || fail "status: $(jq -c .daemon <<<"$st"), expected 50 routes without room"
	sleep 0.2
done
jqe --argjson cap "$CAP" '.daemon.groups == $cap and .daemon.no_room == 50 and
	.daemon.overruns == 0' <<<"$st" >/dev/null ||
	fail "group objects beyond the table: $(jq -c .daemon <<<"$st")"
n=$(grep -c "table full\|more times a full" "$XFIBD_LOG" || true)
((n >= 1 && n <= 3)) || fail "$n log lines about the full group table"
last=198.19.$((128 + (NGRP - 1) / 256)).$(((NGRP - 1) % 256))
# Status can be ahead of the dataplane by a batch.
wait_lookup 198.19.128.0 '.group.members == 2 and .verdict == "match"' 10
wait_lookup "$last" '.nexthop.kind == "unsupported" and .verdict == "deferred"' 10
changes 6 "with the group table full"
verify_clean "the group table full of nexthop objects"

# ---- every object flushed ----------------------------------------------------
t0=$(now_ms)
r nexthop flush >/dev/null
tk=$(now_ms)
deadline=$((SECONDS + 30))
until st=$(rctl status -j) && jqe '.daemon.nexthop_objects == 0 and .daemon.groups == 0 and
	.daemon.no_room == 0' <<<"$st" >/dev/null; do
	((SECONDS < deadline)) || fail "after nexthop flush: $(jq -c .daemon <<<"$st")"
	sleep 0.2
done
log "flushed every object: the kernel in $((tk - t0)) ms, xfib $(($(now_ms) - tk)) ms later"
wait_lookup 198.19.104.1 '.nexthop.kind == "none"' 2
changes 4 "after the flush"
verify_clean "after the flush"

log "PASS: $NOBJ nexthop objects and a full group table cost no latency"
