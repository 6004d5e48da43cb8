#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# More distinct multipath groups than xfib_nh_groups holds (XFIB_GROUP_MAX,
# status -j .daemon.capacity.groups): the routes beyond it must go to the
# kernel, never be left out (a covering route would then forward their
# packets elsewhere). 104 more /32 routes than that, each over its own
# pair of gateways; the first ones get a group, the last ones the kernel,
# counted in status; one log line says the table is full, not one per
# route; verify finds no mismatch; deleting routes frees groups that a new
# route can take. (Routes already handed to the kernel stay there until
# they change or a resync.)
# run.sh: long
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

topo_create 0
xfibd_start
attach_all
CAP=$(rctl status -j | jqe '.daemon.capacity.groups') || fail "status -j: no group capacity"
N=$((CAP + 104))
# A covering route through another gateway: a /32 left out of the mirror
# would take it.
ip -n "$RTR" route add 198.19.0.0/16 via "$SNK4"

batch="$XFIB_TMP/routes.batch"
i=0
for a in $(seq 10 209); do
	for b in $(seq $((a + 1)) 209); do
		((i < N)) || break 2
		echo "route add 198.19.$((i / 256)).$((i % 256))/32 nexthop via $NET4_S.$a dev $R_SNK onlink nexthop via $NET4_S.$b dev $R_SNK onlink"
		i=$((i + 1))
	done
done >"$batch"
((i == N)) || fail "only $i gateway pairs"
ip -n "$RTR" -batch "$batch"

deadline=$((SECONDS + 120))
until grep -q "multipath group table full" "$XFIBD_LOG"; do
	((SECONDS < deadline)) || fail "no route was handed to the kernel: $(rctl status -j | jq -c .daemon)"
	sleep 0.2
done
until rctl lookup -j "198.19.$(((N - 1) / 256)).$(((N - 1) % 256))" 2>/dev/null |
	jqe '.nexthop.kind == "unsupported" and .verdict == "deferred"' >/dev/null; do
	((SECONDS < deadline)) || fail "the last route is not handed to the kernel: $(rctl lookup -j "198.19.$(((N - 1) / 256)).$(((N - 1) % 256))")"
	sleep 0.2
done
rctl lookup -j 198.19.0.0 | jqe '.group.members == 2 and .verdict == "match"' >/dev/null ||
	fail "the first route has no group: $(rctl lookup -j 198.19.0.0)"
# Status is refreshed every second.
until groups=$(rctl status -j | jq '.daemon.groups') && ((groups == CAP)); do
	((SECONDS < deadline)) || fail "status shows $groups groups, expected all $CAP in use"
	sleep 0.2
done
until no_room=$(rctl status -j | jq '.daemon.no_room') && ((no_room == N - CAP)); do
	((SECONDS < deadline)) || fail "status counts $no_room routes without room, expected $((N - CAP))"
	sleep 0.2
done
# A line now and then, not one per route.
(($(grep -c "table full\|more times a full" "$XFIBD_LOG") < 5)) ||
	fail "a line per route handed to the kernel: $(grep -c "table full\|more times a full" "$XFIBD_LOG")"
out=$(rctl verify --random 20000 2>&1) || fail "verify with the group table full: $(tail -n 20 <<<"$out")"
log "group table full: $groups groups, later routes deferred to the kernel, verify clean"

# Routes deleted free their groups; a new route takes one.
head -n 200 "$batch" | sed 's/^route add/route del/; s/ nexthop.*//' >"$XFIB_TMP/del.batch"
ip -n "$RTR" -batch "$XFIB_TMP/del.batch"
# Freed groups are reused after a grace period, at the next update.
wait_until 10 status_is ".daemon.groups < $CAP" || fail "deleting routes freed no group"
sleep 1
ip -n "$RTR" route add 198.18.250.0/24 nexthop via "$NET4_S.200" dev "$R_SNK" onlink \
	nexthop via "$NET4_S.201" dev "$R_SNK" onlink
wait_until 10 lookup_is 198.18.250.1 '.group.members == 2' ||
	fail "a new multipath route got no group after groups were freed: $(rctl lookup -j 198.18.250.1)"
out=$(rctl verify --random 20000 2>&1) || fail "verify after freeing groups: $(tail -n 20 <<<"$out")"
log "PASS: routes beyond the group table go to the kernel; freed groups are reused"
