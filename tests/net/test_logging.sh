#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# xfibd's log: on a plain stderr every line carries a timestamp; when
# stderr is the journal (JOURNAL_STREAM names it, as systemd does) lines
# carry a syslog priority prefix and no timestamp; the start-up sync is
# one line with counts and duration; a message repeated identically is
# printed once and then summed up as "last message
# repeated N times".
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

topo_create

# start_xfibd LOG [ENV...]: xfibd at its default level (info) on this
# router, stderr to LOG; waits for its first sync. Sets XFIBD_PID.
start_xfibd() {
	local logf=$1
	shift
	env "$@" nsenter --net="/run/netns/$RTR" -- "$XFIBD" --pin-dir "$PIN" 2>"$logf" &
	XFIBD_PID=$!
	XFIB_PIDS+=("$XFIBD_PID")
	xfibd_wait_synced "$RTR" "$PIN" 10 "$XFIBD_PID" || fail "xfibd did not sync: $(cat "$logf")"
}

stop_xfibd() {
	kill -TERM "$XFIBD_PID"
	wait "$XFIBD_PID" || fail "xfibd exited with $? on SIGTERM"
}

# ---- plain stderr: timestamps ----------------------------------------------------
LOG1="$XFIB_TMP/xfibd-plain.log"
start_xfibd "$LOG1"
TS='[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3} xfibd: '
grep -Eq "^${TS}mirroring table 254 into $PIN\$" "$LOG1" ||
	fail "no timestamped start line: $(cat "$LOG1")"
grep -Eq "^${TS}sync \\(start\\) done in [0-9]+ ms: [0-9]+ links, [1-9][0-9]* ipv4 routes, [1-9][0-9]* ipv6 routes, [0-9]+ neighbours, [0-9]+ nexthops\$" \
	"$LOG1" || fail "no sync line with counts and duration: $(cat "$LOG1")"
bad=$(grep -Ev "^$TS" "$LOG1" || true)
[ -z "$bad" ] || fail "lines without a timestamp: $bad"

# ---- identical messages collapsed --------------------------------------------------
# A request for an algorithm that does not exist, written to xfib_control
# the way a broken tool would (a new seq each time), is refused with the
# same warning each time. xfibd reads the map at least once a second.
FLAPS=5
for seq in $(seq 101 $((100 + FLAPS))); do
	bpftool map update pinned "$PIN/xfib_control" key 0 0 0 0 \
		value 99 0 0 0 $((seq % 256)) 0 0 0 || fail "bpftool map update xfib_control"
	sleep 1.2
done
MSG="ipv4: ignoring request for algorithm 99"
wait_until 15 grep -q "last message repeated" "$LOG1" ||
	fail "repeats never summed up: $(cat "$LOG1")"
n=$(grep -c "$MSG" "$LOG1" || true)
[ "$n" -eq 1 ] || fail "'$MSG' printed $n times, expected once: $(cat "$LOG1")"
grep -Eq "^${TS}last message repeated $((FLAPS - 1)) times\$" "$LOG1" ||
	fail "expected 'last message repeated $((FLAPS - 1)) times': $(cat "$LOG1")"
log "collapsed: $(grep -E "$MSG|repeated" "$LOG1" | tr '\n' '|')"
stop_xfibd
grep -Eq "^${TS}stopping on signal 15" "$LOG1" || fail "no stop line: $(tail -n 3 "$LOG1")"

# ---- the journal: priorities, no timestamps ---------------------------------------
LOG2="$XFIB_TMP/xfibd-journal.log"
: >"$LOG2"
JS="$(stat -c '%d:%i' "$LOG2")"
start_xfibd "$LOG2" JOURNAL_STREAM="$JS"
grep -qx "<6>mirroring table 254 into $PIN" "$LOG2" ||
	fail "no journal-style start line (<6>, no timestamp): $(cat "$LOG2")"
bad=$(grep -Ev '^<[0-7]>' "$LOG2" || true)
[ -z "$bad" ] || fail "journal lines without a priority prefix: $bad"
stop_xfibd

# A JOURNAL_STREAM naming another file (a child of a service that
# redirected stderr) is not the journal: timestamps again.
LOG3="$XFIB_TMP/xfibd-other.log"
start_xfibd "$LOG3" JOURNAL_STREAM="$JS"
grep -Eq "^${TS}mirroring table" "$LOG3" || fail "JOURNAL_STREAM of another file obeyed: $(cat "$LOG3")"
stop_xfibd
log "PASS: timestamps, journal priorities, one sync line, repeats collapsed"
