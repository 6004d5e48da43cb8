#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Lookups per second of each lookup algorithm at several table sizes, in
# the kernel (BPF) and in native C over the same memory, in one run
# (make bench-lookup, as root).
#
# One router namespace (tests/lib/netns.sh) with xfibd running. Its
# kernel gets an Internet-shaped table (scripts/gen-table.py, gateways on
# the router's two sink ports, cached under build/tables/), grown in
# steps: the first N of the generated IPv4 and IPv6 prefixes, then the
# next ones up to the next size (the generator shuffles its output, so a
# head of the file is a random sample of the full table). At each size
# every algorithm that can hold the table is forced in turn (xfibctl algo
# ipv4 bsearch4|dxr|dir24_8, ipv6 bsearch6|trie6|poptrie6) and measured by
# tests/bench/lookupbench.c, which runs the dataplane's lookup code
# against the router's live pinned maps with BPF_PROG_TEST_RUN, then the
# same lookups natively over the same maps mmap()ed, on one CPU. Then the
# family goes back to automatic selection, whose choice is recorded.
#
# Baselines at each size, over the same keys: lpm_trie, the kernel's
# BPF_MAP_TYPE_LPM_TRIE holding the same generated prefixes, and
# fib_lookup, bpf_fib_lookup() against the router's kernel FIB holding the
# same routes (plus its connected ones), entering by the router's r-gen
# port (forwarding on). lookupbench runs in the router's namespace for it.
#
# Keys: "random" is NKEYS destinations (65536), "hot" NHOT (8). Keys are
# random addresses inside random prefixes of the table, so every lookup
# finds a route, as a router's traffic does (KEYS4=uniform: IPv4 keys
# uniform over the address space instead, most of them missing at small
# sizes; uniform IPv6 addresses would almost all miss).
#
# Two modes over the same keys, side by side, for every algorithm and
# baseline: throughput (the keys in order, independent lookups whose
# misses the CPU overlaps) and latency (each key's index offset by the
# previous lookup's result masked with a runtime zero, so that each
# lookup waits for the one before, as a packet's serial work does; see
# tests/bench/lookup.bpf.c). Both in ns per lookup.
#
# The algorithms are those xfibctl status lists for the family (its
# preferences), so that a new one is measured once lookup.bpf.c has
# lookup_NAME and lookup_NAME_lat programs for it (lookupbench picks the
# programs by name; its native loop falls back to dplookup for an
# algorithm it has no inlined loop for).
#
# Memory reads: for each xfib algorithm, an untimed pass over the same
# keys and maps (tests/bench/lookupreads.c) counts the table reads per
# lookup (mean and max; the address of each depends on what the reads
# before it returned), the distinct 64-byte cache lines per lookup, and
# the distinct lines the whole key set touches (its working set), logged
# next to the L2 and L3 sizes of the CPU (cpu0's, from sysfs). Its
# answers must add up to the native loop's: the run fails if not.
#
# Memory: each instance's bytes (xfibctl status) per generated prefix and
# per route it holds (the router's own routes too), and xfibd's resident
# set (VmRSS) per route at each size.
#
# Clustered IPv6 table (CLUSTERED=1): after the sizes, the generated IPv6
# prefixes are replaced by as many of a clustered table
# (tests/bench/gen-bench-table.py clustered6: a few hundred /20-/32
# allocations, runs of /48s, /64s and /128s next to each other) and every
# IPv6 algorithm and baseline is measured again on it (table
# "clustered"; the others are "generated").
#
# Verifier: before measuring, lookupbench --verifier loads every program
# of lookup.bpf.c once over the live maps and reports the instructions
# the verifier processed for each, with its margin to the limit.
#
# Table on stdout, records in build/bench/lookup.json. Low numbers are
# reported, never an error; a program that does not load, or a
# measurement lookupbench cannot make, fails the run (exit 1), after the
# rest has run and been recorded.
#
# Environment: SCALE=full (IPv4 10, 1000, 100000, 1000000 and IPv6 10,
# 1000, 100000, 250000 prefixes; 5 repetitions of 0.3 s) or small (1000
# each; 1 repetition of 0.1 s; about a minute and a half with the clustered table); SIZES4 / SIZES6
# (ascending, as many of each), REPS and MIN_TIME override. NKEYS,
# NHOT, KEYS4 (prefixes|uniform), CPU (1, the CPU the measurements run
# on), OUT (build/bench/lookup.json), ALGOS4 / ALGOS6 (the algorithms to
# force; default: every one of the family), CLUSTERED (1; 0 leaves the
# clustered table out).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib/netns.sh
. "$here/../lib/netns.sh"
# shellcheck source=tests/bench/common.sh
. "$here/common.sh"

SCALE=${SCALE:-full}
case $SCALE in
full)
	SIZES4=${SIZES4:-"10 1000 100000 1000000"}
	SIZES6=${SIZES6:-"10 1000 100000 250000"}
	REPS=${REPS:-5}
	;;
small)
	SIZES4=${SIZES4:-1000}
	SIZES6=${SIZES6:-1000}
	REPS=${REPS:-1}
	MIN_TIME=${MIN_TIME:-0.1}
	;;
*) echo "lookup.sh: SCALE must be full or small" >&2; exit 2 ;;
esac
MIN_TIME=${MIN_TIME:-0.3}
NKEYS=${NKEYS:-65536}
NHOT=${NHOT:-8}
KEYS4=${KEYS4:-prefixes}
CPU=${CPU:-1}
OUT=${OUT:-$XFIB_BUILD/bench/lookup.json}
CLUSTERED=${CLUSTERED:-1}
LOOKUPBENCH=${LOOKUPBENCH:-$XFIB_BUILD/bench/lookupbench}

read -r -a S4 <<<"$SIZES4"
read -r -a S6 <<<"$SIZES6"
((${#S4[@]} == ${#S6[@]} && ${#S4[@]} > 0)) ||
	{ echo "lookup.sh: SIZES4 and SIZES6 need as many sizes each" >&2; exit 2; }
for n in "${S4[@]}" "${S6[@]}" "$REPS"; do
	if ! [[ $n =~ ^[0-9]+$ ]] || ((n < 1)); then
		echo "lookup.sh: sizes and REPS must be positive integers" >&2
		exit 2
	fi
done
case $KEYS4 in
uniform | prefixes) ;;
*) echo "lookup.sh: KEYS4 must be uniform or prefixes" >&2; exit 2 ;;
esac
((CPU < $(nproc))) || CPU=0
[ -x "$LOOKUPBENCH" ] || { echo "lookup.sh: $LOOKUPBENCH not built (make $LOOKUPBENCH)" >&2; exit 1; }

# shellcheck disable=SC2034 # read by topo_create
XFIB_PIN_PREFIX=xfib-bench
xfib_init
# A private copy, like xfibd and xfibctl: a rebuild cannot swap it mid-run.
cp "$LOOKUPBENCH" "$XFIB_TMP/bin/"
LOOKUPBENCH="$XFIB_TMP/bin/lookupbench"
SAMPLES="$XFIB_TMP/samples.jsonl"
STEPS="$XFIB_TMP/steps.jsonl"
: >"$SAMPLES"
: >"$STEPS"

# cache_size LEVEL: bytes of cpu0's data or unified cache of that level
# (0 if sysfs lists none).
cache_size() {
	local d sz
	for d in /sys/devices/system/cpu/cpu0/cache/index*; do
		[ "$(cat "$d/level" 2>/dev/null)" = "$1" ] || continue
		case $(cat "$d/type") in Data | Unified) ;; *) continue ;; esac
		sz=$(cat "$d/size")
		case $sz in
		*K) echo $((${sz%K} * 1024)) ;;
		*M) echo $((${sz%M} * 1048576)) ;;
		*) echo "$sz" ;;
		esac
		return
	done
	echo 0
}
L2=$(cache_size 2)
L3=$(cache_size 3)
# jq: a byte count in KiB or MiB.
JQ_SIZE='def size: if . >= 1048576 then "\(. / 1048576 * 10 | round / 10) MiB"
	else "\(. / 1024 * 10 | round / 10) KiB" end;'

# ---- router and table ---------------------------------------------------

topo_create 0
topo_add_sink2
GW4="$SNK4@$R_SNK,$SNK2_4@$R_SNK2"
GW6="$SNK6@$R_SNK,$SNK2_6@$R_SNK2"

MAX4=${S4[-1]}
MAX6=${S6[-1]}
table=$(bench_table "$MAX4" "$MAX6" 0 0 "$GW4" "$GW6")
# One file per family: the IPv6 lines are those with a colon.
grep -v : "$table" >"$XFIB_TMP/v4.batch" || true
grep : "$table" >"$XFIB_TMP/v6.batch" || true
(($(wc -l <"$XFIB_TMP/v4.batch") >= MAX4 && $(wc -l <"$XFIB_TMP/v6.batch") >= MAX6)) ||
	fail "$table holds fewer prefixes than asked for"

xfibd_start

# Every program of lookup.bpf.c loaded once over the live maps: the
# instructions the verifier processed for each, against its limit. One
# that does not load fails the benchmark (at the end, after the others).
FAILED=()
if ! "$LOOKUPBENCH" --pin-dir "$PIN" --verifier >"$XFIB_TMP/verifier.json" \
	2>"$XFIB_TMP/verifier.err"; then
	cat "$XFIB_TMP/verifier.err" >&2
	FAILED+=("loading lookup.bpf.c")
fi
jq -e . "$XFIB_TMP/verifier.json" >/dev/null 2>&1 || echo '{"programs": []}' >"$XFIB_TMP/verifier.json"
jq -r '.programs[] | "verifier: \(.program): \(.verified_insns) instructions processed"
	+ (if .loaded then "" else ", NOT LOADED" end)' "$XFIB_TMP/verifier.json" |
	while read -r l; do log "$l"; done

st=$(rctl status -j)
BASE4=$(jq '.ipv4.routes' <<<"$st")
BASE6=$(jq '.ipv6.routes' <<<"$st")
log "router's own routes (connected, local): $BASE4 IPv4, $BASE6 IPv6"
# The family's algorithms: those xfibctl status lists, unless given.
[ -n "${ALGOS4:-}" ] || ALGOS4=$(jq -r '.ipv4.preferences | keys | join(" ")' <<<"$st")
[ -n "${ALGOS6:-}" ] || ALGOS6=$(jq -r '.ipv6.preferences | keys | join(" ")' <<<"$st")
log "algorithms: IPv4 $ALGOS4; IPv6 $ALGOS6"

# ---- measuring ----------------------------------------------------------

fam_name() { echo "ipv$1"; }

# family_status FAMILY: the family's object of xfibctl status -j.
family_status() { rctl status -j | jq -c ".ipv$1"; }

# xfibd_rss: xfibd's resident set, bytes.
xfibd_rss() { awk '/^VmRSS/ { print $2 * 1024 }' "/proc/$XFIBD_PID/status"; }

# measure FAMILY ALGO ROUTES [TABLE [PREFIXES]]: runs lookupbench on the
# published instance (or, for ALGO lpm_trie or fib_lookup, that baseline)
# and appends its results, with the instance's status, to SAMPLES. TABLE:
# generated (default) or clustered; PREFIXES: the batch file the keys
# are drawn from (the first ROUTES lines of the family's).
measure() {
	local fam=$1 algo=$2 n=$3 table=${4:-generated} src=prefixes pfx="$XFIB_TMP/prefixes" out base=() st
	local batch=${5:-$XFIB_TMP/v$fam.batch}
	st=$(family_status "$fam")
	[ "$fam" = 6 ] || src=$KEYS4
	case $algo in
	lpm_trie | fib_lookup) base=(--baseline "$algo" --iif "$R_GEN") ;;
	esac
	# The prefixes: keys inside them, and the LPM trie's content.
	head -n "$n" "$batch" | awk '{ print $3 }' >"$pfx"
	if ! out=$(in_ns "$RTR" "$LOOKUPBENCH" --pin-dir "$PIN" --family "$fam" --source "$src" \
		--nkeys "$NKEYS" --hot "$NHOT" --reps "$REPS" --min-time "$MIN_TIME" \
		--cpu "$CPU" "${base[@]}" <"$pfx" 2>"$XFIB_TMP/lookupbench.err"); then
		# A measurement that cannot run is broken tooling, not a slow
		# number: the others still run, and the benchmark fails.
		log "IPv$fam $algo $n routes: lookupbench failed: $(tail -n 3 "$XFIB_TMP/lookupbench.err")"
		FAILED+=("IPv$fam $algo $n routes")
		return 0
	fi
	# Warnings (a sum mismatch, a retry after a swap) stay visible.
	[ ! -s "$XFIB_TMP/lookupbench.err" ] || cat "$XFIB_TMP/lookupbench.err" >&2
	jq -c --argjson n "$n" --argjson st "$st" --arg table "$table" \
		--argjson rss "$(xfibd_rss)" '. + {routes: $n, table: $table,
		routes_total: $st.routes, memory: $st.memory,
		ranges_or_groups: $st.ranges, build_us: $st.build_us,
		xfibd_rss: $rss} + (if .baseline then {} else
		{bytes_per_prefix: ($st.memory / $n), bytes_per_route: ($st.memory / $st.routes)} end)' <<<"$out" |
		tee -a "$SAMPLES" | jq -r "$JQ_SIZE"'"IPv\(.family[3:]) \(.algorithm) \(.routes) routes (\(.table)), \(.keys) keys: "
			+ "kernel \(.bpf_ns_median * 100 | round / 100) ns, latency \(.lat_bpf_ns_median * 100 | round / 100) ns, "
			+ (if .native_ns_median then "native \(.native_ns_median * 100 | round / 100) / \(.lat_native_ns_median * 100 | round / 100) ns, " else "" end)
			+ (if .bytes_per_prefix then "\(.bytes_per_prefix | round) B/prefix, " else "" end)
			+ "hits \(.hit_pct)%, sums \(if .check and .lat_check then "agree" else "DIFFER" end)",
			(select(.reads_per_lookup) |
			 "IPv\(.family[3:]) \(.algorithm) \(.routes) routes (\(.table)), \(.keys) keys: "
			 + "reads \(.reads_per_lookup * 100 | round / 100) (max \(.reads_max)), "
			 + "\(.lines_per_lookup * 100 | round / 100) lines/lookup, "
			 + "working set \(.working_set_bytes | size) (L2 \($l2 | size), L3 \($l3 | size)), "
			 + "answers \(if .reads_check then "agree" else "DIFFER" end)")' \
			--argjson l2 "$L2" --argjson l3 "$L3" |
		while read -r l; do log "$l"; done
	# The counting pass looked up something else than the timed loops:
	# its figures describe other lookups.
	if jq -r 'select(has("reads_check")) | .reads_check' <<<"$out" | grep -qx false; then
		fail "IPv$fam $algo $n routes: the counting pass's answers differ from the native loop's"
	fi
}

# measure_family FAMILY ROUTES [TABLE [PREFIXES]]: every algorithm that
# holds the table, then automatic selection and the baselines; one line
# in STEPS.
measure_family() {
	local fam=$1 n=$2 table=${3:-generated} algos fitted="" algo st
	if [ "$fam" = 4 ]; then algos=$ALGOS4; else algos=$ALGOS6; fi
	for algo in $algos; do
		if force_algo "$fam" "$algo"; then
			measure "$fam" "$algo" "$n" "$table" "${4:-}"
			fitted="$fitted $algo"
		fi
	done
	rctl algo "ipv$fam" auto >/dev/null || log "IPv$fam: back to automatic selection failed"
	for algo in lpm_trie fib_lookup; do
		measure "$fam" "$algo" "$n" "$table" "${4:-}"
	done
	st=$(rctl status -j)
	jq -n -c --argjson fam "$fam" --argjson n "$n" --arg fit "$fitted" --argjson all "$st" \
		--arg table "$table" --argjson rss "$(xfibd_rss)" \
		'$all["ipv\($fam)"] as $st |
		 {family: "ipv\($fam)", routes: $n, table: $table, measured: ($fit | split(" ") | map(select(. != ""))),
		  auto: $st.algorithm, xfibd_rss: $rss, routes_total: $st.routes,
		  routes_all: ($all.ipv4.routes + $all.ipv6.routes)}' >>"$STEPS"
	st=$(jq -c ".ipv$fam" <<<"$st")
	log "IPv$fam $n prefixes ($table): automatic selection runs $(jq -r .algorithm <<<"$st")"
}

# wait_mirrored V4 V6: xfibd's instances hold the router's own routes and
# the first V4 / V6 generated prefixes.
wait_mirrored() {
	local want4=$((BASE4 + $1)) want6=$((BASE6 + $2)) deadline=$((SECONDS + 300)) st
	while :; do
		st=$(rctl status -j)
		[ "$(jq '.ipv4.routes' <<<"$st")" -ge "$want4" ] &&
			[ "$(jq '.ipv6.routes' <<<"$st")" -ge "$want6" ] && return 0
		((SECONDS < deadline)) ||
			fail "xfibd holds $(jq -c '[.ipv4.routes, .ipv6.routes]' <<<"$st") routes, want $want4/$want6"
		sleep 0.2
	done
}

log "sizes IPv4: $SIZES4; IPv6: $SIZES6; $REPS repetitions of >= $MIN_TIME s; keys: $NKEYS random (IPv4 $KEYS4, IPv6 in prefixes), $NHOT hot; CPU $CPU"
prev4=0
prev6=0
for ((s = 0; s < ${#S4[@]}; s++)); do
	n4=${S4[s]} n6=${S6[s]}
	((n4 >= prev4 && n6 >= prev6)) || fail "sizes must ascend"
	{
		sed -n "$((prev4 + 1)),${n4}p" "$XFIB_TMP/v4.batch"
		sed -n "$((prev6 + 1)),${n6}p" "$XFIB_TMP/v6.batch"
	} >"$XFIB_TMP/step.batch"
	t0=$(now_ms)
	[ ! -s "$XFIB_TMP/step.batch" ] || ip -n "$RTR" -batch "$XFIB_TMP/step.batch" ||
		fail "installing routes $prev4..$n4 / $prev6..$n6"
	t1=$(now_ms)
	wait_mirrored "$n4" "$n6"
	t2=$(now_ms)
	log "table: $n4 IPv4 + $n6 IPv6 prefixes (kernel install $((t1 - t0)) ms, mirrored $((t2 - t1)) ms later)"
	prev4=$n4
	prev6=$n6
	measure_family 4 "$n4"
	measure_family 6 "$n6"
done

# The clustered IPv6 table, as many prefixes as the largest size.
if [ "$CLUSTERED" = 1 ]; then
	c6="$XFIB_BUILD/tables/clustered6-$MAX6-${GW6//[@:\/,]/_}.batch"
	if [ ! -s "$c6" ]; then
		python3 "$here/gen-bench-table.py" clustered6 --count "$MAX6" --gw "$GW6" >"$c6.tmp.$$" ||
			fail "gen-bench-table.py clustered6"
		mv "$c6.tmp.$$" "$c6"
	fi
	t0=$(now_ms)
	head -n "$MAX6" "$XFIB_TMP/v6.batch" | sed 's/^route add /route del /' >"$XFIB_TMP/del6.batch"
	ip -n "$RTR" -batch "$XFIB_TMP/del6.batch" || fail "removing the generated IPv6 prefixes"
	# The removals mirrored first: the count below then means the new table.
	deadline=$((SECONDS + 300))
	until (($(jq '.ipv6.routes' <<<"$(rctl status -j)") <= BASE6)); do
		((SECONDS < deadline)) || fail "xfibd still holds the generated IPv6 prefixes"
		sleep 0.2
	done
	ip -n "$RTR" -batch "$c6" || fail "installing $c6"
	wait_mirrored "$MAX4" "$MAX6"
	log "clustered IPv6 table: $MAX6 prefixes from $c6 (swapped in $(($(now_ms) - t0)) ms)"
	measure_family 6 "$MAX6" clustered "$c6"
fi

# ---- report -------------------------------------------------------------

mkdir -p "$(dirname "$OUT")"
jq -n --slurpfile s "$SAMPLES" --slurpfile steps "$STEPS" --arg kernel "$(uname -r)" \
	--slurpfile verifier "$XFIB_TMP/verifier.json" \
	--argjson ncpu "$(nproc)" --arg scale "$SCALE" --argjson cpu "$CPU" \
	--arg cpu_model "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)" \
	--arg date "$(date -u +%Y-%m-%dT%H:%M:%SZ)" --argjson base4 "$BASE4" \
	--argjson base6 "$BASE6" --arg keys4 "$KEYS4" --argjson l2 "$L2" --argjson l3 "$L3" '
	def median: sort | if length == 0 then null
		elif length % 2 == 1 then .[length / 2 | floor]
		else (.[length / 2 - 1] + .[length / 2]) / 2 end;
	def r4: . * 10000 | round / 10000;
	($s | map(. + {
		bpf_mlps: (.bpf_ns | map(1000 / .) | median),
		native_mlps: (.native_ns | map(1000 / .) | median)})) as $sum |
	def nat(r; v): if r.native_ns_median then v else null end;
	{benchmark: "lookup", date: $date, kernel: $kernel, cpu_model: $cpu_model,
	 cpus: $ncpu, cpu: $cpu, scale: $scale, ipv4_key_source: $keys4,
	 router_routes: {ipv4: $base4, ipv6: $base6}, cache_bytes: {l2: $l2, l3: $l3},
	 note: "ratio_to_native = value / the native value of the same metric: for ns_per_lookup above 1 means the BPF program is slower, for mlookups_per_s below 1",
	 steps: $steps,
	 summary: $sum,
	 verifier: $verifier[0],
	 records: ([ $sum[] as $r |
		({metric: "bpf_ns_per_lookup", value: ($r.bpf_ns_median | r4), unit: "ns",
		  ratio_to_native: nat($r; $r.bpf_ns_median / $r.native_ns_median | r4)},
		 {metric: "bpf_mlookups_per_s", value: ($r.bpf_mlps | r4), unit: "Mlookups/s",
		  ratio_to_native: nat($r; $r.bpf_mlps / $r.native_mlps | r4)},
		 {metric: "bpf_latency_ns_per_lookup", value: ($r.lat_bpf_ns_median | r4), unit: "ns",
		  ratio_to_native: nat($r; $r.lat_bpf_ns_median / $r.lat_native_ns_median | r4)},
		 (select($r.native_ns_median) |
		  {metric: "native_ns_per_lookup", value: ($r.native_ns_median | r4), unit: "ns",
		   ratio_to_native: 1},
		  {metric: "native_mlookups_per_s", value: ($r.native_mlps | r4), unit: "Mlookups/s",
		   ratio_to_native: 1},
		  {metric: "native_latency_ns_per_lookup", value: ($r.lat_native_ns_median | r4), unit: "ns",
		   ratio_to_native: 1}),
		 (select($r.reads_per_lookup) |
		  {metric: "reads_per_lookup", value: ($r.reads_per_lookup | r4), unit: "reads",
		   max: $r.reads_max},
		  {metric: "lines_per_lookup", value: ($r.lines_per_lookup | r4), unit: "64-byte lines"},
		  {metric: "working_set_bytes", value: $r.working_set_bytes, unit: "bytes",
		   l2_bytes: $l2, l3_bytes: $l3}
		  | . + {answers_agree: $r.reads_check}),
		 (select($r.bytes_per_prefix and $r.keys == "random") |
		  {metric: "instance_bytes", value: $r.memory, unit: "bytes"},
		  {metric: "bytes_per_prefix", value: ($r.bytes_per_prefix | r4), unit: "bytes"},
		  {metric: "bytes_per_route", value: ($r.bytes_per_route | r4), unit: "bytes"}))
		| {bench: "lookup", family: $r.family, algorithm: $r.algorithm,
		   table: $r.table, routes: $r.routes, keys: $r.keys} + .
		  + {repetitions: $r.repetitions, key_source: $r.key_source,
		     nkeys: $r.nkeys, hit_pct: $r.hit_pct, sums_agree: ($r.check and $r.lat_check)} ]
		+ [ $steps[] | {bench: "lookup", family: .family, algorithm: .auto, table: .table,
		     routes: .routes, metric: "xfibd_rss_bytes", value: .xfibd_rss, unit: "bytes",
		     routes_total: .routes_total},
		    {bench: "lookup", family: .family, algorithm: .auto, table: .table,
		     routes: .routes, metric: "xfibd_rss_bytes_per_route",
		     value: (.xfibd_rss / .routes_all | r4), unit: "bytes",
		     note: "VmRSS / routes held, both families"} ])}' >"$OUT.tmp"
mv "$OUT.tmp" "$OUT"

echo
echo "Longest-prefix-match lookups on the live pinned tables, one CPU (cpu$CPU of $(nproc)), kernel $(uname -r)"
echo "BPF: BPF_PROG_TEST_RUN, $(jq -r '.summary[0].lookups_per_run // 256' "$OUT") lookups per run; native: same code, same maps mmap()ed;"
echo "medians of $REPS repetitions; keys: random = $NKEYS (IPv4 $KEYS4, IPv6 inside table prefixes), hot = $NHOT;"
echo "tput = throughput mode (independent lookups), lat = latency mode (each key waits for the previous result)"
echo
printf '%-4s %-10s %-5s %8s %-6s | %8s %8s | %8s %8s | %7s | %8s | %5s %5s %8s | %6s %s\n' \
	fam algorithm table routes keys "BPF tput" "BPF lat" "nat tput" "nat lat" "BPF/nat" "B/prefix" \
	reads lines "WS KiB" "hits" check
jq -r '.summary[] | [.family, .algorithm, (.table // "generated")[0:5], .routes, .keys,
	.bpf_ns_median, .lat_bpf_ns_median, (.native_ns_median // "-"), (.lat_native_ns_median // "-"),
	(.bytes_per_prefix // "-"), (.reads_per_lookup // "-"), (.lines_per_lookup // "-"),
	(if .working_set_bytes then .working_set_bytes / 1024 else "-" end),
	.hit_pct, (.check and .lat_check)] | @tsv' "$OUT" |
	while IFS=$'\t' read -r f a t n k bn bl nn nl bp rd ln ws hit ok; do
		if [ "$nn" = - ]; then
			printf '%-4s %-10s %-5s %8s %-6s | %8.2f %8.2f | %8s %8s | %7s | %8s | %5s %5s %8s | %5.1f%% %s\n' \
				"v${f#ipv}" "$a" "$t" "$n" "$k" "$bn" "$bl" - - - - - - - "$hit" baseline
			continue
		fi
		if [ "$rd" != - ]; then
			rd=$(printf %.2f "$rd") ln=$(printf %.2f "$ln") ws=$(printf %.1f "$ws")
		fi
		printf '%-4s %-10s %-5s %8s %-6s | %8.2f %8.2f | %8.2f %8.2f | %6.2fx | %8.1f | %5s %5s %8s | %5.1f%% %s\n' \
			"v${f#ipv}" "$a" "$t" "$n" "$k" "$bn" "$bl" "$nn" "$nl" \
			"$(jq -n "$bn / $nn")" "$bp" "$rd" "$ln" "$ws" "$hit" \
			"$([ "$ok" = true ] && echo ok || echo 'SUMS DIFFER')"
	done
echo
echo "xfibd resident memory (VmRSS) per step:"
jq -r '.steps[] | "  after \(.family) \(.table) \(.routes) prefixes: \(.xfibd_rss / 1048576 * 10 | round / 10) MiB, \(.routes_all) routes, \(.xfibd_rss / .routes_all | round) B/route"' "$OUT"
echo
echo "Automatic selection per size:"
jq -r '.steps[] | "  \(.family) \(.routes) prefixes (\(.table)): \(.auto) (measured: \(.measured | join(", ")))"' "$OUT"
echo
echo "ns per lookup in each mode; BPF/nat = throughput ns, BPF over native (above 1: the BPF program is slower);"
echo "B/prefix = the instance's memory per generated prefix;"
echo "reads, lines = table reads and distinct 64-byte cache lines per lookup, WS = the distinct lines the"
echo "key set touches (counting pass, untimed; L2 $((L2 / 1024)) KiB, L3 $((L3 / 1024)) KiB on cpu0);"
echo "hits = keys with a route; check = both paths summed the same nexthops over one pass."
echo
echo "Instructions the verifier processed per program (limit $(jq -r '.verifier.verifier_limit // 1000000' "$OUT")):"
jq -r '.verifier as $v | $v.programs[] | [.program, .verified_insns,
	($v.verifier_limit - .verified_insns), (.verified_insns / $v.verifier_limit * 100),
	(if .loaded then "loaded" else "NOT LOADED" end)] | @tsv' "$OUT" |
	while IFS=$'\t' read -r p n left pct st; do
		printf '  %-22s %8d  margin %8d (%5.1f%% of the limit used)  %s\n' "$p" "$n" "$left" "$pct" "$st"
	done
echo "Records: $OUT"
if ((${#FAILED[@]})); then
	fail "broken: ${FAILED[*]}"
fi
