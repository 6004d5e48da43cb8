#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# One daemon per pin directory, pins only root can change, capabilities
# instead of uid 0:
#  - two xfibd started at the same moment on one pin directory, 20 times:
#    each time exactly one runs and syncs, the other exits 1 naming the
#    first one's pid, and verify stays clean;
#  - a pin directory owned by another user, or root's with a mode other
#    than 0700, is refused by xfibd and by xfibctl attach, with a clear
#    error, and nothing in it is touched;
#  - pinned maps of another xfib version are refused by xfibd and
#    xfibctl with the upgrade steps, naming the map: a map of another
#    shape, and an outer map whose inner maps are another shape (libbpf
#    would reuse it, and the verifier or the first insert would fail);
#    the refused directory is left as it was;
#  - xfibd runs and forwards with only CAP_BPF and CAP_NET_ADMIN (the
#    systemd unit's set) and no new privileges, and without CAP_BPF it
#    exits 1 naming what is missing.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init
command -v setpriv >/dev/null || skip "missing tool: setpriv (util-linux)"

topo_create 0
attach_all
resolve_neighbours

# start_daemon LOG: xfibd of this router in the background; sets STARTED
# (nsenter execs xfibd: the same pid).
start_daemon() {
	nsenter --net="/run/netns/$RTR" -- "$XFIBD" -v --pin-dir "$PIN" >"$1" 2>&1 &
	STARTED=$!
	XFIB_PIDS+=("$STARTED")
}

# ---- two at once --------------------------------------------------------
for round in $(seq 20); do
	start_daemon "$XFIB_TMP/a.log"
	a=$STARTED
	start_daemon "$XFIB_TMP/b.log"
	b=$STARTED
	# The loser exits at once; the winner keeps running.
	deadline=$((SECONDS + 10))
	while kill -0 "$a" 2>/dev/null && kill -0 "$b" 2>/dev/null; do
		((SECONDS < deadline)) || fail "round $round: both xfibd still running after 10 s"
		sleep 0.05
	done
	if kill -0 "$a" 2>/dev/null; then
		win=$a lose=$b lose_log=$XFIB_TMP/b.log
	else
		win=$b lose=$a lose_log=$XFIB_TMP/a.log
	fi
	rc=0
	wait "$lose" || rc=$?
	[ "$rc" = 1 ] || fail "round $round: the second xfibd exited $rc, not 1: $(cat "$lose_log")"
	grep -q "another xfibd (pid $win) is running on this pin directory" "$lose_log" ||
		fail "round $round: the refusal does not name pid $win: $(cat "$lose_log")"
	xfibd_wait_synced "$RTR" "$PIN" 10 "$win" || fail "round $round: xfibd $win not synced"
	kill -0 "$win" || fail "round $round: xfibd $win died"
	verify_clean "round $round"
	kill -TERM "$win"
	wait "$win" || fail "round $round: xfibd $win did not exit cleanly"
done
log "20 rounds: exactly one xfibd ran each time, the other exited 1 naming it"

# ---- unsafe pin directories ---------------------------------------------
BAD="/sys/fs/bpf/xfib-test-$$-bad"
XFIB_PIN_DIRS+=("$BAD")
# refused WHAT PATTERN CMD...: CMD exits 1 with a message matching
# PATTERN, and the pin directory is still empty.
refused() {
	local what=$1 pattern=$2 out rc=0
	shift 2
	out=$("$@" 2>&1) || rc=$?
	[ "$rc" = 1 ] || fail "$what: exit $rc, not 1: $out"
	grep -qE "$pattern" <<<"$out" || fail "$what: unexpected message: $out"
	[ -z "$(ls -A "$BAD")" ] || fail "$what: the pin directory was touched: $(ls -A "$BAD")"
	log "$what: refused: $(grep -E "$pattern" <<<"$out" | head -n 1)"
}
mkdir "$BAD"
chown 65534:65534 "$BAD"
chmod 0700 "$BAD"
refused "xfibd, pin dir owned by uid 65534" \
	"$BAD: refusing a pin directory that others could change: owned by uid 65534, not root" \
	in_ns "$RTR" "$XFIBD" --pin-dir "$BAD"
chown 0:0 "$BAD"
chmod 0755 "$BAD"
refused "xfibd, pin dir mode 0755" \
	"$BAD: refusing a pin directory that others could change: mode 0755, not 0700" \
	in_ns "$RTR" "$XFIBD" --pin-dir "$BAD"
# A port of its own, not attached to the test's dataplane.
ip -n "$RTR" link add r-spare type veth peer name r-spare-peer
ip -n "$RTR" link set r-spare up
ip -n "$RTR" link set r-spare-peer up
refused "xfibctl attach, pin dir mode 0755" \
	"^xfibctl: attach $BAD: refusing a pin directory that others could change: mode 0755" \
	in_ns "$RTR" "$XFIBCTL" --pin-dir "$BAD" attach r-spare
xdp_prog_on "$RTR" r-spare && fail "r-spare got an XDP program from a refused attach"

# ---- pinned maps of another version ---------------------------------------
# stale NAME: a pin directory of its own holding, under NAME, a map only
# another xfib defines like that.
stale() {
	OLD="/sys/fs/bpf/xfib-test-$$-$1"
	XFIB_PIN_DIRS+=("$OLD")
	mkdir -m 0700 "$OLD"
}
# stale_refused WHAT PATTERN: xfibd and xfibctl status exit 1 with the
# upgrade steps and a reason matching PATTERN, and pin nothing in the
# directory (xfib makes the missing outer maps itself before libbpf's
# load, and unpins them when the load fails).
stale_refused() {
	local what=$1 pattern=$2 out rc before
	before=$(ls "$OLD")
	for cmd in "$XFIBD --pin-dir $OLD" "$XFIBCTL --pin-dir $OLD status"; do
		rc=0
		# A daemon that accepts the pins runs on: the time limit fails it.
		# shellcheck disable=SC2086
		out=$(in_ns "$RTR" timeout 20 $cmd 2>&1) || rc=$?
		[ "$rc" = 1 ] || fail "$what: ${cmd%% *}: exit $rc, not 1: $out"
		grep -q "the pinned maps are another version of xfib's: $pattern" <<<"$out" &&
			grep -q "to upgrade: .*rm -r $OLD" <<<"$out" ||
			fail "$what: ${cmd%% *}: unexpected message: $out"
		[ "$(ls "$OLD")" = "$before" ] ||
			fail "$what: ${cmd%% *} left pins behind: $(ls "$OLD" | tr '\n' ' ')"
	done
	log "$what: refused: $(grep -o "another version.*" <<<"$out" | head -n 1)"
}
stale shape
bpftool map create "$OLD/xfib_stats" type percpu_array key 4 value 16 \
	entries 3 name xfib_stats
stale_refused "xfib_stats of another shape" \
	"$OLD/xfib_stats: pinned percpu_array, 3 x 16-byte values"
# An outer map of the right shape (XFIB_INST_SLOTS entries: main's two
# slots and two per rules' table slot, include/xfib/tables.h) whose slot
# 1 holds a tbl24 of another size (this xfib's is one value of 2^24
# __u32 entries).
stale inner
inst_slots=$(($(sed -n 's/^#define XFIB_SLOTS \([0-9]*\)$/\1/p' "$XFIB_TOP/include/xfib/maps.h") +
	2 * ($(sed -n 's/^#define XFIB_TABLE_SLOTS \([0-9]*\)$/\1/p' "$XFIB_TOP/include/xfib/tables.h") - 1)))
bpftool map create "$OLD/old_tbl24" type array key 4 value 8 entries 1024 \
	name old_tbl24 flags 1024
bpftool map create "$OLD/xfib_dir24_tbl24" type array_of_maps key 4 value 4 \
	entries "$inst_slots" name xfib_dir24_tbl2 inner_map pinned "$OLD/old_tbl24"
bpftool map update pinned "$OLD/xfib_dir24_tbl24" key 1 0 0 0 \
	value pinned "$OLD/old_tbl24"
stale_refused "xfib_dir24_tbl24 holding inner maps of another shape" \
	"$OLD/xfib_dir24_tbl24, its inner map 1: pinned array, 1024 x 8-byte values"

# ---- capabilities, not uid 0 --------------------------------------------
# caps_xfibd CAPS ARGS...: xfibd with only CAPS in its bounding set (as
# systemd's CapabilityBoundingSet= does) and no new privileges.
caps_xfibd() {
	local caps=$1
	shift
	in_ns "$RTR" setpriv --bounding-set="-all,$caps" --inh-caps=-all \
		--no-new-privs "$XFIBD" "$@"
}
out=$(caps_xfibd +net_admin --pin-dir "$PIN" 2>&1) && fail "xfibd ran without CAP_BPF: $out"
grep -q "missing capabilities: CAP_BPF (run as root, or grant them)" <<<"$out" ||
	fail "without CAP_BPF: unexpected message: $out"
nsenter --net="/run/netns/$RTR" -- setpriv --bounding-set=-all,+bpf,+net_admin \
	--inh-caps=-all --no-new-privs "$XFIBD" -v --pin-dir "$PIN" >>"$XFIBD_LOG" 2>&1 &
XFIBD_PID=$!
XFIB_PIDS+=("$XFIBD_PID")
xfibd_wait_synced "$RTR" "$PIN" 10 "$XFIBD_PID" ||
	fail "xfibd with CAP_BPF and CAP_NET_ADMIN only did not sync: $(tail -n 5 "$XFIBD_LOG")"
expect_xdp 4 "$SNK4"
expect_xdp 6 "$SNK6"
verify_clean "xfibd with two capabilities"
log "PASS: one daemon per pin directory, unsafe pin directories refused, xfibd on two capabilities"
