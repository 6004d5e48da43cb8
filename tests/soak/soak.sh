#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Soak run (make soak; not part of make test): SOAK_MINUTES (default 30)
# of the churn of tests/lib/churn.sh (routes, nexthop objects, link and
# neighbour flaps) in one-minute rounds, under a steady ping flow in both
# families over an unchanged route. xfibd runs with a small netlink
# receive buffer, so it overruns and resyncs as it goes, and is restarted
# in the middle of a round's churn at minutes 3, 6 and 9 (SIGTERM, then
# kill -9, in turn; SOAK_RESTARTS): the final daemon then runs for the rest.
#
# After every round the churn pauses, xfibd settles, and a sample is
# taken: xfibd's resident memory, the entries in use in the maps
# (nexthops, neighbours, groups, prefixes per family), and xfibctl verify
# with 100,000 random destinations per family. Samples go to
# build/soak/samples.json; tests/soak/report.py writes the report and the
# plot.
#
# It passes when verify is clean at every sample, no echo of the steady
# flow is lost, xfibd never died, and after warm-up (SOAK_WARMUP_MINUTES,
# default 5 after the last restart) neither xfibd's heap nor any count of
# entries grows: the maximum of the last third of the samples is within
# 2% (heap: 2% + 256 KiB) of the maximum of the first third.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
# shellcheck source=tests/lib/churn.sh
. "$(dirname "$0")/../lib/churn.sh"
xfib_init

MINUTES=${SOAK_MINUTES:-30}
WARMUP=${SOAK_WARMUP_MINUTES:-5}
OUT=${SOAK_OUT:-$XFIB_BUILD/soak}
# Minutes of the restarts (SOAK_RESTARTS); the last is followed by the
# warm-up, then the window in which nothing may grow.
read -ra RESTARTS <<<"${SOAK_RESTARTS:-3 6 9}"
mkdir -p "$OUT"

topo_create 0
topo_add_sink2
churn_add_flap_port
XFIBD_ARGS=(--rcvbuf 16384)
xfibd_start_ns "$RTR" "$PIN" "$XFIBD_LOG" "${XFIBD_ARGS[@]}"
attach_all
resolve_neighbours
expect_xdp 4 "$SNK4"
expect_xdp 6 "$SNK6"

# 20 echoes a second per family, for as long as the rounds take.
count=$((MINUTES * 60 * 20))
ping_pids=()
for fam in 4 6; do
	dst=$SNK4
	[ "$fam" = 4 ] || dst=$SNK6
	nping "$GEN" "-$fam" -q -c "$count" -i 0.05 "$dst" >"$XFIB_TMP/ping$fam" 2>&1 &
	XFIB_PIDS+=($!)
	ping_pids+=($!)
done

# restart_daemon HOW: stops xfibd (TERM or KILL) and starts a new one,
# which adopts the pinned state; the dataplane forwards throughout.
restart_daemon() {
	kill "-$1" "$XFIBD_PID"
	wait "$XFIBD_PID" 2>/dev/null || true
	XFIBD_SYNC_TIMEOUT=30 xfibd_start_ns "$RTR" "$PIN" "$XFIBD_LOG" "${XFIBD_ARGS[@]}"
}

# sample MINUTE: one JSON line of figures into samples.jsonl; the verify
# output into verify-MINUTE.txt. Returns 1 if verify failed.
sample() {
	local m=$1 st rss anon nh ng out mis vrc=0
	st=$SETTLED_STATUS
	rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$XFIBD_PID/status")
	# The heap alone: RSS also counts the pages of the mmap()ed maps
	# that xfibd has touched so far, which grows as indexes are used.
	anon=$(awk '/^RssAnon:/ { print $2 }' "/proc/$XFIBD_PID/status")
	nh=$(rctl nexthops -j | jq length)
	ng=$(rctl neighbours -j | jq length)
	out=$(rctl verify --random 100000 2>&1) || vrc=$?
	printf '%s\n' "$out" >"$OUT/verify-$m.txt"
	mis=$(sed -n 's/.* \([0-9]*\) mismatched.*/\1/p' <<<"$out" | awk '{ n += $1 } END { print n + 0 }')
	jq -c -n --argjson m "$m" --argjson rss "$rss" --argjson anon "$anon" --argjson nh "$nh" \
		--argjson ng "$ng" --argjson st "$st" --argjson vrc "$vrc" --argjson mis "$mis" \
		--argjson pid "$XFIBD_PID" --argjson kroutes4 "$(ip -n "$RTR" -4 -j route show | jq length)" \
		--argjson kroutes6 "$(ip -n "$RTR" -6 -j route show | jq length)" '{
		minute: $m, pid: $pid, rss_kib: $rss, heap_kib: $anon, nexthops: $nh, neighbours: $ng,
		groups: $st.daemon.groups, prefixes4: $st.ipv4.routes,
		prefixes6: $st.ipv6.routes, kernel_routes4: $kroutes4,
		kernel_routes6: $kroutes6, resyncs: $st.daemon.resyncs,
		overruns: $st.daemon.overruns, verify_ok: ($vrc == 0),
		mismatched: $mis}' >>"$OUT/samples.jsonl"
	log "minute $m: rss $rss KiB (heap $anon), nexthops $nh, neighbours $ng, groups $(jq .daemon.groups <<<"$st"), prefixes $(jq .ipv4.routes <<<"$st")/$(jq .ipv6.routes <<<"$st"), verify $( ((vrc == 0)) && echo clean || echo FAILED)"
	return "$vrc"
}

rm -f "$OUT/samples.jsonl" "$OUT"/verify-*.txt
bad_verify=()
how=TERM
start=$SECONDS
for ((m = 1; m <= MINUTES; m++)); do
	churn_run 45 &
	churn_pid=$!
	if [[ " ${RESTARTS[*]} " == *" $m "* ]]; then
		sleep 20
		log "minute $m: restarting xfibd with SIG$how under churn"
		restart_daemon "$how"
		[ "$how" = TERM ] && how=KILL || how=TERM
	fi
	wait "$churn_pid"
	kill -0 "$XFIBD_PID" || fail "xfibd died in minute $m"
	wait_settled 60
	sample "$m" || bad_verify+=("$m")
	# Rounds are a minute long, whatever settling and sampling took.
	left=$((start + 60 * m - SECONDS))
	((left <= 0)) || sleep "$left"
done

wait "${ping_pids[@]}" || true
lost=""
for fam in 4 6; do
	rcvd=$(sed -n 's/.* \([0-9]*\) received.*/\1/p' "$XFIB_TMP/ping$fam")
	log "steady flow IPv$fam: ${rcvd:-0}/$count echoes answered"
	[ "${rcvd:-0}" -eq "$count" ] || lost="$lost IPv$fam: $((count - ${rcvd:-0})) lost"
done
jq -s --argjson warm "$((RESTARTS[-1] + WARMUP))" --arg lost "$lost" \
	--argjson count "$count" --argjson restarts "$(jq -c -n '$ARGS.positional' --args "${RESTARTS[@]}")" '{
	minutes: length, warmup_until_minute: $warm, restarts_at: ($restarts | map(tonumber)),
	echoes_per_family: $count, lost: $lost, samples: .}' \
	"$OUT/samples.jsonl" >"$OUT/samples.json"

# Debian's python3 has python3-matplotlib for the plot (as in tests/bench).
PYTHON=${PYTHON:-/usr/bin/python3}
[ -x "$PYTHON" ] || PYTHON=python3
"$PYTHON" "$XFIB_TOP/tests/soak/report.py" "$OUT/samples.json" "$OUT" ||
	fail "soak: growth after warm-up (see $OUT/report.md)"
[ ${#bad_verify[@]} -eq 0 ] || fail "verify found mismatches at minutes ${bad_verify[*]} (see $OUT/verify-*.txt)"
[ -z "$lost" ] || fail "steady flow:$lost"
log "PASS: $MINUTES minutes, verify always clean, no echo lost, no growth after warm-up"
