#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The package's upgrade path, as systemd runs it, without installing a
# package on the machine: `apt install ./xfib_NEW.deb` over a running
# unit unpacks the new files, then its postinst marks the restart
# (scripts/debian/postinst) and restarts the unit: SIGTERM to the old
# xfibd, the new helper's post-stop, then its pre-start, run and
# post-start. Here the unit's helper (scripts/service/xfib-service.in) is
# made twice, for this tree's build (layout L) and for the LAYOUT_TEST=1
# build (layout L + 1), and the steps run in that order on a namespaced router
# configured with XFIB_ON_STOP=detach, under ping streams in both
# families:
#
# - the marked post-stop leaves the ports attached (detach would hand
#   them to the kernel);
# - the new xfibd upgrades the dataplane, and the new post-start waits for
#   it, then attaches nothing and exits 0;
# - every echo answered, the router kernel forwarded nothing, every port
#   runs the new program, the new xfibctl's status shows both ports.
#
# What it leaves out: dpkg and systemd themselves (net/test_deb installs
# the package, but one version: two builds of the package take minutes).
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
# shellcheck source=tests/lib/layout_test.sh
. "$(dirname "$0")/../lib/layout_test.sh"
xfib_init
layout_test_build
# This tree's layout, L, and the test build's, L + 1.
L=$(sed -n 's/^#define XFIB_LAYOUT_VERSION \([0-9]*\)$/\1/p' "$XFIB_TOP/include/xfib/maps.h" | tail -n 1)
[[ "$L" =~ ^[0-9]+$ ]] || fail "no layout version in include/xfib/maps.h"
N=$((L + 1))
OLDDIR=$(dirname "$XFIBD") NEWDIR=$(dirname "$NEWD")
for d in "$OLDDIR" "$NEWDIR"; do
	sed -e "s|@SBINDIR@|$d|g" -e "s|@SYSCONFDIR@|$XFIB_TMP/etc|g" \
		"$XFIB_TOP/scripts/service/xfib-service.in" >"$d/xfib-service"
	chmod 755 "$d/xfib-service"
done
RUNDIR="$XFIB_TMP/run"
mkdir "$RUNDIR"

topo_create
XFIB_PIN_DIRS+=("$PIN-upgrade")
# svc DIR STEP [VAR=VALUE...]: a unit step of the helper in DIR, in the
# router namespace, with the unit's configuration. Exec'd down to xfibd
# for `run`, so that `svc ... run &` leaves xfibd's pid in $!.
svc() {
	local dir=$1 step=$2
	shift 2
	exec env XFIB_INTERFACES="$R_GEN $R_SNK" XFIB_MODE=native XFIB_TABLE=254 \
		XFIB_ON_STOP=detach XFIB_RUNDIR="$RUNDIR" XFIBD_OPTS="--pin-dir $PIN" "$@" \
		nsenter --net="/run/netns/$RTR" "$dir/xfib-service" "$step"
}
start_unit() { # start_unit DIR: pre-start, run (XFIBD_PID), post-start
	(svc "$1" pre-start) || fail "$1: pre-start"
	svc "$1" run >>"$XFIBD_LOG" 2>&1 &
	XFIBD_PID=$!
	XFIB_PIDS+=("$XFIBD_PID")
	(svc "$1" post-start MAINPID="$XFIBD_PID") 2>>"$XFIBD_LOG" ||
		fail "$1: post-start: $(tail -n 5 "$XFIBD_LOG")"
}

start_unit "$OLDDIR"
wait_until 10 status_is '.daemon.running and .daemon.synced and (.interfaces | length == 2)' ||
	fail "the old unit: $(rctl status -j 2>&1 | tr -d '\n')"
resolve_neighbours
expect_xdp 4 "$SNK4" 3000 "$SNK"
expect_xdp 6 "$SNK6" 3000 "$SNK"
P0=$(prog_ids)

COUNT=400
k40=$(kfwd4 "$RTR") k60=$(kfwd6 "$RTR")
stream_start s4 4 "$SNK4" -i 0.02 -c "$COUNT" -W 2
stream_start s6 6 "$SNK6" -i 0.02 -c "$COUNT" -W 2
sleep 1

log "the package's restart: mark, stop the old unit, start the new one"
: >"$RUNDIR/upgrade-restart"
kill -TERM "$XFIBD_PID"
wait "$XFIBD_PID" || fail "the old xfibd exited $? on SIGTERM"
(svc "$NEWDIR" post-stop) 2>>"$XFIBD_LOG" || fail "the new post-stop failed"
[ "$(prog_ids)" = "$P0" ] || fail "the marked post-stop changed the ports: $P0-> $(prog_ids)"
t0=$(now_ms)
start_unit "$NEWDIR"
log "the new unit's post-start returned $(($(now_ms) - t0)) ms after its start"
rm "$RUNDIR/upgrade-restart"
XFIBCTL=$NEWCTL

grep -q "upgraded the dataplane from layout $L to $N on 2 ports" "$XFIBD_LOG" ||
	fail "the new xfibd did not upgrade: $(tail -n 5 "$XFIBD_LOG")"
log "$(grep -o "upgraded the dataplane.*" "$XFIBD_LOG")"
grep -q "restart for an upgrade: the ports stay attached" "$XFIBD_LOG" ||
	fail "the post-stop did not say why it kept the ports"
rctl status -j | jqe --argjson pid "$XFIBD_PID" '.daemon.pid == $pid and .daemon.synced and
	(.interfaces | length == 2)' >/dev/null ||
	fail "the new xfibctl's status: $(rctl status -j | jq -c '{daemon, interfaces}')"
i=0
for id in $P0; do
	new=$(cut -d ' ' -f $((i + 1)) <<<"$(prog_ids)")
	[ "$new" != 0 ] && [ "$new" != "$id" ] || fail "port $i: program $id before, $new after"
	i=$((i + 1))
done
stream_answered s4 "$COUNT" "across the package's restart, IPv4"
stream_answered s6 "$COUNT" "across the package's restart, IPv6"
k4=$(($(kfwd4 "$RTR") - k40)) k6=$(($(kfwd6 "$RTR") - k60))
((k4 == 0 && k6 == 0)) || fail "the router kernel forwarded v4 +$k4 v6 +$k6 across the restart"
log "PASS: the package's restart kept the ports and upgraded the dataplane without a loss"
