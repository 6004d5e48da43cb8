#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# More distinct multipath groups than xfib_nh_groups holds (XFIB_GROUP_MAX,
# 4096): the routes beyond it must go to the kernel, never be left out
# (a covering route would then forward their packets elsewhere). 4200
# /32 routes, each over its own pair of gateways; the first ones get a
# group, the last ones the kernel; verify finds no mismatch; deleting
# routes frees groups that a new route can take. (Routes already handed
# to the kernel stay there until they change or a resync.)
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

N=4200
topo_create 0
xfibd_start
attach_all
# A covering route through another gateway: a /32 left out of the mirror
# would take it.
ip -n "$RTR" route add 198.19.0.0/16 via "$SNK4"

batch="$XFIB_TMP/routes.batch"
i=0
for a in $(seq 10 109); do
	for b in $(seq $((a + 1)) 109); do
		((i < N)) || break 2
		echo "route add 198.19.$((i / 256)).$((i % 256))/32 nexthop via $NET4_S.$a dev $R_SNK onlink nexthop via $NET4_S.$b dev $R_SNK onlink"
		i=$((i + 1))
	done
done >"$batch"
((i == N)) || fail "only $i gateway pairs"
ip -n "$RTR" -batch "$batch"

deadline=$((SECONDS + 60))
until grep -q "the kernel forwards to it" "$XFIBD_LOG"; do
	((SECONDS < deadline)) || fail "no route was handed to the kernel: $(rctl status -j | jq -c .daemon)"
	sleep 0.2
done
until rctl lookup -j "198.19.$(((N - 1) / 256)).$(((N - 1) % 256))" 2>/dev/null |
	jq -e '.nexthop.kind == "unsupported" and .verdict == "deferred"' >/dev/null; do
	((SECONDS < deadline)) || fail "the last route is not handed to the kernel: $(rctl lookup -j "198.19.$(((N - 1) / 256)).$(((N - 1) % 256))")"
	sleep 0.2
done
grep -q "multipath group table full" "$XFIBD_LOG" || fail "the full group table was not logged"
rctl lookup -j 198.19.0.0 | jq -e '.group.members == 2 and .verdict == "match"' >/dev/null ||
	fail "the first route has no group: $(rctl lookup -j 198.19.0.0)"
# Status is refreshed every second.
until groups=$(rctl status -j | jq '.daemon.groups') && ((groups == 4096)); do
	((SECONDS < deadline)) || fail "status shows $groups groups, expected all 4096 in use"
	sleep 0.2
done
# One line per batch, not one per route.
(($(grep -c "the kernel forwards to it" "$XFIBD_LOG") < 20)) ||
	fail "a line per route handed to the kernel: $(grep -c "the kernel forwards to it" "$XFIBD_LOG")"
out=$(rctl verify --random 20000 2>&1) || fail "verify with the group table full: $(tail -n 20 <<<"$out")"
log "group table full: $groups groups, later routes deferred to the kernel, verify clean"

# Routes deleted free their groups; a new route takes one.
head -n 200 "$batch" | sed 's/^route add/route del/; s/ nexthop.*//' >"$XFIB_TMP/del.batch"
ip -n "$RTR" -batch "$XFIB_TMP/del.batch"
# Freed groups are reused after a grace period, at the next update.
wait_until 10 status_is '.daemon.groups < 4096' || fail "deleting routes freed no group"
sleep 1
ip -n "$RTR" route add 198.18.250.0/24 nexthop via "$NET4_S.200" dev "$R_SNK" onlink \
	nexthop via "$NET4_S.201" dev "$R_SNK" onlink
wait_until 10 lookup_is 198.18.250.1 '.group.members == 2' ||
	fail "a new multipath route got no group after groups were freed: $(rctl lookup -j 198.18.250.1)"
out=$(rctl verify --random 20000 2>&1) || fail "verify after freeing groups: $(tail -n 20 <<<"$out")"
log "PASS: routes beyond the group table go to the kernel; freed groups are reused"
