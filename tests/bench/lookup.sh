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
# Table on stdout, records in build/bench/lookup.json. Low numbers are
# reported, never an error.
#
# Environment: SCALE=full (IPv4 10, 1000, 100000, 1000000 and IPv6 10,
# 1000, 100000, 250000 prefixes; 5 repetitions of 0.3 s) or small (1000
# each; 1 repetition of 0.1 s; under half a minute); SIZES4 / SIZES6
# (ascending, as many of each), REPS and MIN_TIME override. NKEYS,
# NHOT, KEYS4 (prefixes|uniform), CPU (1, the CPU the measurements run
# on), OUT (build/bench/lookup.json).
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
st=$(rctl status -j)
BASE4=$(jq '.ipv4.routes' <<<"$st")
BASE6=$(jq '.ipv6.routes' <<<"$st")
log "router's own routes (connected, local): $BASE4 IPv4, $BASE6 IPv6"

# ---- measuring ----------------------------------------------------------

fam_name() { echo "ipv$1"; }

# family_status FAMILY: the family's object of xfibctl status -j.
family_status() { rctl status -j | jq -c ".ipv$1"; }

# measure FAMILY ALGO ROUTES: runs lookupbench on the published instance
# (or, for ALGO lpm_trie or fib_lookup, that baseline) and appends its
# results, with the instance's status, to SAMPLES.
measure() {
	local fam=$1 algo=$2 n=$3 st src=prefixes pfx="$XFIB_TMP/prefixes" out base=()
	st=$(family_status "$fam")
	[ "$fam" = 6 ] || src=$KEYS4
	case $algo in
	lpm_trie | fib_lookup) base=(--baseline "$algo" --iif "$R_GEN") ;;
	esac
	# The prefixes: keys inside them, and the LPM trie's content.
	head -n "$n" "$XFIB_TMP/v$fam.batch" | awk '{ print $3 }' >"$pfx"
	if ! out=$(in_ns "$RTR" "$LOOKUPBENCH" --pin-dir "$PIN" --family "$fam" --source "$src" \
		--nkeys "$NKEYS" --hot "$NHOT" --reps "$REPS" --min-time "$MIN_TIME" \
		--cpu "$CPU" "${base[@]}" <"$pfx" 2>"$XFIB_TMP/lookupbench.err"); then
		log "IPv$fam $algo $n routes: lookupbench failed: $(tail -n 3 "$XFIB_TMP/lookupbench.err")"
		return 0
	fi
	# Warnings (a sum mismatch, a retry after a swap) stay visible.
	[ ! -s "$XFIB_TMP/lookupbench.err" ] || cat "$XFIB_TMP/lookupbench.err" >&2
	jq -c --argjson n "$n" --argjson st "$st" '. + {routes: $n,
		routes_total: $st.routes, memory: $st.memory,
		ranges_or_groups: $st.ranges, build_us: $st.build_us}' <<<"$out" |
		tee -a "$SAMPLES" | jq -r '"IPv\(.family[3:]) \(.algorithm) \(.routes) routes, \(.keys) keys: "
			+ "kernel \(.bpf_ns_median * 100 | round / 100) ns, "
			+ (if .native_ns_median then "native \(.native_ns_median * 100 | round / 100) ns, " else "" end)
			+ "hits \(.hit_pct)%, sums \(if .check then "agree" else "DIFFER" end)"' |
		while read -r l; do log "$l"; done
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
	for fam in 4 6; do
		if [ "$fam" = 4 ]; then n=$n4 algos="bsearch4 dxr dir24_8"; else n=$n6 algos="bsearch6 trie6 poptrie6"; fi
		fitted=""
		for algo in $algos; do
			if force_algo "$fam" "$algo"; then
				measure "$fam" "$algo" "$n"
				fitted="$fitted $algo"
			fi
		done
		rctl algo "ipv$fam" auto >/dev/null || log "IPv$fam: back to automatic selection failed"
		for algo in lpm_trie fib_lookup; do
			measure "$fam" "$algo" "$n"
		done
		st=$(family_status "$fam")
		jq -n -c --argjson fam "$fam" --argjson n "$n" --arg fit "$fitted" --argjson st "$st" \
			'{family: "ipv\($fam)", routes: $n, measured: ($fit | split(" ") | map(select(. != ""))),
			  auto: $st.algorithm}' >>"$STEPS"
		log "IPv$fam $n prefixes: automatic selection runs $(jq -r .algorithm <<<"$st")"
	done
done

# ---- report -------------------------------------------------------------

mkdir -p "$(dirname "$OUT")"
jq -n --slurpfile s "$SAMPLES" --slurpfile steps "$STEPS" --arg kernel "$(uname -r)" \
	--argjson ncpu "$(nproc)" --arg scale "$SCALE" --argjson cpu "$CPU" \
	--arg cpu_model "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)" \
	--arg date "$(date -u +%Y-%m-%dT%H:%M:%SZ)" --argjson base4 "$BASE4" \
	--argjson base6 "$BASE6" --arg keys4 "$KEYS4" '
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
	 router_routes: {ipv4: $base4, ipv6: $base6},
	 note: "ratio_to_native = value / the native value of the same metric: for ns_per_lookup above 1 means the BPF program is slower, for mlookups_per_s below 1",
	 steps: $steps,
	 summary: $sum,
	 records: [ $sum[] as $r |
		({metric: "bpf_ns_per_lookup", value: ($r.bpf_ns_median | r4), unit: "ns",
		  ratio_to_native: nat($r; $r.bpf_ns_median / $r.native_ns_median | r4)},
		 {metric: "bpf_mlookups_per_s", value: ($r.bpf_mlps | r4), unit: "Mlookups/s",
		  ratio_to_native: nat($r; $r.bpf_mlps / $r.native_mlps | r4)},
		 (select($r.native_ns_median) |
		  {metric: "native_ns_per_lookup", value: ($r.native_ns_median | r4), unit: "ns",
		   ratio_to_native: 1},
		  {metric: "native_mlookups_per_s", value: ($r.native_mlps | r4), unit: "Mlookups/s",
		   ratio_to_native: 1}))
		| {bench: "lookup", family: $r.family, algorithm: $r.algorithm,
		   routes: $r.routes, keys: $r.keys} + .
		  + {repetitions: $r.repetitions, key_source: $r.key_source,
		     nkeys: $r.nkeys, hit_pct: $r.hit_pct, sums_agree: $r.check} ]}' >"$OUT.tmp"
mv "$OUT.tmp" "$OUT"

echo
echo "Longest-prefix-match lookups on the live pinned tables, one CPU (cpu$CPU of $(nproc)), kernel $(uname -r)"
echo "BPF: BPF_PROG_TEST_RUN, $(jq -r '.summary[0].lookups_per_run // 256' "$OUT") lookups per run; native: same code, same maps mmap()ed;"
echo "medians of $REPS repetitions; keys: random = $NKEYS (IPv4 $KEYS4, IPv6 inside table prefixes), hot = $NHOT"
echo
printf '%-4s %-10s %8s %-6s | %9s %10s | %9s %10s | %7s | %6s %s\n' \
	fam algorithm routes keys "BPF ns" "BPF Ml/s" "native ns" "nat. Ml/s" "BPF/nat" "hits" check
jq -r '.summary[] | [.family, .algorithm, .routes, .keys, .bpf_ns_median, .bpf_mlps,
	(.native_ns_median // "-"), (.native_mlps // "-"), .hit_pct, .check] | @tsv' "$OUT" |
	while IFS=$'\t' read -r f a n k bn bm nn nm hit ok; do
		if [ "$nn" = - ]; then
			printf '%-4s %-10s %8s %-6s | %9.2f %10.1f | %9s %10s | %7s | %5.1f%% %s\n' \
				"v${f#ipv}" "$a" "$n" "$k" "$bn" "$bm" - - - "$hit" baseline
			continue
		fi
		printf '%-4s %-10s %8s %-6s | %9.2f %10.1f | %9.2f %10.1f | %6.2fx | %5.1f%% %s\n' \
			"v${f#ipv}" "$a" "$n" "$k" "$bn" "$bm" "$nn" "$nm" \
			"$(jq -n "$bn / $nn")" "$hit" "$([ "$ok" = true ] && echo ok || echo 'SUMS DIFFER')"
	done
echo
echo "Automatic selection per size:"
jq -r '.steps[] | "  \(.family) \(.routes) prefixes: \(.auto) (measured: \(.measured | join(", ")))"' "$OUT"
echo
echo "BPF/nat = ns per lookup, BPF over native (above 1: the BPF program is slower);"
echo "hits = keys with a route; check = both paths summed the same nexthops over one pass."
echo "Records: $OUT"
