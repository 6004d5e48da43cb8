#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Forwarding rate across a namespaced router, kernel stack vs xfib, in one
# run (make bench-fwd, as root).
#
#   gen --(gen0 / r-gen)--> router --(r-sink / sink0)--> sink
#
# gen sends 64-byte UDP frames with BPF_PROG_TEST_RUN live frames
# (tests/bench/gen.bpf.c), cycling over NDST destinations in
# 198.19.0.0/16 and 2001:db8:ff00::/64, all routed by the router to the
# sink through a permanent neighbour; the sink counts and drops them in
# XDP (tests/bench/sink.bpf.c). For each family, REPS repetitions of SECS
# seconds measure (a) the router kernel forwarding (no XDP on the router,
# ip_forward on) and (b) xfib attached to both router ports with xfibd
# running. The two paths alternate within each repetition, so a slow
# phase of the machine hits both.
#
# Reported per path and family: median Mpps received at the sink, the
# generator's rate, loss (sent vs received), the ratio xfib/kernel, and a
# check that the path measured was the one forwarding: the router's
# IpForwDatagrams / Ip6OutForwDatagrams against xfib's forwarded_v4/v6.
# Table on stdout, records in build/bench/fwd.json. Low numbers are
# reported, never an error.
#
# CPUs: the generator is pinned to GEN_CPU (0). The router and the sink
# are not pinned: a veth schedules its peer's NAPI on the CPU that
# transmits, so their receive processing runs as NET_RX softirq wherever
# the frames were sent from, which is the generator's CPU, at the end of
# each generator batch (or in that CPU's ksoftirqd). In practice the
# figures are for generator + router + sink sharing one core, and the
# generator cannot outrun the router (it waits for the softirq), so loss
# stays near zero and the rate is what the shared core sustains. The
# per-CPU busy/softirq table printed at the end shows where the work
# actually ran in this run; the second CPU's load is someone else's.
#
# Environment: SCALE=small (3 x 0.5 s, under a minute) or full (5 x 2 s,
# default); REPS, SECS override either. NDST (256, at most 65536)
# destinations; ROUTES=host (one /32 and /128 per destination, default)
# or prefix (one 198.19.0.0/16 and one 2001:db8:ff00::/64); GEN_CPU (0);
# OUT (build/bench/fwd.json).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib/netns.sh
. "$here/../lib/netns.sh"

SCALE=${SCALE:-full}
case $SCALE in
full) REPS=${REPS:-5} SECS=${SECS:-2} ;;
small) REPS=${REPS:-3} SECS=${SECS:-0.5} ;;
*) echo "fwd.sh: SCALE must be full or small" >&2; exit 2 ;;
esac
NDST=${NDST:-256}
ROUTES=${ROUTES:-host}
GEN_CPU=${GEN_CPU:-0}
OUT=${OUT:-$XFIB_BUILD/bench/fwd.json}
FWDBENCH=${FWDBENCH:-$XFIB_BUILD/bench/fwdbench}
DST4_BASE=198.19.0.0
DST6_BASE=2001:db8:ff00::
WARMUP=20000

if ! [[ $NDST =~ ^[0-9]+$ ]] || ((NDST < 1 || NDST > 65536)); then
	echo "fwd.sh: NDST must be 1..65536" >&2
	exit 2
fi
if ! [[ $REPS =~ ^[0-9]+$ ]] || ((REPS < 1)); then
	echo "fwd.sh: REPS must be a positive integer" >&2
	exit 2
fi
case $ROUTES in
host | prefix) ;;
*) echo "fwd.sh: ROUTES must be host or prefix" >&2; exit 2 ;;
esac
[ -x "$FWDBENCH" ] || { echo "fwd.sh: $FWDBENCH not built (make $FWDBENCH)" >&2; exit 1; }

# shellcheck disable=SC2034 # read by topo_create
XFIB_PIN_PREFIX=xfib-bench
xfib_init
# A private copy, like xfibd and xfibctl: a rebuild cannot swap it mid-run.
cp "$FWDBENCH" "$XFIB_TMP/bin/"
FWDBENCH="$XFIB_TMP/bin/fwdbench"
SAMPLES="$XFIB_TMP/samples.jsonl"
: >"$SAMPLES"
NCPU=$(nproc)
HZ=$(getconf CLK_TCK)

# ---- topology -----------------------------------------------------------

topo_create 0

# dst_n FAMILY I: the I-th destination.
dst_n() {
	local b=$((198 << 24 | 19 << 16))
	if [ "$1" = 4 ]; then
		printf '%d.%d.%d.%d' $(((b + $2) >> 24 & 255)) $(((b + $2) >> 16 & 255)) \
			$(((b + $2) >> 8 & 255)) $(((b + $2) & 255))
	else
		printf '2001:db8:ff00::%x' "$2"
	fi
}

# Routes and neighbours exist before xfibd starts: its first dump holds
# them all. Permanent neighbours: no resolution, no expiry mid-run.
ip -n "$RTR" neigh replace "$SNK4" lladdr "$SNK_MAC" dev "$R_SNK" nud permanent
ip -n "$RTR" -6 neigh replace "$SNK6" lladdr "$SNK_MAC" dev "$R_SNK" nud permanent
if [ "$ROUTES" = host ]; then
	NROUTES=$NDST
	for ((i = 0; i < NDST; i++)); do
		echo "route add $(dst_n 4 "$i")/32 via $SNK4 dev $R_SNK"
		echo "route add $(dst_n 6 "$i")/128 via $SNK6 dev $R_SNK"
	done >"$XFIB_TMP/routes"
else
	NROUTES=1
	{
		echo "route add 198.19.0.0/16 via $SNK4 dev $R_SNK"
		echo "route add 2001:db8:ff00::/64 via $SNK6 dev $R_SNK"
	} >"$XFIB_TMP/routes"
fi
ip -n "$RTR" -batch "$XFIB_TMP/routes" || fail "adding $NROUTES routes per family"
log "$NROUTES route(s) per family to $NDST destinations behind $SNK"

# The router's ingress veth gets the generator's frames through
# ndo_xdp_xmit: without an XDP program (the kernel path) it accepts them
# only with GRO on. UDP GRO does not merge forwarded datagrams unless
# rx-udp-gro-forwarding is on, so each frame stays one packet.
ip netns exec "$RTR" ethtool -K "$R_GEN" gro on >/dev/null || fail "gro on $R_GEN"

xfibd_start
resolve_neighbours

SINK_PIN="$PIN-sink"
XFIB_PIN_DIRS+=("$SINK_PIN")
in_ns "$SNK" "$FWDBENCH" sink-attach --pin-dir "$SINK_PIN" "$SNK_IF" ||
	fail "sink-attach $SNK/$SNK_IF"

# ---- measuring ----------------------------------------------------------

sink_packets() {
	in_ns "$SNK" "$FWDBENCH" sink-count --pin-dir "$SINK_PIN" | awk '{ print $2 }'
}

kfwd() { if [ "$1" = 4 ]; then kfwd4 "$RTR"; else kfwd6 "$RTR"; fi; }

# cpu_ticks: "busy softirq" clock ticks per CPU, one CPU per line.
cpu_ticks() {
	# shellcheck disable=SC2016
	awk '$1 ~ /^cpu[0-9]+$/ { print $2 + $3 + $4 + $7 + $8 + $9, $8 }' /proc/stat
}

# gen FAMILY ARGS...: the generator, pinned, towards the router.
gen() {
	local fam=$1 src=$GEN4 dst=$DST4_BASE
	shift
	[ "$fam" = 4 ] || { src=$GEN6; dst=$DST6_BASE; }
	in_ns "$GEN" "$FWDBENCH" gen --cpu "$GEN_CPU" --ifname "$GEN_IF" \
		--dst-mac "$R_GEN_MAC" --src-mac "$GEN_MAC" --src "$src" \
		--dst-base "$dst" --ndst "$NDST" --family "$fam" "$@"
}

ATTACHED=0

use_kernel() {
	[ "$ATTACHED" = 1 ] || return 0
	# shellcheck disable=SC2046
	rctl detach $(router_ports) >/dev/null || fail "xfibctl detach"
	! xdp_prog_on "$RTR" "$R_GEN" || fail "XDP program still on $R_GEN after detach"
	ATTACHED=0
}

# xdp_state DEV: the router port's XDP attachment, for messages.
xdp_state() { ip -n "$RTR" -d -j link show dev "$1" | jq -c '.[0].xdp // "none"'; }

# attach_ports: xfibctl attach on every router port, checked, with a few
# retries: a benchmark should not die of one transient failure, but the
# failure is logged.
attach_ports() {
	local try p ok
	for try in 1 2 3; do
		ok=1
		# shellcheck disable=SC2046 # word splitting of the port list intended
		rctl attach $(router_ports) >/dev/null || ok=0
		for p in $(router_ports); do
			xdp_prog_on "$RTR" "$p" || ok=0
		done
		[ "$ok" = 0 ] || return 0
		log "attach try $try failed: $(for p in $(router_ports); do
			printf '%s %s ' "$p" "$(xdp_state "$p")"; done)"
		for p in $(router_ports); do
			rctl detach "$p" >/dev/null 2>&1 || true
		done
		sleep 0.2
	done
	fail "xfibctl attach $(router_ports | xargs) failed 3 times"
}

# use_xfib: attaches the router ports, then waits until a burst per
# family is forwarded by xfib (the daemon publishes the new ports).
use_xfib() {
	local fam x0 x1 deadline
	[ "$ATTACHED" = 0 ] || return 0
	attach_ports
	ATTACHED=1
	for fam in 4 6; do
		deadline=$((SECONDS + 5))
		while :; do
			x0=$(counter "forwarded_v$fam")
			gen "$fam" --packets "$WARMUP" >/dev/null
			x1=$(counter "forwarded_v$fam")
			((x1 - x0 >= WARMUP * 9 / 10)) && break
			[ "$SECONDS" -lt "$deadline" ] ||
				fail "xfib does not forward IPv$fam after attach ($(stats_line))"
			sleep 0.1
		done
	done
}

# measure PATH FAMILY REP: one repetition; appends a JSON line to SAMPLES.
measure() {
	local path=$1 fam=$2 rep=$3 rx0 rx1 k0 k1 x0 x1 c0 c1 out
	# Warm the path (caches, page pool, neighbour entries) outside the
	# timed run.
	gen "$fam" --packets "$WARMUP" >/dev/null
	sleep 0.2
	rx0=$(sink_packets)
	k0=$(kfwd "$fam")
	x0=$(counter "forwarded_v$fam")
	c0=$(cpu_ticks)
	out=$(gen "$fam" --duration "$SECS") || fail "generator: $out"
	c1=$(cpu_ticks)
	# Let the softirqs still holding frames finish before counting.
	sleep 0.2
	rx1=$(sink_packets)
	k1=$(kfwd "$fam")
	x1=$(counter "forwarded_v$fam")
	# shellcheck disable=SC2086 # out is "sent N seconds S mpps R"
	set -- $out
	jq -n -c --arg path "$path" --argjson fam "$fam" --argjson rep "$rep" \
		--argjson sent "$2" --argjson secs "$4" \
		--argjson rx $((rx1 - rx0)) --argjson kfwd $((k1 - k0)) \
		--argjson xfwd $((x1 - x0)) --argjson hz "$HZ" \
		--arg c0 "$c0" --arg c1 "$c1" '
		def ticks: split("\n") | map(split(" ") | map(tonumber));
		($c0 | ticks) as $a | ($c1 | ticks) as $b |
		{path: $path, family: $fam, rep: $rep, sent: $sent, seconds: $secs,
		 received: $rx, kernel_forwarded: $kfwd, xfib_forwarded: $xfwd,
		 rx_mpps: ($rx / $secs / 1e6), tx_mpps: ($sent / $secs / 1e6),
		 # The sink also counts the odd frame of the router itself
		 # (IPv6 neighbour discovery, MLD), so received can exceed
		 # sent by a few: no negative loss.
		 loss_pct: (if $sent > 0 and $sent > $rx then ($sent - $rx) * 100 / $sent else 0 end),
		 cpu_busy_pct: [range($a | length) as $i
			| ($b[$i][0] - $a[$i][0]) * 100 / $hz / $secs],
		 cpu_softirq_pct: [range($a | length) as $i
			| ($b[$i][1] - $a[$i][1]) * 100 / $hz / $secs]}' >>"$SAMPLES"
	log "$(tail -n 1 "$SAMPLES" | jq -r '"\(.path) IPv\(.family) rep \(.rep): "
		+ "rx \(.rx_mpps * 1000 | round / 1000) Mpps, tx \(.tx_mpps * 1000 | round / 1000) Mpps, "
		+ "loss \(.loss_pct * 100 | round / 100)%, kernel fwd \(.kernel_forwarded), "
		+ "xfib fwd \(.xfib_forwarded)"')"
}

log "$REPS repetitions x $SECS s per path and family, $NDST destinations, generator on CPU $GEN_CPU"
for ((rep = 1; rep <= REPS; rep++)); do
	# Alternate the order: each repetition toggles the attachment once.
	if ((rep % 2)); then order="kernel xfib"; else order="xfib kernel"; fi
	for path in $order; do
		if [ "$path" = kernel ]; then use_kernel; else use_xfib; fi
		for fam in 4 6; do
			measure "$path" "$fam" "$rep"
		done
	done
done
use_kernel
in_ns "$SNK" "$FWDBENCH" sink-detach --pin-dir "$SINK_PIN" || true

# ---- report -------------------------------------------------------------

mkdir -p "$(dirname "$OUT")"
jq -s --arg kernel "$(uname -r)" --argjson ncpu "$NCPU" --arg scale "$SCALE" \
	--argjson reps "$REPS" --argjson secs "$SECS" --argjson ndst "$NDST" \
	--argjson routes "$NROUTES" --arg rmode "$ROUTES" --argjson gcpu "$GEN_CPU" \
	--arg date "$(date -u +%Y-%m-%dT%H:%M:%SZ)" '
	def median: sort | if length == 0 then null
		elif length % 2 == 1 then .[length / 2 | floor]
		else (.[length / 2 - 1] + .[length / 2]) / 2 end;
	def r4: . * 10000 | round / 10000;
	. as $s |
	# One summary per family and path.
	[ (4, 6) as $f | ("kernel", "xfib") as $p |
	  [$s[] | select(.family == $f and .path == $p)] as $x |
	  ($x | map(.received) | add) as $rx |
	  {family: $f, path: $p, n: ($x | length),
	   rx: ($x | map(.rx_mpps) | median), tx: ($x | map(.tx_mpps) | median),
	   rx_min: ($x | map(.rx_mpps) | min), rx_max: ($x | map(.rx_mpps) | max),
	   loss: ($x | map(.loss_pct) | median),
	   rx_samples: ($x | map(.rx_mpps | r4)),
	   kpct: (if $rx > 0 then ($x | map(.kernel_forwarded) | add) * 100 / $rx else 0 end),
	   xpct: (if $rx > 0 then ($x | map(.xfib_forwarded) | add) * 100 / $rx else 0 end),
	   busy: [range($x[0].cpu_busy_pct | length) as $i | $x | map(.cpu_busy_pct[$i]) | median],
	   si: [range($x[0].cpu_softirq_pct | length) as $i | $x | map(.cpu_softirq_pct[$i]) | median]}
	] as $sum |
	($sum | map({key: "\(.family)", value: .}) | map(select(.value.path == "kernel")) | from_entries) as $k |
	# ratio: of the medians. paired: the median of the ratios of the
	# two paths in the same repetition, measured seconds apart, which
	# shifts less when the machine itself speeds up or slows down.
	$sum | map(.family as $f | . + {
		ratio: (if $k["\($f)"].rx > 0 then .rx / $k["\($f)"].rx else null end),
		paired: (if .path == "kernel" then 1 else
			[$s[] | select(.family == $f and .path == "xfib") as $x |
			 $s[] | select(.family == $f and .path == "kernel" and
				       .rep == $x.rep and .rx_mpps > 0) |
			 $x.rx_mpps / .rx_mpps] | median end),
	                verified: (if .path == "kernel" then .kpct >= 99 and .xpct == 0
	                           else .xpct >= 99 and .kpct <= 0.1 end)}) |
	. as $sum |
	{benchmark: "fwd", date: $date, kernel: $kernel, cpus: $ncpu, scale: $scale,
	 frame_bytes: 64, seconds_per_repetition: $secs, generator_cpu: $gcpu,
	 route_mode: $rmode,
	 summary: $sum,
	 records: [ $sum[] as $r |
		({metric: "rx_mpps", value: ($r.rx | r4), unit: "Mpps", ratio_to_kernel: ($r.ratio | r4), samples: $r.rx_samples},
		 {metric: "rx_ratio_paired", value: ($r.paired | r4), unit: "x", ratio_to_kernel: null},
		 {metric: "tx_mpps", value: ($r.tx | r4), unit: "Mpps", ratio_to_kernel: null},
		 {metric: "loss", value: ($r.loss | r4), unit: "%", ratio_to_kernel: null},
		 {metric: "forwarded_by_kernel", value: ($r.kpct | r4), unit: "% of received", ratio_to_kernel: null},
		 {metric: "forwarded_by_xfib", value: ($r.xpct | r4), unit: "% of received", ratio_to_kernel: null},
		 {metric: "path_verified", value: $r.verified, unit: "bool", ratio_to_kernel: null})
		| {path: $r.path, family: ("ipv\($r.family)"), routes: $routes, destinations: $ndst}
		  + . + {repetitions: $r.n} ],
	 samples: ($s | map(.family = "ipv\(.family)"))}' "$SAMPLES" >"$OUT.tmp"
mv "$OUT.tmp" "$OUT"

echo
echo "Forwarding over veth, gen -> router -> sink, 64-byte UDP, $NDST destinations,"
echo "$NROUTES route(s) per family ($ROUTES), $REPS x ${SECS} s per path, generator on CPU $GEN_CPU, $NCPU CPUs, kernel $(uname -r)"
echo
printf '%-5s %-7s %9s %17s %8s %8s %8s %8s  %-26s %s\n' family path "rx Mpps" "min-max" "tx Mpps" loss xfib/k paired "forwarded by (of rx)" check
jq -r '.summary[] | [.family, .path, .rx, .rx_min, .rx_max, .tx, .loss, .ratio, .paired, .kpct, .xpct, .verified] | @tsv' "$OUT" |
	while IFS=$'\t' read -r f p rx mn mx tx loss ratio paired kp xp ok; do
		printf 'IPv%-2s %-7s %9.3f %8.3f-%-8.3f %8.3f %7.2f%% %7.2fx %7.2fx  kernel %5.1f%% xfib %5.1f%%  %s\n' \
			"$f" "$p" "$rx" "$mn" "$mx" "$tx" "$loss" "$ratio" "$paired" "$kp" "$xp" \
			"$([ "$ok" = true ] && echo ok || echo 'NOT this path')"
	done
echo
echo "Median CPU use during the timed runs (busy% / softirq%, per CPU; host-wide, includes anything else running):"
jq -r '.summary[] | "  IPv\(.family) \(.path | . + " " * (7 - length)) " +
	([range(.busy | length) as $i | "cpu\($i) \(.busy[$i] | round)/\(.si[$i] | round)"] | join("  "))' "$OUT"
echo
echo "rx = received by the sink per second of generator run; loss = 1 - received/sent;"
echo "xfib/k = ratio of the medians; paired = median of the per-repetition ratios."
echo "Records: $OUT"
