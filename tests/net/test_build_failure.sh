#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A build that fails for lack of memory leaves the old instance serving
# and is retried with backoff. xfibd runs in a memory cgroup too small for
# a dir24_8 instance (a 64 MiB first level): forcing dir24_8 fails with
# ENOMEM, bsearch4 keeps forwarding by XDP and status says why. A policy
# rule's table large enough for an instance of its own (1,300 prefixes)
# fails the same way: its packets go to the kernel, which forwards them,
# and its build is retried with backoff too. Once the limit is raised,
# retries succeed without any further request or change: main runs
# dir24_8, and the rule's table is forwarded in XDP by its instance.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

# BPF map memory is charged to the memory cgroup of the process creating
# the map. mem_cgroup: a memory cgroup of this test's own, from a cgroup v1
# memory controller or, where only cgroup v2 exists (Debian 12's
# default), from the v2 hierarchy. Sets CG (the cgroup), CG_LIMIT (its
# limit file: memory.limit_in_bytes or memory.max) and CG_HOME (the cgroup
# this shell leaves it for).
mem_cgroup() {
	local own mnt
	own=$(sed -n 's/^[0-9]*:memory:\(.*\)$/\1/p' /proc/self/cgroup)
	mnt=$(awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ { print $2; exit }' /proc/mounts)
	if [ -n "$own" ] && [ -n "$mnt" ] && [ -w "$mnt$own" ]; then
		CG="$mnt${own%/}/xfib-test-$$" CG_LIMIT=memory.limit_in_bytes CG_HOME="$mnt$own"
		mkdir "$CG" || skip "cannot create a cgroup v1 memory cgroup under $mnt$own"
		return 0
	fi
	# cgroup v2: a process may only join a leaf, and only the root may hold
	# processes and enable controllers for its children at once, so the
	# test's cgroup is a child of the hierarchy's root.
	own=$(sed -n 's/^0::\(.*\)$/\1/p' /proc/self/cgroup)
	mnt=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	[ -n "$own" ] && [ -n "$mnt" ] || skip "no cgroup v1 memory controller and no cgroup v2 hierarchy"
	grep -qw memory "$mnt/cgroup.controllers" ||
		skip "no memory controller: not in cgroup v1, not in cgroup v2 ($mnt)"
	grep -qw memory "$mnt/cgroup.subtree_control" ||
		echo +memory >"$mnt/cgroup.subtree_control" ||
		skip "cannot enable the cgroup v2 memory controller in $mnt"
	CG="$mnt/xfib-test-$$" CG_LIMIT=memory.max CG_HOME="$mnt$own"
	mkdir "$CG" || skip "cannot create a cgroup v2 memory cgroup in $mnt"
}
mem_cgroup
# Removed at exit, once xfibd (its last member) is gone.
XFIB_EXIT_HOOKS+=("rmdir '$CG' 2>/dev/null")
log "memory cgroup $CG ($CG_LIMIT)"

topo_create
# The ports and the maps exist first (created outside the cgroup), as on a
# router where xfibd restarts under a tighter limit.
attach_all
echo 48M >"$CG/$CG_LIMIT"
# Children inherit the cgroup: join it for the start, then leave.
echo "$BASHPID" >"$CG/cgroup.procs"
xfibd_start
echo "$BASHPID" >"$CG_HOME/cgroup.procs"
resolve_neighbours
expect_xdp 4 "$SNK4"
[ "$(rctl status -j | jq -r '.ipv4.algorithm')" = bsearch4 ] || fail "not on bsearch4"

if out=$(rctl algo ipv4 dir24_8 2>&1); then
	fail "forcing dir24_8 succeeded within a 48 MiB cgroup: $out"
fi
grep -q "building dir24_8 failed: Cannot allocate memory" <<<"$out" ||
	fail "unexpected error from algo: $out"
st=$(rctl status -j)
[ "$(jq -r '.ipv4.algorithm' <<<"$st")" = bsearch4 ] || fail "old instance replaced: $(jq -c .ipv4 <<<"$st")"
[ "$(jq -r '.ipv4.build_error' <<<"$st")" = "Cannot allocate memory" ] ||
	fail "status does not report the failed build: $(jq -c .ipv4 <<<"$st")"
expect_xdp 4 "$SNK4"
grep -q "retrying in" "$XFIBD_LOG" || fail "no retry scheduled in the log"
# The daemon retries on its own, with growing intervals.
failed_builds() { (($(grep -c 'building dir24_8 failed' "$XFIBD_LOG") >= $1)); }
wait_until 10 failed_builds 3 || fail "no retries within 10 s: $(grep 'dir24_8' "$XFIBD_LOG")"
grep -q "retrying in 1000 ms" "$XFIBD_LOG" && grep -q "retrying in 2000 ms" "$XFIBD_LOG" ||
	fail "retry interval does not back off: $(grep 'retrying' "$XFIBD_LOG")"
expect_xdp 4 "$SNK4"
log "ENOMEM: bsearch4 keeps forwarding through 3 failed attempts with backoff"

# A rule's table of 1,300 /28s in 198.19.0.0/16 by the sink, which owns
# 198.19.5.1 (in the sixth): past the size that takes an instance.
ip netns exec "$SNK" ip addr add 198.19.5.1/32 dev lo
python3 -c '
import sys
for i in range(1300):
    print("route add 198.19.%d.%d/28 via %s table 200" % (i // 16, i % 16 * 16, sys.argv[1]))
' "$SNK4" | ip -n "$RTR" -batch -
ip -n "$RTR" rule add pref 100 to 198.19.0.0/16 lookup 200
table200() { rctl rules -j -4 | jq -c '[.ipv4.rules[] | select(.priority == 100)][0].xfib.table'; }
table200_is() { [ "$(table200 | jq -r '.algo + " " + .state')" = "$1" ]; }
table_builds_failed() { (($(grep -c 'table 200: building dir24_8: Cannot allocate memory' "$XFIBD_LOG") >= $1)); }
wait_until 10 table_builds_failed 3 ||
	fail "table 200: no failed builds retried within 10 s: $(grep 'table 200' "$XFIBD_LOG")"
grep -q "table 200: the kernel keeps it; building again in 1000 ms" "$XFIBD_LOG" &&
	grep -q "table 200: the kernel keeps it; building again in 2000 ms" "$XFIBD_LOG" ||
	fail "table 200: retries do not back off: $(grep 'table 200' "$XFIBD_LOG")"
rctl rules -4 | grep -q "its instance could not be built" ||
	fail "rules does not say why table 200 is the kernel's: $(rctl rules -4 | grep 'lookup 200')"
# Its packets meanwhile: the kernel's, which forwards them.
k0=$(kfwd4 "$RTR") r0=$(counter pass_rule)
nping "$GEN" -4 -q -c 3 -i 0.2 198.19.5.1 >/dev/null || fail "ping 198.19.5.1 through the kernel"
((($(kfwd4 "$RTR") - k0) >= 3 && ($(counter pass_rule) - r0) >= 3)) ||
	fail "198.19.5.1 while table 200 failed to build: kernel forwarded +$(($(kfwd4 "$RTR") - k0)), pass_rule +$(($(counter pass_rule) - r0))"
log "ENOMEM: table 200 left to the kernel, its build retried with backoff"

echo 1G >"$CG/$CG_LIMIT"
# The next retry of each comes within its backoff, which doubles from
# 1 s: by now 16 s at most, 32 s if the steps above took half a minute.
wait_until 40 status_is '.ipv4.algorithm == "dir24_8"' ||
	fail "no successful retry 40 s after raising the limit: $(rctl status -j | jq -c .ipv4)"
st=$(rctl status -j)
[ "$(jq -r '.ipv4.build_error' <<<"$st")" = "" ] || fail "build error not cleared: $(jq -c .ipv4 <<<"$st")"
expect_xdp 4 "$SNK4"
wait_until 40 table200_is "dir24_8 xdp" ||
	fail "table 200 not built 40 s after raising the limit: $(table200)"
expect_xdp 4 198.19.5.1
log "PASS: failed builds left bsearch4 and the kernel serving; retries switched once memory allowed"
