#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A build that fails for lack of memory leaves the old instance serving
# and is retried with backoff. xfibd runs in a memory cgroup too small for
# a dir24_8 instance (a 64 MiB first level): forcing dir24_8 fails with
# ENOMEM, bsearch4 keeps forwarding by XDP and status says why; once the
# limit is raised, a retry succeeds without any further request.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

# BPF map memory is charged to the memory cgroup of the process creating
# the map; a cgroup v1 memory controller lets the test set a limit.
own=$(sed -n 's/^[0-9]*:memory:\(.*\)$/\1/p' /proc/self/cgroup)
memroot=/sys/fs/cgroup/memory
[ -n "$own" ] && [ -w "$memroot$own" ] || skip "no writable cgroup v1 memory controller"
CG="$memroot${own%/}/xfib-test-$$"
mkdir "$CG" || skip "cannot create a memory cgroup"
# Removed at exit, once xfibd (its last member) is gone.
XFIB_EXIT_HOOKS+=("rmdir '$CG' 2>/dev/null")

topo_create
# The ports and the maps exist first (created outside the cgroup), as on a
# router where xfibd restarts under a tighter limit.
attach_all
echo 48M >"$CG/memory.limit_in_bytes"
# Children inherit the cgroup: join it for the start, then leave.
echo "$BASHPID" >"$CG/cgroup.procs"
xfibd_start
echo "$BASHPID" >"$memroot$own/cgroup.procs"
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

echo 1G >"$CG/memory.limit_in_bytes"
wait_until 20 status_is '.ipv4.algorithm == "dir24_8"' ||
	fail "no successful retry 20 s after raising the limit: $(rctl status -j | jq -c .ipv4)"
st=$(rctl status -j)
[ "$(jq -r '.ipv4.build_error' <<<"$st")" = "" ] || fail "build error not cleared: $(jq -c .ipv4 <<<"$st")"
expect_xdp 4 "$SNK4"
log "PASS: failed builds left bsearch4 serving; a retry switched once memory allowed"
