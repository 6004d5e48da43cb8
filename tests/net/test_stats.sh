#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# xfibctl stats in its three forms: the JSON snapshot counts exactly the
# packets sent through the router; the live monitor (-i) prints one
# parseable line per interval with the rate of the traffic running, and
# stops at -c N or at SIGINT with exit 0; --prometheus is valid text
# exposition format that agrees with the snapshot and lists the daemon and
# the attached ports. Bad intervals and --prometheus with -i are usage
# errors.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

N=20
topo_up

# ---- snapshot: counts move by what was sent -------------------------------

# Nothing else crosses the router between the namespaces, so the counters
# move by exactly the echoes and replies: default ping frames are 98 bytes
# (IPv4) and 118 bytes (IPv6).
for fam in 4 6; do
	c=forwarded_v$fam dst=$SNK4 len=98
	[ "$fam" = 4 ] || { dst=$SNK6; len=118; }
	p0=$(counter "$c")
	b0=$(xcounter "$RTR" "$PIN" "$c" bytes)
	ping_all "$GEN" "$fam" "$dst" "$N"
	dp=$(($(counter "$c") - p0))
	db=$(($(xcounter "$RTR" "$PIN" "$c" bytes) - b0))
	log "$c: +$dp packets, +$db bytes for $N echoes"
	[ "$dp" -eq $((2 * N)) ] || fail "$c grew by $dp packets, expected $((2 * N))"
	[ "$db" -eq $((2 * N * len)) ] || fail "$c grew by $db bytes, expected $((2 * N * len))"
done

# ---- live monitor ---------------------------------------------------------

# 500 echoes a second for 2 s: every interval of the monitor sees them.
OUT="$XFIB_TMP/ndjson"
ip netns exec "$GEN" ping -q -i 0.002 -c 1000 "$SNK4" >/dev/null 2>&1 &
PING_PID=$!
XFIB_PIDS+=("$PING_PID")
sleep 0.1
t0=$(now_ms)
timeout 10 nsenter --net="/run/netns/$RTR" -- "$XFIBCTL" --pin-dir "$PIN" \
	stats -i 0.5 -c 3 -j >"$OUT" || fail "stats -i 0.5 -c 3 -j: exit $?"
ms=$(($(now_ms) - t0))
wait "$PING_PID" || true
log "stats -i 0.5 -c 3 -j took $ms ms: $(tr '\n' ' ' <"$OUT")"
[ "$(wc -l <"$OUT")" -eq 3 ] || fail "stats -i 0.5 -c 3 -j: $(wc -l <"$OUT") lines, expected 3"
((ms >= 1400 && ms < 5000)) || fail "stats -i 0.5 -c 3 took $ms ms, expected about 1500"
while read -r line; do
	jqe '(.time | type) == "number" and .time > 1e9 and
		(.interval - 0.5 | fabs) < 0.1 and (.rates | type) == "object" and
		all(.rates[]; .pps > 0 and .bps > 0)' <<<"$line" >/dev/null ||
		fail "stats -i: not a valid interval line: $line"
done <"$OUT"
# Every interval saw the ping; all its frames are 98 bytes, so bits per
# packet is exactly 784 (up to the printed rounding).
jqe -s 'all(.[]; .rates.forwarded_v4.pps > 0 and
	(.rates.forwarded_v4.bps / .rates.forwarded_v4.pps - 784 | fabs) < 1)' <"$OUT" >/dev/null ||
	fail "stats -i: forwarded_v4 not moving at 784 bit/packet in every interval: $(tr '\n' ' ' <"$OUT")"

# Text form: a timestamp line per interval; idle, no counter moved.
TXT=$(rctl stats -i 0.2 -c 2) || fail "stats -i 0.2 -c 2: exit $?"
[ "$(grep -cE '^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:.]+  \([0-9.]+ s\)$' <<<"$TXT")" -eq 2 ] ||
	fail "stats -i 0.2 -c 2: expected 2 timestamp lines: $TXT"

# Without -c it runs until SIGINT, then exits 0 with whole lines.
nsenter --net="/run/netns/$RTR" -- "$XFIBCTL" --pin-dir "$PIN" \
	stats -i 0.1 -j >"$OUT" &
MON_PID=$!
XFIB_PIDS+=("$MON_PID")
# Its SIGINT handler is in place once it prints (a background command
# starts with SIGINT ignored, so a SIGINT sent sooner would be lost):
# two lines, then SIGINT.
out_lines() { (($(wc -l <"$OUT") >= $1)); }
wait_until 10 out_lines 2 || fail "stats -i 0.1: $(wc -l <"$OUT") lines in 10 s"
kill -INT "$MON_PID"
rc=0
wait "$MON_PID" || rc=$?
[ "$rc" -eq 0 ] || fail "stats -i 0.1 after SIGINT: exit $rc, expected 0"
jqe -s 'length >= 2' <"$OUT" >/dev/null || fail "stats -i 0.1 until SIGINT: unparseable: $(cat "$OUT")"

# ---- Prometheus -------------------------------------------------------------

# The router is idle: the snapshot before and after must agree, and so
# must the exposition read in between.
for try in 1 2 3 4 5; do
	J0=$(counter forwarded_v4)
	PROM=$(rctl stats --prometheus) || fail "stats --prometheus: exit $?"
	J1=$(counter forwarded_v4)
	[ "$J0" -ne "$J1" ] || break
	[ "$try" -lt 5 ] || fail "forwarded_v4 keeps moving on an idle router ($J0 -> $J1)"
	sleep 0.2
done
printf '%s\n' "$PROM" >"$XFIB_TMP/metrics.prom"

if command -v promtool >/dev/null 2>&1; then
	promtool check metrics <"$XFIB_TMP/metrics.prom" ||
		fail "promtool check metrics: $(cat "$XFIB_TMP/metrics.prom")"
fi
# The format by hand: samples are "name{labels} value"; every metric
# sampled has its HELP and TYPE, before its samples.
bad=$(grep -v '^#' "$XFIB_TMP/metrics.prom" |
	grep -vE '^[a-z_]+(\{[^}]*\})? [0-9.e+-]+$' || true)
[ -z "$bad" ] || fail "stats --prometheus: malformed sample lines: $bad"
grep -vE '^(# (HELP|TYPE) [a-z_]+ .+|[a-z_]+(\{[^}]*\})? [0-9.e+-]+)$' \
	"$XFIB_TMP/metrics.prom" && fail "stats --prometheus: lines neither HELP, TYPE nor samples"
# shellcheck disable=SC2016 # awk program
awk '
	/^# HELP / { help[$3] = 1; next }
	/^# TYPE / { if (!help[$3]) { print "TYPE before HELP: " $3; bad = 1 }
		type[$3] = $4; next }
	{ name = $1; sub(/\{.*/, "", name)
	  if (!help[name] || !type[name]) { print "no HELP/TYPE: " name; bad = 1 }
	  if (type[name] == "counter" && name !~ /_total$/) { print "counter without _total: " name; bad = 1 }
	  if (type[name] != "counter" && type[name] != "gauge") { print "bad TYPE: " name; bad = 1 } }
	END { exit bad }
' "$XFIB_TMP/metrics.prom" || fail "stats --prometheus: HELP/TYPE: $(cat "$XFIB_TMP/metrics.prom")"

# Every reason of stats -j, as packets and as bytes.
for r in $(rctl stats -j | jq -r 'keys[]'); do
	for m in packets bytes; do
		grep -qE "^xfib_${m}_total\{reason=\"$r\"\} [0-9]+$" "$XFIB_TMP/metrics.prom" ||
			fail "stats --prometheus: no xfib_${m}_total for $r"
	done
done
P=$(sed -n 's/^xfib_packets_total{reason="forwarded_v4"} //p' "$XFIB_TMP/metrics.prom")
log "forwarded_v4: stats -j $J0, prometheus $P"
[ "$P" = "$J0" ] || fail "xfib_packets_total{reason=\"forwarded_v4\"} is $P, stats -j says $J0"

expect_line() {
	grep -qxF "$1" "$XFIB_TMP/metrics.prom" ||
		fail "stats --prometheus: no line '$1': $(cat "$XFIB_TMP/metrics.prom")"
}
expect_line "xfib_daemon_up 1"
for p in $(router_ports); do
	expect_line "xfib_attached{interface=\"$p\",mode=\"${XFIB_MODE:-native}\"} 1"
done
[ "$(grep -c '^xfib_attached{' "$XFIB_TMP/metrics.prom")" -eq "$(router_ports | wc -w)" ] ||
	fail "stats --prometheus: xfib_attached lists other ports: $(grep '^xfib_attached' "$XFIB_TMP/metrics.prom")"
for fam in ipv4 ipv6; do
	algo=$(rctl status -j | jq -r --arg f "$fam" '.[$f].algorithm')
	routes=$(rctl status -j | jq -r --arg f "$fam" '.[$f].routes')
	expect_line "xfib_algorithm_info{family=\"$fam\",algorithm=\"$algo\"} 1"
	expect_line "xfib_routes{family=\"$fam\"} $routes"
	grep -qE "^xfib_(generation|swaps_total|instance_bytes)\{family=\"$fam\"\} [0-9]+$" \
		"$XFIB_TMP/metrics.prom" || fail "stats --prometheus: $fam instance metrics missing"
done
expect_line "# TYPE xfib_resyncs_total counter"

# ---- bad input ----------------------------------------------------------------

ERR="$XFIB_TMP/stderr"
# expect_usage PATTERN ARGS...: rctl ARGS exits 2 with one stderr line
# matching PATTERN and prints nothing on stdout.
expect_usage() {
	local pat=$1 rc=0 out
	shift
	out=$(rctl "$@" 2>"$ERR") || rc=$?
	log "xfibctl $* -> exit $rc: $(cat "$ERR")"
	[ "$rc" -eq 2 ] || fail "xfibctl $*: exit $rc, expected 2 ($(cat "$ERR"))"
	if [ "$(wc -l <"$ERR")" -ne 1 ] || ! grep -Eq "$pat" "$ERR"; then
		fail "xfibctl $*: expected one error line matching /$pat/: $(cat "$ERR")"
	fi
	[ -z "$out" ] || fail "xfibctl $*: output on a usage error: $out"
}
expect_usage "^xfibctl: stats --interval '0': " stats -i 0
expect_usage "^xfibctl: stats --interval 'abc': " stats -i abc
expect_usage "^xfibctl: stats --interval '-1': " stats --interval -1
expect_usage "^xfibctl: stats --prometheus .*--interval" stats --prometheus -i 1
expect_usage "^xfibctl: stats --count needs --interval" stats -c 2
expect_usage "^xfibctl: stats --count '0': " stats -i 1 -c 0

log "PASS: stats snapshot, live rates (NDJSON and text), Prometheus format, bad input"
