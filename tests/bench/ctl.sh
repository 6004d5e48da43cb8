#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Control-plane benchmark (make bench-ctl, as root): how fast xfibd
# mirrors the kernel FIB into the dataplane. One router namespace
# (tests/lib/netns.sh, two sink ports as gateways), xfibd running:
#
#  1. mirror lag: the kernel installs a full table (scripts/gen-table.py,
#     FULL4 + FULL6 prefixes) with `ip -batch`; measured from the end of
#     the install until xfibd's published instances hold every route
#     (polling `xfibctl -j status`), and the updates xfibd applied per
#     second of the install, per CPU-second of its own (utime + stime
#     from /proc), so the figure is xfibd's, not the kernel's pace;
#  2. single change latency: tests/bench/ctlprobe.c replaces one route
#     CHANGES times per family, alternating between the two gateways, and
#     polls the live maps (the XDP program's lookup code over the mmap()ed
#     tables) until the new egress shows: p50 / p90 / p99, on the full
#     table, over every change (one not seen within ctlprobe's timeout
#     counts as the time waited: a lower bound);
#  3. memory: bytes of every map of the router's pin directory, and of
#     the dir24_8 / trie6 inner maps (bpftool map show: bytes_memlock),
#     the instances' memory and bytes per prefix (xfibctl status), and
#     xfibd's resident set (VmRSS, VmHWM);
#  4. cold start, COLD_RUNS times (3): xfibd stopped, then a new one on
#     a fresh pin directory with the full table in the kernel: dump,
#     build and publish, from the exec to the time stamp of its log line
#     saying the first sync is done (then `xfibctl status` must show
#     every route; that check is not timed), xfibd's own "sync (start)
#     done in N ms" and "netlink dumps read in N ms" log lines and its
#     CPU time (medians); then its private and mapped resident memory;
#  4b. restart, RESTART_RUNS times (3): the daemon stopped with SIGTERM
#     and a new one started on the same pin directory (what the service
#     does on restart, and systemd after a crash, after RestartSec): it
#     adopts the pinned maps and syncs; from the SIGTERM to the new
#     daemon's first renewal of the lease (the time stamp of its "sync
#     (start) done" line, which follows the renewal), the time the
#     dataplane forwards on the old daemon's last lease: the default
#     lease (xfibd --lease) must cover it, plus RestartSec after a crash;
#  5. FRR as the source (tests/bench/ctl_frr.sh): on a second router,
#     BIRD announces FRR4 + FRR6 prefixes over eBGP to FRR's bgpd, and
#     zebra installs them through a nexthop object; the mirror lag and
#     how stale the dataplane is while the table loads.
#
# Table on stdout, records in build/bench/ctl.json. Low numbers are
# reported, never an error; a probe that cannot run fails the run, after
# the rest.
#
# Environment: SCALE=full (1M + 250k prefixes, 1000 changes per family)
# or small (20000 + 5000, 100 changes); FULL4, FULL6, CHANGES override;
# FRR4, FRR6 (default FULL4, FULL6) size the FRR case, FRR=0 skips it.
# OUT (build/bench/ctl.json). PERF=1: flat profiles of xfibd (perf
# record -p, by symbol) while it mirrors the full-table install and
# during the cold start, into ctl-perf-install.txt and ctl-perf-cold.txt
# next to OUT.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib/netns.sh
. "$here/../lib/netns.sh"
# shellcheck source=tests/bench/common.sh
. "$here/common.sh"
# shellcheck source=tests/lib/frr.sh
. "$here/../lib/frr.sh"
# shellcheck source=tests/bench/ctl_frr.sh
. "$here/ctl_frr.sh"

SCALE=${SCALE:-full}
case $SCALE in
full) FULL4=${FULL4:-1000000} FULL6=${FULL6:-250000} CHANGES=${CHANGES:-1000} ;;
small) FULL4=${FULL4:-20000} FULL6=${FULL6:-5000} CHANGES=${CHANGES:-100} ;;
*) echo "ctl.sh: SCALE must be full or small" >&2; exit 2 ;;
esac
FRR4=${FRR4:-$FULL4} FRR6=${FRR6:-$FULL6}
# The fwd benchmark's table: one generated file serves both.
T4=${T4:-$([ "$SCALE" = full ] && echo 1000 || echo 100)}
T6=${T6:-$([ "$SCALE" = full ] && echo 2000 || echo 200)}
OUT=${OUT:-$XFIB_BUILD/bench/ctl.json}
CTLPROBE=${CTLPROBE:-$XFIB_BUILD/bench/ctlprobe}
CTLWATCH=${CTLWATCH:-$XFIB_BUILD/bench/ctlwatch}
for b in "$CTLPROBE" "$CTLWATCH"; do
	[ -x "$b" ] || { echo "ctl.sh: $b not built (make $b)" >&2; exit 1; }
done
command -v bpftool >/dev/null || { echo "ctl.sh: bpftool missing (scripts/install-deps.sh)" >&2; exit 1; }

# shellcheck disable=SC2034 # read by topo_create
XFIB_PIN_PREFIX=xfib-bench
xfib_init
cp "$CTLPROBE" "$CTLWATCH" "$XFIB_TMP/bin/"
CTLPROBE="$XFIB_TMP/bin/ctlprobe"
CTLWATCH="$XFIB_TMP/bin/ctlwatch"
REC="$XFIB_TMP/records.jsonl"
: >"$REC"

# rec METRIC VALUE UNIT [FAMILY] [EXTRA_JSON]: one record.
rec() {
	jq -n -c --arg m "$1" --argjson v "$2" --arg u "$3" --arg f "${4:-all}" \
		--argjson x "${5:-{\}}" \
		'{bench: "ctl", family: $f, algorithm: "xfibd", metric: $m,
		  value: $v, unit: $u, repetitions: 1} + $x' >>"$REC"
	log "$1${4:+ ($4)}: $2 $3"
}

topo_create 0
topo_add_sink2
GW4="$SNK4@$R_SNK,$SNK2_4@$R_SNK2"
GW6="$SNK6@$R_SNK,$SNK2_6@$R_SNK2"
table=$(bench_table "$FULL4" "$FULL6" "$T4" "$T6" "$GW4" "$GW6")
total=$(wc -l <"$table")
# The gateways' neighbours, so nexthops are complete.
ip -n "$RTR" neigh replace "$SNK4" lladdr "$SNK_MAC" dev "$R_SNK" nud permanent
ip -n "$RTR" -6 neigh replace "$SNK6" lladdr "$SNK_MAC" dev "$R_SNK" nud permanent
ip -n "$RTR" neigh replace "$SNK2_4" lladdr "$SNK2_MAC" dev "$R_SNK2" nud permanent
ip -n "$RTR" -6 neigh replace "$SNK2_6" lladdr "$SNK2_MAC" dev "$R_SNK2" nud permanent

xfibd_start
base4=$(rctl status -j | jq '.ipv4.routes')
base6=$(rctl status -j | jq '.ipv6.routes')
want4=$((base4 + FULL4 + T4))
want6=$((base6 + FULL6 + T6))

# cpu_ms PID: user + system CPU time of a process, in ms.
cpu_ms() {
	# shellcheck disable=SC2016 # fields after the command name
	awk -v hz="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); print int(($12 + $13) * 1000 / hz) }' "/proc/$1/stat"
}

# perf_start PID: PERF=1 only: a flat profile of process PID from now on.
PERF_PID=""
perf_start() {
	[ "${PERF:-0}" = 1 ] || return 0
	command -v perf >/dev/null || { log "PERF=1: perf not installed"; return 0; }
	perf record -q -p "$1" -o "$XFIB_TMP/perf.data" 2>"$XFIB_TMP/perf.err" &
	PERF_PID=$!
	XFIB_PIDS+=("$PERF_PID")
}

# perf_stop FILE: ends the profile and writes its top symbols to FILE
# (next to OUT).
perf_stop() {
	local f
	[ -n "$PERF_PID" ] || return 0
	f="$(dirname "$OUT")/$1"
	kill -INT "$PERF_PID"
	wait "$PERF_PID" 2>/dev/null || true
	PERF_PID=""
	mkdir -p "$(dirname "$OUT")"
	perf report -q -i "$XFIB_TMP/perf.data" --stdio --sort sym --percent-limit 0.5 2>/dev/null |
		sed '/^$/d' | head -n 40 >"$f"
	log "profile of xfibd: $f"
}

# ---- 1. mirror lag during a full-table install ----------------------------

log "installing $total routes with ip -batch"
perf_start "$XFIBD_PID"
st0=$(rctl status -j)
c0=$(cpu_ms "$XFIBD_PID")
t0=$(now_ms)
ip -n "$RTR" -batch "$table" || fail "ip -batch $table"
t1=$(now_ms)
while :; do
	st=$(rctl status -j)
	[ "$(jq '.ipv4.routes' <<<"$st")" -ge "$want4" ] &&
		[ "$(jq '.ipv6.routes' <<<"$st")" -ge "$want6" ] && break
	(($(now_ms) - t1 < 300000)) || fail "xfibd not caught up 300 s after the install"
	sleep 0.02
done
t2=$(now_ms)
c1=$(cpu_ms "$XFIBD_PID")
perf_stop ctl-perf-install.txt
st1=$(rctl status -j)
rec kernel_install_ms $((t1 - t0)) ms all "{\"routes\": $total}"
rec kernel_install_routes_per_s $((total * 1000 / (t1 - t0 + 1))) routes/s all "{\"routes\": $total}"
rec mirror_lag_ms $((t2 - t1)) ms all "{\"routes\": $total}"
rec updates_per_s $((total * 1000 / (t2 - t0 + 1))) routes/s all \
	"{\"routes\": $total, \"note\": \"routes mirrored per second of wall time, install start to xfibd caught up: paced by the kernel install\"}"
rec xfibd_cpu_ms $((c1 - c0)) ms all "{\"routes\": $total}"
# Full builds published while the table loaded (selection switches and
# rebuilds with a larger group pool), against prefixes updated in place.
for fam in 4 6; do
	rec install_builds_published $(($(jq ".ipv$fam.swaps" <<<"$st1") - $(jq ".ipv$fam.swaps" <<<"$st0"))) count "ipv$fam"
	rec install_updates_in_place $(($(jq ".ipv$fam.updates" <<<"$st1") - $(jq ".ipv$fam.updates" <<<"$st0"))) count "ipv$fam"
done
rec updates_per_cpu_s $((total * 1000 / (c1 - c0 + 1))) routes/s all \
	"{\"routes\": $total, \"note\": \"routes mirrored per second of xfibd CPU time (utime + stime): its capacity\"}"

# ---- 2. single change latency ---------------------------------------------

FAILED=()

st=$(rctl status -j)
log "full table: $(jq -c '{v4: .ipv4 | {algorithm, routes}, v6: .ipv6 | {algorithm, routes}}' <<<"$st")"
probe() {
	local fam=$1 prefix=$2 a=$3 b=$4 out algo
	algo=$(jq -r ".ipv$fam.algorithm" <<<"$st")
	# A probe that cannot run is broken tooling: the benchmark fails
	# (at the end, after the rest has run).
	out=$(in_ns "$RTR" "$CTLPROBE" --pin-dir "$PIN" --prefix "$prefix" \
		--via "$a" --via "$b" --changes "$CHANGES") || { log "ctlprobe IPv$fam failed"; FAILED+=("ctlprobe IPv$fam"); return 0; }
	# The percentiles are over every change, a timed-out one counted as
	# the time waited for it: a value above the timeout is a lower bound.
	for p in p50 p90 p99 max; do
		rec "change_latency_${p}_ms" "$(jq ".latency_ms.$p" <<<"$out")" ms "ipv$fam" \
			"$(jq -c --arg a "$algo" --argjson r "$(jq ".ipv$fam.routes" <<<"$st")" --arg p "$p" \
				'{routes: $r, instance: $a, changes: .changes, timeouts: .timeouts,
				  timeout_ms: .timeout_ms, lower_bound: (.latency_ms[$p] > .timeout_ms),
				  seen_only: .latency_seen_ms[$p],
				  note: "over every change; one not seen within timeout_ms counts as the time waited"}' <<<"$out")"
	done
	rec change_ack_p50_ms "$(jq '.ack_ms.p50' <<<"$out")" ms "ipv$fam" \
		"{\"note\": \"the kernel's acknowledgement of the netlink request\"}"
	rec change_timeouts "$(jq '.timeouts' <<<"$out")" count "ipv$fam" \
		"$(jq -c '{timeout_ms: .timeout_ms, changes: .changes}' <<<"$out")"
}
# Probe prefixes inside the test ranges, clear of the topology's and the
# table's own (198.18.200.0/24, 2001:db8:200::/48).
probe 4 198.18.200.0/24 "$SNK4@$R_SNK" "$SNK2_4@$R_SNK2"
probe 6 2001:db8:200::/48 "$SNK6@$R_SNK" "$SNK2_6@$R_SNK2"

# ---- 3. memory --------------------------------------------------------------

st=$(rctl status -j)
for fam in 4 6; do
	x=$(jq -c ".ipv$fam | {routes, instance: .algorithm}" <<<"$st")
	rec instance_bytes "$(jq ".ipv$fam.memory" <<<"$st")" bytes "ipv$fam" "$x"
	rec bytes_per_prefix "$(jq ".ipv$fam.bytes_per_prefix" <<<"$st")" bytes "ipv$fam" "$x"
done
rss=$(awk '/^VmRSS/ { print $2 * 1024 }' "/proc/$XFIBD_PID/status")
hwm=$(awk '/^VmHWM/ { print $2 * 1024 }' "/proc/$XFIBD_PID/status")
rec xfibd_rss_bytes "$rss" bytes all "{\"routes\": $((want4 + want6))}"
rec xfibd_peak_rss_bytes "$hwm" bytes all "{\"routes\": $((want4 + want6))}"
rec xfibd_bytes_per_route "$((rss / (want4 + want6)))" bytes all "{\"note\": \"VmRSS / routes mirrored\"}"

# Every map of the pin directory, and the inner maps of the map-in-map
# slots (the dir24_8 / trie6 tables), by id, each once (the entries of
# retired tbl8 pools all hold one placeholder map).
maps_total=0
declare -A inner_seen=()
for f in "$PIN"/*; do
	[ -e "$f" ] || continue
	m=$(bpftool -j map show pinned "$f" 2>/dev/null) || continue
	b=$(jq '.bytes_memlock // 0' <<<"$m")
	maps_total=$((maps_total + b))
	rec map_bytes "$b" bytes all "$(jq -c --arg n "$(basename "$f")" '{map: $n, type, max_entries, value_size}' <<<"$m")"
	case $(jq -r .type <<<"$m") in
	array_of_maps | hash_of_maps)
		for id in $(bpftool -j map dump pinned "$f" 2>/dev/null | jq -r '
			# bpftool prints the inner map id as raw little-endian bytes.
			def hex: ascii_downcase | explode | reduce .[] as $c (0;
				. * 16 + (if $c >= 97 then $c - 87 else $c - 48 end));
			.[] | .inner_map_id // (.value | select(type == "array") | to_entries |
				map((.value | ltrimstr("0x") | hex) * pow(256; .key)) | add)'); do
			[ -z "${inner_seen[$id]:-}" ] || continue
			inner_seen[$id]=1
			m=$(bpftool -j map show id "$id" 2>/dev/null) || continue
			b=$(jq '.bytes_memlock // 0' <<<"$m")
			maps_total=$((maps_total + b))
			rec map_bytes "$b" bytes all "$(jq -c --arg n "$(basename "$f")[inner id $id]" '{map: $n, type, max_entries, value_size}' <<<"$m")"
		done
		;;
	esac
done
rec maps_total_bytes "$maps_total" bytes all "{\"routes\": $((want4 + want6))}"

# ---- 4. cold start --------------------------------------------------------

# cold_start I: xfibd stopped, a new one on a fresh pin directory; sets
# COLD_MS, COLD_SYNC_MS, COLD_CPU_MS (user, system) and the new daemon's
# private (RssAnon) and mapped (RssFile + RssShmem: the dataplane's maps)
# resident memory, read once the sync is done.
cold_start() {
	local log="$XFIB_TMP/xfibd-cold$1.log" t0 t1 st
	kill "$XFIBD_PID"
	wait "$XFIBD_PID" 2>/dev/null || true
	PIN="$PIN_BASE-cold$1"
	XFIB_PIN_DIRS+=("$PIN")
	t0=$(now_ms)
	nsenter --net="/run/netns/$RTR" -- "$XFIBD" -v --pin-dir "$PIN" >>"$log" 2>&1 &
	XFIBD_PID=$!
	XFIB_PIDS+=("$XFIBD_PID")
	[ "$1" != 1 ] || perf_start "$XFIBD_PID"
	# Its log says when the first publish is done, to the millisecond:
	# the start ends at that line's time stamp, so neither this loop's
	# pace nor the check after it counts, and the loop polls gently
	# (it shares the two CPUs with xfibd's threads). Then status must
	# show every route.
	while ! grep -q "sync (start) done" "$log"; do
		kill -0 "$XFIBD_PID" 2>/dev/null || fail "xfibd exited during the cold start: $(tail -n 5 "$log")"
		(($(now_ms) - t0 < 300000)) || fail "cold start not done after 300 s"
		sleep 0.1
	done
	until st=$(rctl status -j 2>/dev/null) &&
		[ "$(jq '.ipv4.routes' <<<"$st")" -ge "$want4" ] &&
		[ "$(jq '.ipv6.routes' <<<"$st")" -ge "$want6" ]; do
		(($(now_ms) - t0 < 300000)) || fail "after the cold start, status does not show every route: ${st:-no status}"
		sleep 0.1
	done
	# "2026-12-03T07:15:26.883 xfibd: sync (start) done ..." (local time)
	t1=$(sed -n 's/^\([0-9T:.-]*\) .*sync (start) done.*/\1/p' "$log" | head -n 1)
	t1=$(date -d "$t1" +%s%3N) || fail "cannot read the time of the sync line in $log"
	[ "$1" != 1 ] || perf_stop ctl-perf-cold.txt
	COLD_MS=$((t1 - t0))
	COLD_SYNC_MS=$(sed -n 's/.*sync (start) done in \([0-9]*\) ms.*/\1/p' "$log" | head -n 1)
	COLD_DUMP_MS=$(sed -n 's/.*netlink dumps read in \([0-9]*\) ms.*/\1/p' "$log" | head -n 1)
	COLD_CPU_MS=$(cpu_ms "$XFIBD_PID")
	COLD_ANON=$(awk '/^RssAnon/ { print $2 * 1024 }' "/proc/$XFIBD_PID/status")
	COLD_MAPPED=$(awk '/^RssFile|^RssShmem/ { n += $2 * 1024 } END { print n }' "/proc/$XFIBD_PID/status")
	COLD_MEM_LINE=$(grep -o 'routing memory: .*' "$log" | head -n 1 || true)
	COLD_ST=$st
}

# median of the numbers on stdin
median() {
	sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}

PIN_BASE=$PIN
COLD_RUNS=${COLD_RUNS:-3}
cold_ms=() cold_sync=() cold_cpu=() cold_dump=()
for i in $(seq "$COLD_RUNS"); do
	cold_start "$i"
	log "cold start $i: $COLD_MS ms (xfibd's log: ${COLD_SYNC_MS:-?} ms), CPU $COLD_CPU_MS ms"
	cold_ms+=("$COLD_MS") cold_sync+=("${COLD_SYNC_MS:-0}") cold_cpu+=("$COLD_CPU_MS")
	cold_dump+=("${COLD_DUMP_MS:-0}")
done
routes=$((want4 + want6))
x="{\"routes\": $routes, \"runs\": $COLD_RUNS, \"all\": [$(IFS=,; echo "${cold_ms[*]}")]}"
rec cold_start_ms "$(printf '%s\n' "${cold_ms[@]}" | median)" ms all "$x"
rec cold_start_sync_log_ms "$(printf '%s\n' "${cold_sync[@]}" | median)" ms all \
	"{\"routes\": $routes, \"note\": \"xfibd's log: dump and first publish, median\"}"
rec cold_start_dump_ms "$(printf '%s\n' "${cold_dump[@]}" | median)" ms all \
	"{\"routes\": $routes, \"note\": \"xfibd's log: the dumps read and parsed into the RIB, median\"}"
rec cold_start_cpu_ms "$(printf '%s\n' "${cold_cpu[@]}" | median)" ms all \
	"{\"routes\": $routes, \"note\": \"xfibd's user + system CPU, the kernel's dump work included, median\"}"
for fam in 4 6; do
	b=$(jq ".ipv$fam.build_us" <<<"$COLD_ST")
	rec cold_start_build_ms "$((b / 1000))" ms "ipv$fam" "$(jq -c ".ipv$fam | {routes, instance: .algorithm}" <<<"$COLD_ST")"
done
# After a cold start the daemon holds the table and nothing of its
# history: its private memory is the RIB's; the mapped part is the
# dataplane's maps, which the kernel holds whether xfibd maps them or not.
rec xfibd_cold_private_bytes "$COLD_ANON" bytes all "{\"routes\": $routes, \"note\": \"RssAnon after the last cold start; $COLD_MEM_LINE\"}"
rec xfibd_cold_private_bytes_per_route "$((COLD_ANON / routes))" bytes all "{\"note\": \"RssAnon / routes mirrored\"}"
rec xfibd_cold_mapped_bytes "$COLD_MAPPED" bytes all "{\"routes\": $routes, \"note\": \"RssFile + RssShmem: the BPF maps mmap()ed\"}"

# ---- 4b. restart: adoption within the lease ------------------------------------

# restart I: SIGTERM, then a new xfibd on the same pin directory; sets
# RESTART_MS (SIGTERM to the new daemon's first renewal) and
# RESTART_LEFT_MS (what was left of the old daemon's lease then).
restart() {
	local log="$XFIB_TMP/xfibd-restart$1.log" t0 t1 st lease_ms
	t0=$(now_ms)
	kill -TERM "$XFIBD_PID"
	wait "$XFIBD_PID" 2>/dev/null || true
	lease_ms=$(($(rctl status -j | jq '.lease.left_ms') + $(now_ms) - t0))
	nsenter --net="/run/netns/$RTR" -- "$XFIBD" -v --pin-dir "$PIN" >>"$log" 2>&1 &
	XFIBD_PID=$!
	XFIB_PIDS+=("$XFIBD_PID")
	while ! grep -q "sync (start) done" "$log"; do
		kill -0 "$XFIBD_PID" 2>/dev/null || fail "xfibd exited during the restart: $(tail -n 5 "$log")"
		(($(now_ms) - t0 < 300000)) || fail "restart not done after 300 s"
		sleep 0.1
	done
	t1=$(sed -n 's/^\([0-9T:.-]*\) .*sync (start) done.*/\1/p' "$log" | head -n 1)
	t1=$(date -d "$t1" +%s%3N) || fail "cannot read the time of the sync line in $log"
	st=$(rctl status -j)
	jq -e --argjson p "$XFIBD_PID" '.lease.valid and .lease.pid == $p' <<<"$st" >/dev/null ||
		fail "restart $1: the new daemon holds no lease: $(jq -c .lease <<<"$st")"
	RESTART_MS=$((t1 - t0))
	RESTART_LEFT_MS=$((lease_ms - RESTART_MS))
}

RESTART_RUNS=${RESTART_RUNS:-3}
restart_ms=() restart_left=()
for i in $(seq "$RESTART_RUNS"); do
	restart "$i"
	log "restart $i: lease renewed by the new xfibd $RESTART_MS ms after the SIGTERM, $RESTART_LEFT_MS ms of the old lease left"
	restart_ms+=("$RESTART_MS") restart_left+=("$RESTART_LEFT_MS")
done
x="{\"routes\": $routes, \"runs\": $RESTART_RUNS, \"all\": [$(IFS=,; echo "${restart_ms[*]}")], \"note\": \"SIGTERM to the new daemon's first renewal, same pin directory, median\"}"
rec restart_ms "$(printf '%s\n' "${restart_ms[@]}" | median)" ms all "$x"
rec restart_lease_left_ms "$(printf '%s\n' "${restart_left[@]}" | median)" ms all \
	"{\"routes\": $routes, \"note\": \"what was left of the old daemon's lease at the takeover, median\"}"

# ---- 5. FRR as the source ---------------------------------------------------

kill "$XFIBD_PID"
wait "$XFIBD_PID" 2>/dev/null || true
[ "${FRR:-1}" = 0 ] || frr_case

# ---- report -----------------------------------------------------------------

mkdir -p "$(dirname "$OUT")"
jq -s --argjson machine "$(bench_machine)" --arg scale "$SCALE" \
	--arg date "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
	'{benchmark: "ctl", date: $date, machine: $machine, scale: $scale,
	  records: .}' "$REC" >"$OUT.tmp"
mv "$OUT.tmp" "$OUT"

echo
echo "Control plane, $total-route table, $CHANGES changes per family, kernel $(uname -r)"
echo
jq -r '.records[] | [.metric, .family, (.value | tostring), .unit, (.map // .instance // "")] | @tsv' "$OUT" |
	while IFS=$'\t' read -r m f v u x; do
		printf '  %-28s %-5s %14s %-9s %s\n' "$m" "$f" "$v" "$u" "$x"
	done
echo "change_latency_*: over every change, one not seen within its timeout counted as the time waited"
echo "(a lower bound); change_timeouts: how many."
echo "Records: $OUT"
if ((${#FAILED[@]})); then
	fail "broken: ${FAILED[*]}"
fi
