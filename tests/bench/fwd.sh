#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Forwarding rate across a namespaced router, in one run (make bench-fwd,
# as root): the kernel stack, a bpf_fib_lookup XDP forwarder and xfib with
# each lookup algorithm, at 10 routes and at a full table.
#
#   gen --(gen0 / r-gen)--> router --(r-sink / sink0)--> sink
#                                  `-(r-sink2 / sink0)--> sink2
#
# gen sends 64-byte UDP frames with BPF_PROG_TEST_RUN live frames
# (tests/bench/gen.bpf.c) to NDST destinations spread evenly over
# 198.19.0.0/16 and over 2001:db8:8000::/33 (bits 32..63), in a shuffled
# order (consecutive frames do not share a route). The sinks count
# and drop them in XDP (tests/bench/sink.bpf.c). Paths, per family:
#
#   kernel   no XDP on the router: the kernel forwards (ip_forward on)
#   fibfwd   tests/bench/fibfwd.bpf.c on the router ports: bpf_fib_lookup
#            in the kernel FIB, TTL, MACs, redirect (samples/bpf xdp_fwd)
#   nolookup tests/bench/nolookup.bpf.c on the router ports: no lookup at
#            all: TTL, fixed MACs, redirect to r-sink. The floor: the
#            generator's, the sinks' and the veths' share of the core.
#   xfib     xfibctl attach, with xfibd running; one measurement per
#            lookup algorithm that can hold the table (xfibctl algo
#            ipv4 bsearch4|dir24_8, ipv6 bsearch6|trie6)
#   xfib_ct  the same with the conntrack gate on (every table at full
#            scale, the 10-route table at small scale;
#            GATE=0 leaves it out): the router has a stateful nftables
#            ruleset (forward policy drop, established flows accepted) and
#            a conntrack entry, established both ways, for every flow the
#            generator sends (tests/bench/ctfill), so every packet is
#            forwarded in XDP after a conntrack lookup. Its rate against
#            xfib's in the same repetitions is the gate's cost.
#   kernel_ct  the kernel stack with the same ruleset and entries: what
#            the firewalled router forwards without xfib.
#   xfib_nat, kernel_nat  the same with masquerade: a nat chain
#            masquerading out of r-sink, and every entry source-NATed to
#            the router's address there (ctfill --snat), as masquerade
#            would have made them; xfib forwards them with the NAT in XDP.
#   xfib_rmh, xfib_rmi, xfib_rwg  xfib under policy rules (every table
#            at full scale, the 10-route table at small scale; RULES=0
#            leaves them out): rmh, source-based multi-homing, ten rules
#            before main ("from 198.18.60+i.0/24 lookup 100+i", each table
#            a default route), which the generator's source matches none
#            of: every packet passes ten rules, then main answers (the ten
#            are one run on the source: one bisection skips them); rmi,
#            the same ten with "iif r-gen" added, which no run holds: every
#            packet reads the ten one by one (what a rule costs); rwg, wg-quick's
#            two ("lookup main suppress_prefixlength 0", then "not fwmark
#            0xca6c lookup 51820"), whose first answers every packet from
#            main's own instance at any table size (main's default
#            routes' answers have nexthop indexes of their own, which the
#            walk suppresses: no copy of main in the rules' table pool),
#            so it is measured at full table too. Each against xfib
#            without rules in the same repetitions: the rules' cost, and
#            per rule read for rmi.
#   xfib_br  xfib with the ten routes' egress a Linux bridge (the 10-route
#            table; BRIDGE=0 leaves it out): bridge br-b on the router,
#            a member into each sink's namespace (r-sinkb, r-sink2b, the
#            sinks' sinkb, counted there too), the ten routes replaced by
#            the same through the bridge, static FDB entries for the
#            sinks' MACs (the sinks never send: the bridge learns
#            nothing). Every packet leaves by a member the FDB names.
#            Against xfib in the same repetitions: the bridge's cost.
#   xfib-full, xfib-noport, xfib-notrace, xfib-trace (VARIANTS; with the
#            first algorithm of each family that holds the table): xfib's
#            own build, xfib built without the per-port counters and
#            xfib built without the trace hook, all three attached by
#            tests/bench/fwdvariant (plain bpf_xdp_attach), and xfib
#            (xfibctl attach) while xfibctl trace runs with a filter
#            every packet matches at its default rate (100/s, on another
#            CPU). The costs are ratios in the same run: per-port
#            counters and idle hook against xfib-full (same attach), an
#            active trace against xfib. (xfibctl attach goes through
#            libxdp, which attaches differently enough to change the rate
#            on veth: compare like with like.)
#
# Tables: "10": a covering 198.19.0.0/16 and 2001:db8:8000::/33 and 9
# more specifics each inside them (the destinations hit all ten); "full":
# the same plus FULL4 + FULL6 Internet-shaped prefixes
# (scripts/gen-table.py) and T4 + T6 prefixes inside the destinations'
# ranges (tests/bench/gen-bench-table.py, over both sinks): T4 nested
# ones in 198.19.0.0/16 (/18 to /32, dense: every address is a
# destination at NDST=65536), T6 of a clustered table in
# 2001:db8:8000::/33 (allocations, runs of /48s, /64s and /128s on the
# destinations). The log says how many of them are the longest match of
# some destination. Traffic only ever goes to the test ranges, so the
# destinations spread over those prefixes inside a full FIB; the lookup
# benchmark covers lookups over the whole table.
#
# The router's own cost per packet: one core carries generator, router
# and sinks, so a path's rate hides how much of the time per packet is
# the router's. Per repetition, each path's time per packet (1 / rx) minus
# nolookup's in the same repetition is the router's own cost; reported
# with its median and range over the repetitions, and the ratios of the
# kernel's and fibfwd's cost to xfib's (per algorithm), per repetition,
# then median and range. On a busy machine a repetition's difference can
# come out at or below zero (the lookup-free run caught a slow phase):
# it stays in the cost's range, and the ratios leave that repetition out.
#
# REPS repetitions of SECS seconds per path, family and table; the paths
# rotate within each repetition, so a slow phase of the machine hits all.
# Reported per path: median Mpps received by the sinks, the generator's
# rate, loss (sent vs received), ratios to the kernel and to fibfwd, and
# a check that the path measured was the one forwarding (the router's
# IpForwDatagrams / Ip6OutForwDatagrams against xfib's forwarded_v4/v6).
# Table on stdout, records in build/bench/fwd.json. Low numbers are
# reported, never an error.
#
# CPUs: the generator is pinned to GEN_CPU (0). A veth runs its peer's
# receive processing on the CPU that transmits, so router and sinks run
# as NET_RX softirq on the generator's core, at the end of each generator
# batch: the generator cannot outrun the router, loss stays near zero and
# the rate is what one shared core sustains. FWD_CPU=N moves the router
# to CPU N instead: threaded NAPI on r-gen, its kthread pinned there (the
# router and the sinks it transmits to then run on N, the generator alone
# on GEN_CPU). It is off by default: on the 2-core VM, with other work on
# the second core, the kthread (an ordinary task, unlike a softirq) got
# too little of it: 0.3-1.3 Mpps at 90%+ loss on every path, against
# 1-9 Mpps sharing the generator's core. The per-CPU busy/softirq figures
# in the records show where work ran (host wide: they include anything
# else running).
#
# Environment: GATE (1; 0: no xfib_ct, xfib_nat paths), BRIDGE (1; 0: no xfib_br), SCALE=full (5 x 2 s; 1M + 250k prefixes, 20000 + 20000 in
# the test ranges; every algorithm xfibctl status lists) or small (3 x 0.3 s; 1000 + 1000,
# 1000 + 1000; dir24_8 and trie6 only; the gate's, the rules' and the
# program variants' paths on the 10-route table only); REPS, SECS, FULL4, FULL6, T4, T6,
# ALGOS4, ALGOS6 override. PERF=1 (PERF=2 keeps perf.data too, for perf
# annotate of a program, as build/bench/fwd-perf-*.data): after each table, a profile of the
# shared core (perf record -C GEN_CPU, flat, by symbol) while the
# generator runs SECS seconds through fibfwd and through xfib with the
# first algorithm that fits (the one the program cost is measured with),
# and where the gate's paths are measured, through xfib_ct and xfib_nat
# with that algorithm, and through xfib_rmh and xfib_rmi where the rules'
# paths are measured, per family, into
# build/bench/fwd-perf-TABLE-PATH-ipvF.txt. NDST (65536 full, 4096 small; a
# power of two, at most 65536), GEN_CPU (0), FWD_CPU (unset), TIME_LOADS
# (9; small: 1) and TIME_CPU (the CPU after GEN_CPU) for the program cost, TABLES ("10
# full"), OUT (build/bench/fwd.json). BASELINE_OBJ: another build of
# xfib_fwd.bpf.o (an earlier commit's, say), timed with the program cost's
# builds; the report gives its time minus this build's.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib/netns.sh
. "$here/../lib/netns.sh"
# shellcheck source=tests/bench/common.sh
. "$here/common.sh"

SCALE=${SCALE:-full}
case $SCALE in
full)
	REPS=${REPS:-5} SECS=${SECS:-2} NDST=${NDST:-65536}
	FULL4=${FULL4:-1000000} FULL6=${FULL6:-250000} T4=${T4:-20000} T6=${T6:-20000}
	# Default: every algorithm xfibctl status lists (set below).
	ALGOS4=${ALGOS4:-} ALGOS6=${ALGOS6:-}
	;;
small)
	REPS=${REPS:-3} SECS=${SECS:-0.3} NDST=${NDST:-4096}
	FULL4=${FULL4:-1000} FULL6=${FULL6:-1000} T4=${T4:-1000} T6=${T6:-1000}
	ALGOS4=${ALGOS4:-dir24_8} ALGOS6=${ALGOS6:-trie6}
	;;
*) echo "fwd.sh: SCALE must be full or small" >&2; exit 2 ;;
esac
GEN_CPU=${GEN_CPU:-0}
FWD_CPU=${FWD_CPU:-}
TABLES=${TABLES:-"10 full"}
OUT=${OUT:-$XFIB_BUILD/bench/fwd.json}
# A profile of an earlier run (another algorithm chosen then) must not end
# up in this run's report beside this run's.
[ "${PERF:-0}" = 0 ] || rm -f "$(dirname "$OUT")"/fwd-perf-*.txt "$(dirname "$OUT")"/fwd-perf-*.data
FWDBENCH=${FWDBENCH:-$XFIB_BUILD/bench/fwdbench}
CTFILL=${CTFILL:-$XFIB_BUILD/bench/ctfill}
GATE=${GATE:-1}
RULES=${RULES:-1}
BRIDGE=${BRIDGE:-1}
FWDVARIANT=${FWDVARIANT:-$XFIB_BUILD/bench/fwdvariant}
VARIANTS=${VARIANTS:-"full noport notrace trace"}
DST4_BASE=198.19.0.0
DST6_BASE=2001:db8:8000::
WARMUP=20000

if ! [[ $NDST =~ ^[0-9]+$ ]] || ((NDST < 1 || NDST > 65536 || (NDST & (NDST - 1)) != 0)); then
	echo "fwd.sh: NDST must be a power of two, 1..65536" >&2
	exit 2
fi
if ! [[ $REPS =~ ^[0-9]+$ ]] || ((REPS < 1)); then
	echo "fwd.sh: REPS must be a positive integer" >&2
	exit 2
fi
[ -x "$FWDBENCH" ] || { echo "fwd.sh: $FWDBENCH not built (make $FWDBENCH)" >&2; exit 1; }
if [ "$GATE" = 1 ]; then
	[ -x "$CTFILL" ] || { echo "fwd.sh: $CTFILL not built (make $CTFILL)" >&2; exit 1; }
	command -v nft >/dev/null || { echo "fwd.sh: the gate case needs nft (nftables)" >&2; exit 1; }
	command -v conntrack >/dev/null ||
		{ echo "fwd.sh: the gate case needs conntrack (conntrack-tools)" >&2; exit 1; }
fi
for v in $VARIANTS; do
	case $v in
	full) ;;
	noport | notrace) o="$XFIB_BUILD/bench/xfib_fwd_$v.bpf.o"
		[ -f "$o" ] && [ -x "$FWDVARIANT" ] ||
			{ echo "fwd.sh: $o or $FWDVARIANT not built (make bench-fwd)" >&2; exit 1; } ;;
	trace) ;;
	*) echo "fwd.sh: VARIANTS: full, noport, notrace, trace" >&2; exit 2 ;;
	esac
done
if [ -n "${BASELINE_OBJ:-}" ] && [ ! -f "$BASELINE_OBJ" ]; then
	echo "fwd.sh: BASELINE_OBJ $BASELINE_OBJ: no such file" >&2
	exit 2
fi
# Destination i: 198.19.0.0 + i * STRIDE4, and 2001:db8:8000:: plus
# i * STRIDE6 in bits 32..63: evenly over the /16 and the /33.
STRIDE4=$((65536 / NDST))
STRIDE6=$((2147483648 / NDST))

# shellcheck disable=SC2034 # read by topo_create
XFIB_PIN_PREFIX=xfib-bench
xfib_init
# A private copy, like xfibd and xfibctl: a rebuild cannot swap it mid-run.
cp "$FWDBENCH" "$XFIB_TMP/bin/"
FWDBENCH="$XFIB_TMP/bin/fwdbench"
if [ "$GATE" = 1 ]; then
	cp "$CTFILL" "$XFIB_TMP/bin/"
	CTFILL="$XFIB_TMP/bin/ctfill"
fi
for v in noport notrace srcalways; do
	[ ! -f "$XFIB_BUILD/bench/xfib_fwd_$v.bpf.o" ] ||
		cp "$XFIB_BUILD/bench/xfib_fwd_$v.bpf.o" "$XFIB_TMP/bin/"
done
cp "$XFIB_BUILD/xfib_fwd.bpf.o" "$XFIB_TMP/bin/xfib_fwd_full.bpf.o"
[ -z "${BASELINE_OBJ:-}" ] || cp "$BASELINE_OBJ" "$XFIB_TMP/bin/xfib_fwd_baseline.bpf.o"
[ ! -x "$FWDVARIANT" ] || { cp "$FWDVARIANT" "$XFIB_TMP/bin/"; FWDVARIANT="$XFIB_TMP/bin/fwdvariant"; }
SAMPLES="$XFIB_TMP/samples.jsonl"
: >"$SAMPLES"
NCPU=$(nproc)
TIME_CPU=${TIME_CPU:-$(((GEN_CPU + 1) % NCPU))}
HZ=$(getconf CLK_TCK)
((GEN_CPU < NCPU)) || GEN_CPU=0

# ---- topology -----------------------------------------------------------

topo_create 0
topo_add_sink2
GW4="$SNK4@$R_SNK,$SNK2_4@$R_SNK2"
GW6="$SNK6@$R_SNK,$SNK2_6@$R_SNK2"

# Permanent neighbours: no resolution, no expiry mid-run (bpf_fib_lookup
# without SKIP_NEIGH needs them resolved too).
ip -n "$RTR" neigh replace "$SNK4" lladdr "$SNK_MAC" dev "$R_SNK" nud permanent
ip -n "$RTR" -6 neigh replace "$SNK6" lladdr "$SNK_MAC" dev "$R_SNK" nud permanent
ip -n "$RTR" neigh replace "$SNK2_4" lladdr "$SNK2_MAC" dev "$R_SNK2" nud permanent
ip -n "$RTR" -6 neigh replace "$SNK2_6" lladdr "$SNK2_MAC" dev "$R_SNK2" nud permanent

# The ten routes: covering prefixes through sink, nine more specifics
# inside them through sink2.
{
	echo "route add 198.19.0.0/16 via $SNK4 dev $R_SNK"
	echo "route add 2001:db8:8000::/33 via $SNK6 dev $R_SNK"
	for k in 1 2 3 4 5 6 7 8 9; do
		echo "route add 198.19.$((16 * k)).0/20 via $SNK2_4 dev $R_SNK2"
		printf 'route add 2001:db8:%x::/37 via %s dev %s\n' $((0x8000 + k * 0x800)) "$SNK2_6" "$R_SNK2"
	done
} >"$XFIB_TMP/routes10"
ip -n "$RTR" -batch "$XFIB_TMP/routes10" || fail "adding the ten routes"

# The router's ingress veth gets the generator's frames through
# ndo_xdp_xmit: without an XDP program (the kernel path) it accepts them
# only with GRO on. UDP GRO does not merge forwarded datagrams unless
# rx-udp-gro-forwarding is on, so each frame stays one packet.
ip netns exec "$RTR" ethtool -K "$R_GEN" gro on >/dev/null || fail "gro on $R_GEN"

xfibd_start
[ -n "$ALGOS4" ] || ALGOS4=$(rctl status -j | jq -r '.ipv4.preferences | keys | join(" ")')
[ -n "$ALGOS6" ] || ALGOS6=$(rctl status -j | jq -r '.ipv6.preferences | keys | join(" ")')
log "xfib algorithms: IPv4 $ALGOS4; IPv6 $ALGOS6"
BASE4=$(rctl status -j | jq '.ipv4.routes')
BASE6=$(rctl status -j | jq '.ipv6.routes')
resolve_neighbours

SINK_PIN="$PIN-sink"
SINK2_PIN="$PIN-sink2"
FIBFWD_PIN="$PIN-fibfwd"
NOLOOKUP_PIN="$PIN-nolookup"
XFIB_PIN_DIRS+=("$SINK_PIN" "$SINK2_PIN" "$FIBFWD_PIN" "$NOLOOKUP_PIN")
in_ns "$SNK" "$FWDBENCH" sink-attach --pin-dir "$SINK_PIN" "$SNK_IF" ||
	fail "sink-attach $SNK/$SNK_IF"
in_ns "$SNK2" "$FWDBENCH" sink-attach --pin-dir "$SINK2_PIN" "$SNK2_IF" ||
	fail "sink-attach $SNK2/$SNK2_IF"

# The bridged egress (xfib_br, see the paths above).
BR_B=br-b SINKB_PIN="$PIN-sinkb" SINK2B_PIN="$PIN-sink2b"
SNKB4=198.18.40.2 SNK2B4=198.18.40.3 SNKB6=2001:db8:40::2 SNK2B6=2001:db8:40::3
if [ "$BRIDGE" = 1 ]; then
	ip -n "$RTR" link add "$BR_B" type bridge stp_state 0 || fail "bridge $BR_B"
	link_ns "$SNK" sinkb "$RTR" r-sinkb
	link_ns "$SNK2" sinkb "$RTR" r-sink2b
	ip -n "$RTR" link set r-sinkb master "$BR_B"
	ip -n "$RTR" link set r-sink2b master "$BR_B"
	ip -n "$RTR" link set "$BR_B" up
	ip -n "$RTR" addr add 198.18.40.1/24 dev "$BR_B"
	ip -n "$RTR" addr add 2001:db8:40::1/64 dev "$BR_B" nodad
	router_sysctls "$RTR" "$BR_B"
	SNKB_MAC=$(mac_of "$SNK" sinkb) SNK2B_MAC=$(mac_of "$SNK2" sinkb)
	for n in "$SNKB4 $SNKB6 $SNKB_MAC r-sinkb" "$SNK2B4 $SNK2B6 $SNK2B_MAC r-sink2b"; do
		# shellcheck disable=SC2086 # four words intended
		set -- $n
		ip -n "$RTR" neigh replace "$1" lladdr "$3" dev "$BR_B" nud permanent
		ip -n "$RTR" -6 neigh replace "$2" lladdr "$3" dev "$BR_B" nud permanent
		bridge -n "$RTR" fdb replace "$3" dev "$4" master static ||
			fail "FDB entry of $3 on $4"
	done
	XFIB_PIN_DIRS+=("$SINKB_PIN" "$SINK2B_PIN")
	in_ns "$SNK" "$FWDBENCH" sink-attach --pin-dir "$SINKB_PIN" sinkb ||
		fail "sink-attach $SNK/sinkb"
	in_ns "$SNK2" "$FWDBENCH" sink-attach --pin-dir "$SINK2B_PIN" sinkb ||
		fail "sink-attach $SNK2/sinkb"
	# The ten routes through the bridge: the same prefixes, each to the
	# same sink, by its link into the bridge.
	sed -e "s|^route add|route replace|" \
		-e "s|via $SNK4 dev $R_SNK|via $SNKB4 dev $BR_B|; s|via $SNK6 dev $R_SNK|via $SNKB6 dev $BR_B|" \
		-e "s|via $SNK2_4 dev $R_SNK2|via $SNK2B4 dev $BR_B|; s|via $SNK2_6 dev $R_SNK2|via $SNK2B6 dev $BR_B|" \
		"$XFIB_TMP/routes10" >"$XFIB_TMP/routes10-bridge"
	sed -e "s|^route add|route replace|" "$XFIB_TMP/routes10" >"$XFIB_TMP/routes10-plain"
	# The members are ports of the router like the others (attached,
	# detached with them).
	router_ports() {
		echo "$R_GEN" "$R_SNK" "$R_SNK2" r-sinkb r-sink2b
	}
fi

# ---- CPU placement --------------------------------------------------------

# napi_threads: pids of the kernel threads polling a device named r-gen
# (any namespace's: ours is told apart by appearing when we ask for it).
napi_threads() {
	ps -e -o pid=,comm= | awk -v p="napi/$R_GEN-" 'index($2, p) == 1 { print $1 }' | sort
}

NAPI_PID=""
PLACEMENT="generator, router and sink share CPU $GEN_CPU (softirq of the sending CPU)"
# place_router: threaded NAPI on r-gen, its thread on FWD_CPU. Called
# again before each measurement: an attach or detach may recreate it.
place_router() {
	local before after
	[ -n "$FWD_CPU" ] || return 0
	((NCPU > 1 && FWD_CPU < NCPU && FWD_CPU != GEN_CPU)) || return 0
	if [ -n "$NAPI_PID" ] && [ -d "/proc/$NAPI_PID" ]; then
		return 0
	fi
	before=$(napi_threads)
	ip netns exec "$RTR" sh -c "echo 0 > /sys/class/net/$R_GEN/threaded; echo 1 > /sys/class/net/$R_GEN/threaded" ||
		{ log "threaded NAPI not available on $R_GEN"; return 0; }
	after=$(napi_threads)
	NAPI_PID=$(comm -13 <(echo "$before") <(echo "$after") | head -n 1)
	if [ -z "$NAPI_PID" ]; then
		log "no NAPI thread appeared for $R_GEN: router runs on the generator's CPU"
		return 0
	fi
	taskset -p -c "$FWD_CPU" "$NAPI_PID" >/dev/null || { log "cannot pin NAPI thread $NAPI_PID"; return 0; }
	PLACEMENT="generator on CPU $GEN_CPU; router and sinks on CPU $FWD_CPU (threaded NAPI of $R_GEN)"
}
place_router
log "$PLACEMENT"

# ---- paths --------------------------------------------------------------

sink_packets() {
	local a b c=0 d=0
	a=$(in_ns "$SNK" "$FWDBENCH" sink-count --pin-dir "$SINK_PIN" | awk '{ print $2 }')
	b=$(in_ns "$SNK2" "$FWDBENCH" sink-count --pin-dir "$SINK2_PIN" | awk '{ print $2 }')
	if [ "$BRIDGE" = 1 ]; then
		c=$(in_ns "$SNK" "$FWDBENCH" sink-count --pin-dir "$SINKB_PIN" | awk '{ print $2 }')
		d=$(in_ns "$SNK2" "$FWDBENCH" sink-count --pin-dir "$SINK2B_PIN" | awk '{ print $2 }')
	fi
	echo $((a + b + c + d))
}

kfwd() { if [ "$1" = 4 ]; then kfwd4 "$RTR"; else kfwd6 "$RTR"; fi; }

# cpu_ticks: "busy softirq" clock ticks per CPU, one CPU per line.
cpu_ticks() {
	# shellcheck disable=SC2016
	awk '$1 ~ /^cpu[0-9]+$/ { print $2 + $3 + $4 + $7 + $8 + $9, $8 }' /proc/stat
}

# gen FAMILY ARGS...: the generator, pinned, towards the router.
gen() {
	local fam=$1 src=$GEN4 dst=$DST4_BASE stride=$STRIDE4
	shift
	[ "$fam" = 4 ] || { src=$GEN6; dst=$DST6_BASE; stride=$STRIDE6; }
	in_ns "$GEN" "$FWDBENCH" gen --cpu "$GEN_CPU" --ifname "$GEN_IF" \
		--dst-mac "$R_GEN_MAC" --src-mac "$GEN_MAC" --src "$src" \
		--dst-base "$dst" --ndst "$NDST" --stride "$stride" --family "$fam" "$@"
}

PATH_NOW=kernel

# ---- the conntrack gate ---------------------------------------------------

GATE_NOW=0  # 0, ct or nat: the ruleset loaded
GATE_KIND=  # ct or nat: the kind of the conntrack entries there

# nf_modes: the router's netfilter modes, "ipv4/ipv6".
nf_modes() { rctl status -j | jq -r '"\(.netfilter.ipv4.mode)/\(.netfilter.ipv6.mode)"'; }

# wait_nf_modes MODES: xfibd publishes MODES ("gate/gate").
wait_nf_modes() {
	local deadline=$((SECONDS + 10))
	until [ "$(nf_modes)" = "$1" ]; do
		((SECONDS < deadline)) || fail "netfilter modes $(nf_modes), expected $1"
		sleep 0.1
	done
}

# gate_on [ct|nat]: the stateful ruleset and an established entry per
# generator flow (again after gate_off: entries not refreshed may have
# expired). nat: a masquerading router's, a nat chain masquerading out of
# r-sink and every entry source-NATed to the router's address there, as
# masquerade would have made it. An entry keeps the NAT it was made with:
# switching kinds flushes conntrack first.
gate_on() {
	local kind=${1:-ct} fam out snat nat=""
	[ "$GATE_NOW" != "$kind" ] || return 0
	gate_off
	if [ "$GATE_KIND" != "$kind" ]; then
		in_ns "$RTR" conntrack -F >/dev/null 2>&1 || fail "conntrack -F"
		GATE_KIND=$kind
	fi
	[ "$kind" = ct ] || nat="chain postrouting {
				type nat hook postrouting priority srcnat;
				oifname \"$R_SNK\" masquerade
			}"
	ip netns exec "$RTR" nft -f - <<-NFT || fail "loading the gate ruleset"
		table inet xfib_bench {
			chain forward {
				type filter hook forward priority filter; policy drop;
				ct state established accept
			}
			$nat
		}
	NFT
	for fam in 4 6; do
		if [ "$fam" = 4 ]; then
			set -- "$GEN4" "$DST4_BASE" "$STRIDE4"
			snat=$R_SNK4
		else
			set -- "$GEN6" "$DST6_BASE" "$STRIDE6"
			snat=$R_SNK6
		fi
		[ "$kind" = nat ] || snat=""
		out=$(in_ns "$RTR" "$CTFILL" --family "$fam" --src "$1" --dst-base "$2" \
			--ndst "$NDST" --stride "$3" ${snat:+--snat "$snat"}) ||
			fail "ctfill IPv$fam: $out"
		log "conntrack entries IPv$fam${snat:+, source-NATed to $snat}: $out"
	done
	wait_nf_modes gate/gate
	GATE_NOW=$kind
}

gate_off() {
	[ "$GATE_NOW" != 0 ] || return 0
	ip netns exec "$RTR" nft delete table inet xfib_bench || fail "removing the gate ruleset"
	wait_nf_modes forward/forward
	GATE_NOW=0
}

RULES_NOW=0 # 0, mh or wg: the policy rules in place
declare -A RULES_TOO_LARGE=() # KIND:TABLE: a table of the set did not fit
TABLE_NOW=

# rules_state FAMILY: the states of the tables the family's rules reach
# (xdp, empty, kernel), one word each.
rules_state() {
	rctl rules -j | jq -r ".ipv$1.rules[] | .xfib.table.state // empty" | sort | uniq -c | xargs
}

# rules_on mh|mi|wg: the rule set (see the paths above) in both families,
# published and its tables built. Returns 1 if a table it reaches is the
# kernel's (too large for the pool; none of these sets' is, at any
# scale: their tables hold a default route each, and wg's lookup of main
# is main's own instance): the path is then not measured.
rules_on() {
	local kind=$1 fam i deadline st iif=()
	[ "$RULES_NOW" != "$kind" ] || return 0
	[ "$kind" != mi ] || iif=(iif "$R_GEN")
	rules_off
	# A table found too large stays so for this table size.
	[ -z "${RULES_TOO_LARGE[$kind:$TABLE_NOW]:-}" ] || return 1
	for fam in 4 6; do
		if [ "$kind" = mh ] || [ "$kind" = mi ]; then
			for ((i = 0; i < 10; i++)); do
				if [ "$fam" = 4 ]; then
					ip -n "$RTR" route add default via "$SNK4" table $((100 + i))
					ip -n "$RTR" rule add pref $((1000 + i)) from "198.18.$((60 + i)).0/24" "${iif[@]}" lookup $((100 + i))
				else
					ip -n "$RTR" -6 route add default via "$SNK6" table $((100 + i))
					ip -n "$RTR" -6 rule add pref $((1000 + i)) from "2001:db8:$((60 + i))::/48" "${iif[@]}" lookup $((100 + i))
				fi
			done
		else
			if [ "$fam" = 4 ]; then
				ip -n "$RTR" route add default via "$SNK2_4" table 51820
			else
				ip -n "$RTR" -6 route add default via "$SNK2_6" table 51820
			fi
			ip -n "$RTR" "-$fam" rule add pref 32764 table main suppress_prefixlength 0
			ip -n "$RTR" "-$fam" rule add pref 32765 not fwmark 0xca6c table 51820
		fi
	done
	RULES_NOW=$kind
	# Published: every family walks, and no table is still loading
	# (xfibd shows one not built yet as the kernel's, then builds it).
	deadline=$((SECONDS + 60))
	for fam in 4 6; do
		until [ "$(rctl rules -j | jq -r ".ipv$fam.walk")" = true ] &&
			st=$(rules_state "$fam") && [[ $st != *kernel* ]]; do
			if rctl rules -j | jq -e ".ipv$fam.rules[] | select(.xfib.table.text // \"\" | test(\"too large\"))" >/dev/null; then
				RULES_TOO_LARGE[$kind:$TABLE_NOW]=1
				log "rules $kind: IPv$fam: a table too large for the pool: the kernel's; not measured"
				return 1
			fi
			if ((SECONDS >= deadline)); then
				log "rules $kind: IPv$fam tables: $st; a table the kernel keeps: not measured"
				return 1
			fi
			sleep 0.2
		done
		log "rules $kind: IPv$fam tables: $(rules_state "$fam")"
	done
}

rules_off() {
	local fam i
	[ "$RULES_NOW" != 0 ] || return 0
	for fam in 4 6; do
		for i in 1000 1001 1002 1003 1004 1005 1006 1007 1008 1009 32764 32765; do
			ip -n "$RTR" "-$fam" rule del pref "$i" 2>/dev/null || true
		done
		for i in 100 101 102 103 104 105 106 107 108 109 51820; do
			ip -n "$RTR" "-$fam" route flush table "$i" 2>/dev/null || true
		done
	done
	RULES_NOW=0
}

BRIDGE_NOW=0

# via_bridge FAMILY: xfib routes the ten routes' destinations out of the
# bridge, each by the member its FDB names.
via_bridge() {
	local d=198.19.0.1 m=r-sinkb
	[ "$1" = 4 ] || d=2001:db8:8000::1
	rctl lookup "$d" -j 2>/dev/null |
		jqe --arg m "$m" '.egress.name == "br-b" and .egress.bridge_port == $m' >/dev/null
}

# bridge_on, bridge_off: the ten routes through the bridge, or back.
bridge_on() {
	[ "$BRIDGE_NOW" = 0 ] || return 0
	ip -n "$RTR" -batch "$XFIB_TMP/routes10-bridge" || fail "the ten routes through the bridge"
	BRIDGE_NOW=1
}

bridge_off() {
	[ "$BRIDGE_NOW" = 1 ] || return 0
	ip -n "$RTR" -batch "$XFIB_TMP/routes10-plain" || fail "the ten routes back"
	BRIDGE_NOW=0
}

# use_kernel: nothing attached to the router ports.
use_kernel() {
	local p
	gate_off
	rules_off
	trace_stop
	case $PATH_NOW in
	xfib*)
		# shellcheck disable=SC2046
		rctl detach $(router_ports) >/dev/null || fail "xfibctl detach"
		;;
	fibfwd)
		in_ns "$RTR" "$FWDBENCH" fibfwd-detach --pin-dir "$FIBFWD_PIN" || fail "fibfwd-detach"
		;;
	nolookup)
		in_ns "$RTR" "$FWDBENCH" nolookup-detach --pin-dir "$NOLOOKUP_PIN" || fail "nolookup-detach"
		;;
	esac
	for p in $(router_ports); do
		! xdp_prog_on "$RTR" "$p" || fail "XDP program still on $RTR/$p"
	done
	PATH_NOW=kernel
}

# xdp_state DEV: the router port's XDP attachment, for messages.
xdp_state() { ip -n "$RTR" -d -j link show dev "$1" | jq -c '.[0].xdp // "none"'; }

use_fibfwd() {
	gate_off
	[ "$PATH_NOW" = fibfwd ] && return 0
	use_kernel
	# shellcheck disable=SC2046
	in_ns "$RTR" "$FWDBENCH" fibfwd-attach --pin-dir "$FIBFWD_PIN" $(router_ports) ||
		fail "fibfwd-attach"
	PATH_NOW=fibfwd
}

# use_nolookup: the lookup-free forwarder, everything out of r-sink to
# the sink.
use_nolookup() {
	gate_off
	[ "$PATH_NOW" = nolookup ] && return 0
	use_kernel
	# shellcheck disable=SC2046
	in_ns "$RTR" "$FWDBENCH" nolookup-attach --pin-dir "$NOLOOKUP_PIN" "$R_SNK" "$SNK_MAC" \
		$(router_ports) || fail "nolookup-attach"
	PATH_NOW=nolookup
}

# record_verifier: the instructions the verifier processed for xfib_fwd
# as xfibctl attach loaded it (scripts/prog-insns.sh), once per run, into
# VERIFIER. A count the kernel does not report fails the benchmark.
VERIFIER="$XFIB_TMP/verifier.json"
record_verifier() {
	[ ! -s "$VERIFIER" ] || return 0
	"$XFIB_TOP/scripts/prog-insns.sh" -j xdp "$RTR" "$R_GEN" >"$VERIFIER" ||
		fail "the forwarding program's processed-instruction count"
	log "verifier: $(jq -r '.[] | "\(.name) (id \(.id)): \(.verified_insns) instructions processed, margin \(.margin)"' "$VERIFIER")"
}

# attach_xfib: xfibctl attach on every router port, checked, with a few
# retries: a benchmark should not die of one transient failure, but the
# failure is logged.
attach_xfib() {
	local try p ok
	for try in 1 2 3; do
		ok=1
		# shellcheck disable=SC2046 # word splitting of the port list intended
		rctl attach $(router_ports) >/dev/null || ok=0
		for p in $(router_ports); do
			xdp_prog_on "$RTR" "$p" || ok=0
		done
		if [ "$ok" = 1 ]; then
			record_verifier
			return 0
		fi
		log "attach try $try failed: $(for p in $(router_ports); do
			printf '%s %s ' "$p" "$(xdp_state "$p")"; done)"
		for p in $(router_ports); do
			rctl detach "$p" >/dev/null 2>&1 || true
		done
		sleep 0.2
	done
	fail "xfibctl attach $(router_ports | xargs) failed 3 times"
}

# trace_start / trace_stop: xfibctl trace, every packet matching, at its
# default rate, output discarded, off the generator's CPU if there is
# another.
TRACE_PID=""
trace_start() {
	local cpus=$GEN_CPU
	((NCPU < 2)) || cpus=$(((GEN_CPU + 1) % NCPU))
	# Not through in_ns (a shell function): $! must be xfibctl itself,
	# for the SIGINT that ends it.
	nsenter --net="/run/netns/$RTR" -- taskset -c "$cpus" "$XFIBCTL" --pin-dir "$PIN" \
		trace -j >/dev/null 2>&1 &
	TRACE_PID=$!
	XFIB_PIDS+=("$TRACE_PID")
	wait_until 5 trace_is_on || fail "xfibctl trace did not start"
}
trace_is_on() {
	bpftool map dump pinned "$PIN/xfib_trace_cfg" -j | jqe '.[0].formatted.value.on == 1' >/dev/null
}
trace_stop() {
	[ -n "$TRACE_PID" ] || return 0
	kill -INT "$TRACE_PID" 2>/dev/null || true
	wait "$TRACE_PID" 2>/dev/null || true
	TRACE_PID=""
}

# use_variant NAME FAMILY: xfib-NAME (see the header) forwarding.
use_variant() {
	local v=$1 fam=$2
	if [ "$v" = trace ]; then
		use_xfib "$fam"
		[ -n "$TRACE_PID" ] || trace_start
		return 0
	fi
	if [ "$PATH_NOW" != "xfib-$v" ]; then
		use_kernel
		# shellcheck disable=SC2046
		in_ns "$RTR" "$FWDVARIANT" --obj "$XFIB_TMP/bin/xfib_fwd_$v.bpf.o" \
			--pin-dir "$PIN" $(router_ports) || fail "fwdvariant $v"
		PATH_NOW="xfib-$v"
	fi
	xfib_warm "$fam"
}

# use_xfib FAMILY: xfib attached; waits until a burst of FAMILY is
# forwarded by xfib (the daemon publishes the new ports).
use_xfib() {
	local fam=$1
	trace_stop
	if [ "$PATH_NOW" != xfib ]; then
		use_kernel
		attach_xfib
		PATH_NOW=xfib
	fi
	xfib_warm "$fam"
}

# xfwd FAMILY: packets xfib forwarded, with conntrack's NAT or without.
xfwd() { echo $(($(counter "forwarded_v$1") + $(counter "forwarded_nat_v$1"))); }

xfib_warm() {
	local fam=$1 x0 x1 k0 k1 deadline
	place_router
	deadline=$((SECONDS + 10))
	while :; do
		x0=$(xfwd "$fam")
		k0=$(kfwd "$fam")
		gen "$fam" --packets "$WARMUP" >/dev/null
		x1=$(xfwd "$fam")
		k1=$(kfwd "$fam")
		# With the router on its own CPU the generator outruns it and
		# the veth ring drops the excess: some forwarded by xfib and
		# none by the kernel is the sign.
		((x1 - x0 >= WARMUP / 100 && k1 == k0)) && break
		[ "$SECONDS" -lt "$deadline" ] ||
			fail "xfib does not forward IPv$fam after attach ($(stats_line))"
		sleep 0.1
	done
}

# measure TABLE ROUTES PATH ALGO FAMILY REP: one repetition; appends a JSON
# line to SAMPLES.
measure() {
	local table=$1 routes=$2 path=$3 algo=$4 fam=$5 rep=$6 rx0 rx1 k0 k1 x0 x1 c0 c1 out
	place_router
	# Warm the path (caches, page pool, neighbour entries) outside the
	# timed run.
	gen "$fam" --packets "$WARMUP" >/dev/null
	sleep 0.05
	rx0=$(sink_packets)
	k0=$(kfwd "$fam")
	x0=$(xfwd "$fam")
	c0=$(cpu_ticks)
	out=$(gen "$fam" --duration "$SECS") || fail "generator: $out"
	c1=$(cpu_ticks)
	# Let the softirqs still holding frames finish before counting.
	sleep 0.1
	rx1=$(sink_packets)
	k1=$(kfwd "$fam")
	x1=$(xfwd "$fam")
	# shellcheck disable=SC2086 # out is "sent N seconds S mpps R"
	set -- $out
	jq -n -c --arg table "$table" --argjson routes "$routes" --arg path "$path" \
		--arg algo "$algo" --argjson fam "$fam" --argjson rep "$rep" \
		--argjson sent "$2" --argjson secs "$4" \
		--argjson rx $((rx1 - rx0)) --argjson kfwd $((k1 - k0)) \
		--argjson xfwd $((x1 - x0)) --argjson hz "$HZ" \
		--arg c0 "$c0" --arg c1 "$c1" '
		def ticks: split("\n") | map(split(" ") | map(tonumber));
		($c0 | ticks) as $a | ($c1 | ticks) as $b |
		{table: $table, routes: $routes, path: $path, algorithm: $algo,
		 family: $fam, rep: $rep, sent: $sent, seconds: $secs,
		 received: $rx, kernel_forwarded: $kfwd, xfib_forwarded: $xfwd,
		 rx_mpps: ($rx / $secs / 1e6), tx_mpps: ($sent / $secs / 1e6),
		 # The sinks also count the odd frame of the router itself
		 # (IPv6 neighbour discovery, MLD), so received can exceed
		 # sent by a few: no negative loss.
		 loss_pct: (if $sent > 0 and $sent > $rx then ($sent - $rx) * 100 / $sent else 0 end),
		 cpu_busy_pct: [range($a | length) as $i
			| ($b[$i][0] - $a[$i][0]) * 100 / $hz / $secs],
		 cpu_softirq_pct: [range($a | length) as $i
			| ($b[$i][1] - $a[$i][1]) * 100 / $hz / $secs]}' >>"$SAMPLES"
	log "$(tail -n 1 "$SAMPLES" | jq -r '"\(.table) \(.path)\(if .algorithm != "" then "/" + .algorithm else "" end) IPv\(.family) rep \(.rep): "
		+ "rx \(.rx_mpps * 1000 | round / 1000) Mpps, tx \(.tx_mpps * 1000 | round / 1000) Mpps, "
		+ "loss \(.loss_pct * 100 | round / 100)%, kernel fwd \(.kernel_forwarded), "
		+ "xfib fwd \(.xfib_forwarded)"')"
}

algos_of() { if [ "$1" = 4 ]; then echo "$ALGOS4"; else echo "$ALGOS6"; fi; }

# gate_priced TABLE: whether the gate's paths are measured on TABLE: at
# full scale on every table; the small scale's (CI's smoke run) prices
# them on the 10-route table only.
gate_priced() { [ "$GATE" = 1 ] && { [ "$1" = 10 ] || [ "$SCALE" = full ]; }; }
# rules_priced TABLE: the same for the policy rules' paths.
rules_priced() { [ "$RULES" = 1 ] && { [ "$1" = 10 ] || [ "$SCALE" = full ]; }; }
# bridge_priced TABLE: the bridged egress, on the 10-route table (the
# full table's test prefixes lead to the sinks' own links).
bridge_priced() { [ "$BRIDGE" = 1 ] && [ "$1" = 10 ]; }
# variants_priced TABLE: the program's variants and their cost per packet
# (time_variants), on every table at full scale, on the 10-route table
# at the small scale (the smoke run's tables differ in size only).
variants_priced() { [ -n "$VARIANTS" ] && { [ "$1" = 10 ] || [ "$SCALE" = full ]; }; }

# perf_gen FILE FAMILY: perf report of the generator's CPU (which also
# runs the router and the sinks) while the generator runs SECS seconds.
perf_gen() {
	local f=$1 fam=$2 data="$XFIB_TMP/perf.data" pid ack="" ctl ackfd comm
	rm -f "$data" "$XFIB_TMP/perf.ctl" "$XFIB_TMP/perf.ack"
	mkfifo "$XFIB_TMP/perf.ctl" "$XFIB_TMP/perf.ack"
	# perf starts with its events off and turns them on when told to,
	# then acknowledges: the run starts then. (Before it, perf reads
	# every process's mappings, which takes seconds on a busy machine.)
	perf record -q -D -1 --control "fifo:$XFIB_TMP/perf.ctl,$XFIB_TMP/perf.ack" \
		-C "$GEN_CPU" -o "$data" 2>"$XFIB_TMP/perf.err" &
	pid=$!
	XFIB_PIDS+=("$pid")
	# Opened both ways: an open never waits for perf, should it fail.
	exec {ctl}<>"$XFIB_TMP/perf.ctl" {ackfd}<>"$XFIB_TMP/perf.ack"
	echo enable >&"$ctl"
	read -r -t 60 -u "$ackfd" ack || true
	exec {ctl}>&- {ackfd}<&-
	[ "$ack" = ack ] || log "profile: perf did not acknowledge the start ($(tr '\n' ' ' <"$XFIB_TMP/perf.err"))"
	gen "$fam" --duration "$SECS" >/dev/null
	kill -INT "$pid"
	wait "$pid" 2>/dev/null || true
	# Only the generator's process and the CPU's softirq thread, where
	# router and sinks run: not the idle loop, nor other jobs on the CPU.
	# Percentages are of what is left. The generator's process is the one
	# its program ran in: perf may not have seen it take its name
	# (fwdbench) and still call it by its parent's.
	comm=$(perf report -q -i "$data" --stdio --sort comm,sym 2>/dev/null |
		awk '$NF ~ /_gen$/ && !c { c = $2 } END { print c }')
	perf report -q -i "$data" --stdio --comms "${comm:-fwdbench},ksoftirqd/$GEN_CPU" \
		--percentage relative --sort sym --percent-limit 0.5 2>/dev/null |
		sed '/^$/d' | head -n 40 >"$f"
	# PERF=2 keeps the recording too, for perf annotate of a program.
	[ "${PERF:-0}" != 2 ] || cp "$data" "${f%.txt}.data"
	# A profile without the generator's program did not see the run.
	if grep -q '_gen$' "$f"; then
		log "profile: $f"
	else
		log "profile: $f: the generator's program is not in it ($(tr '\n' ' ' <"$XFIB_TMP/perf.err"))"
	fi
}

# profile_table TABLE FITS...: PERF=1 profiles (see the header).
profile_table() {
	local table=$1 fa fam algo dir kind
	shift
	command -v perf >/dev/null || { log "PERF=1: perf not installed"; return 0; }
	dir=$(dirname "$OUT")
	mkdir -p "$dir"
	use_fibfwd
	for fam in 4 6; do
		gen "$fam" --packets "$WARMUP" >/dev/null
		perf_gen "$dir/fwd-perf-$table-fibfwd-ipv$fam.txt" "$fam"
	done
	# The algorithm the program cost is measured with (time_variants):
	# the first that fits (bsearch at 10 routes, dir24_8 and poptrie6 at
	# full table, as selection chooses them).
	for fam in 4 6; do
		algo=""
		for fa in "$@"; do [ "${fa%%:*}" != "$fam" ] || [ -n "$algo" ] || algo=${fa#*:}; done
		[ -n "$algo" ] && force_algo "$fam" "$algo" || continue
		use_xfib "$fam"
		gen "$fam" --packets "$WARMUP" >/dev/null
		perf_gen "$dir/fwd-perf-$table-xfib_$algo-ipv$fam.txt" "$fam"
		# Where the gate's and NAT's time goes, where they were measured.
		if gate_priced "$table"; then
			for kind in ct nat; do
				gate_on "$kind"
				use_xfib "$fam"
				gen "$fam" --packets "$WARMUP" >/dev/null
				perf_gen "$dir/fwd-perf-$table-xfib_${kind}_$algo-ipv$fam.txt" "$fam"
			done
			gate_off
		fi
		# And the policy rules' (multi-homing, both kinds).
		if rules_priced "$table"; then
			for kind in mh mi; do
				rules_on "$kind" || continue
				use_xfib "$fam"
				gen "$fam" --packets "$WARMUP" >/dev/null
				perf_gen "$dir/fwd-perf-$table-xfib_r${kind}_$algo-ipv$fam.txt" "$fam"
			done
			rules_off
		fi
	done
}

# frame_hex FAMILY: a 64-byte UDP frame from the generator to the first
# destination, as gen.bpf.c sends them, in hex.
frame_hex() {
	python3 - "$1" "$R_GEN_MAC" "$GEN_MAC" "$GEN4" "$DST4_BASE" "$GEN6" "$DST6_BASE" <<'PY'
import ipaddress, socket, struct, sys
fam, dmac, smac, s4, d4, s6, d6 = sys.argv[1:]
eth = bytes.fromhex(dmac.replace(":", "")) + bytes.fromhex(smac.replace(":", ""))
udp = lambda n: struct.pack("!HHHH", 1024, 9, 8 + n, 0) + bytes(n)
if fam == "4":
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + 8 + 18, 0, 0, 64, 17, 0,
                    socket.inet_aton(s4), socket.inet_aton(d4))
    c = sum(struct.unpack("!10H", h))
    c = (c & 0xffff) + (c >> 16); c = (c & 0xffff) + (c >> 16)
    h = h[:10] + struct.pack("!H", ~c & 0xffff) + h[12:]
    f = eth + b"\x08\x00" + h + udp(18)
else:
    h = struct.pack("!IHBB16s16s", 6 << 28, 8 + 18, 17, 64,
                    ipaddress.IPv6Address(s6).packed, ipaddress.IPv6Address(d6).packed)
    f = eth + b"\x86\xdd" + h + udp(18)
print(f.ljust(64, b"\0").hex())
PY
}

# time_loads WHAT SED PROG...: TIME_LOADS runs of fwdvariant --time over
# PROG... on time_variants' frame and ingress port, on one CPU, not the
# generator's (idle now anyway); each line prefixed by the load's number,
# edited by SED, appended to time_variants' raw file.
time_loads() {
	local what=$1 ed=$2 i
	shift 2
	for ((i = 1; i <= TIME_LOADS; i++)); do
		in_ns "$RTR" taskset -c "$TIME_CPU" "$FWDVARIANT" --time 20000 --pin-dir "$PIN" \
			--ifindex "$ifi" --frame "$frame" "$@" |
			sed "s/^/$i /; $ed" >>"$raw" || fail "fwdvariant --time ($what)"
	done
}

# time_variants TABLE FITS...: the program's own cost per packet
# (BPF_PROG_TEST_RUN on a frame to forward, in the router's namespace,
# against its live maps): xfib's build, without per-port counters, without
# the trace hook, for IPv4 looking every source up (the router's ports
# have no rp_filter, and the generator's source is no local one: xfib's
# build skips that lookup, xfib_source_wanted4), xfib's build while a
# trace runs, and nolookup and fibfwd as attached. Each of TIME_LOADS
# loads of the objects (fresh JIT images, placed anew) gives one figure
# per build and the differences between them; the median over the loads
# is reported, with the range, so that no one placement decides. Lines
# into TIMING.
TIMING="$XFIB_TMP/timing.txt"
# Per table and family: the median ns the per-port counters and the idle
# trace hook add (table family algorithm port_ns hook_ns), to put them
# against the forwarding rate in the report.
COSTS="$XFIB_TMP/costs.tsv"
# Small runs: 1 load (the paths' repetitions are the smoke run's time).
if [ "$SCALE" = small ]; then TIME_LOADS=${TIME_LOADS:-1}; else TIME_LOADS=${TIME_LOADS:-9}; fi
[[ $TIME_LOADS =~ ^[1-9][0-9]*$ ]] || { echo "fwd.sh: TIME_LOADS must be a positive integer" >&2; exit 2; }
time_variants() {
	local table=$1 fa fam algo ifi frame p pin b=$XFIB_TMP/bin raw="$XFIB_TMP/timing.raw" extra
	shift
	ifi=$(ip -n "$RTR" -j link show dev "$R_GEN" | jq '.[0].ifindex')
	for fam in 4 6; do
		algo=""
		for fa in "$@"; do [ "${fa%%:*}" != "$fam" ] || [ -n "$algo" ] || algo=${fa#*:}; done
		[ -n "$algo" ] && force_algo "$fam" "$algo" || continue
		# Attached, so that the frame is forwarded (XDP_REDIRECT, 4).
		use_xfib "$fam"
		frame=$(frame_hex "$fam")
		extra=""
		[ "$fam" != 4 ] || [ ! -f "$b/xfib_fwd_srcalways.bpf.o" ] || extra="$b/xfib_fwd_srcalways.bpf.o"
		[ ! -f "$b/xfib_fwd_baseline.bpf.o" ] || extra="$extra $b/xfib_fwd_baseline.bpf.o"
		: >"$raw"
		# shellcheck disable=SC2086 # extra: none, one or two files
		time_loads xfib "" "$b/xfib_fwd_full.bpf.o" "$b/xfib_fwd_noport.bpf.o" \
			"$b/xfib_fwd_notrace.bpf.o" $extra
		trace_start
		time_loads trace "s/full/trace/" "$b/xfib_fwd_full.bpf.o"
		trace_stop
		# nolookup and fibfwd, on the same frame by the same method (one
		# JIT image each, timed TIME_LOADS times). nolookup's time is the
		# harness plus the least a forwarder does; each program's time
		# less it is its own cost by this method, which runs one packet
		# after a syscall, on colder caches than a NAPI batch.
		for p in nolookup fibfwd; do
			"use_$p"
			pin=$NOLOOKUP_PIN
			[ "$p" = nolookup ] || pin=$FIBFWD_PIN
			time_loads "$p" "s| link:[^ ]*| $p|" "link:$pin/link-$R_GEN"
		done
		log "program cost, IPv$fam $algo, ns per load: $(awk '{ n = $2; sub(/.*xfib_fwd_/, "", n); sub(/\.bpf\.o$/, "", n); printf "%s%s=%s", (NR > 1 ? " " : ""), n, $3 }' "$raw")"
		awk -v t="$table" -v f="$fam" -v a="$algo" '
			function med(arr, n,   i, j, x) {
				for (i = 2; i <= n; i++) { x = arr[i]; for (j = i - 1; j >= 1 && arr[j] > x; j--) arr[j + 1] = arr[j]; arr[j + 1] = x }
				return n % 2 ? arr[(n + 1) / 2] : (arr[n / 2] + arr[n / 2 + 1]) / 2
			}
			function span(arr, n,   i, lo, hi) {
				lo = hi = arr[1]
				for (i = 2; i <= n; i++) { if (arr[i] < lo) lo = arr[i]; if (arr[i] > hi) hi = arr[i] }
				return sprintf("%+.2f..%+.2f", lo, hi)
			}
			{ n = $2; sub(/.*xfib_fwd_/, "", n); sub(/\.bpf\.o$/, "", n); ns[$1, n] = $3; v[n] = $4; if ($1 > loads) loads = $1 }
			END {
				for (i = 1; i <= loads; i++) {
					full[i] = ns[i, "full"]; noport[i] = ns[i, "noport"]
					notrace[i] = ns[i, "notrace"]; trace[i] = ns[i, "trace"]
					dp[i] = full[i] - noport[i]; dpp[i] = dp[i] * 100 / noport[i]
					dt[i] = full[i] - notrace[i]; dtp[i] = dt[i] * 100 / notrace[i]
					ds[i] = ns[i, "srcalways"] - full[i]; dsp[i] = ds[i] * 100 / full[i]
					db[i] = ns[i, "baseline"] - full[i]; dbp[i] = db[i] * 100 / full[i]
				}
				mf = med(full, loads); mt = med(trace, loads)
				printf "%-5s IPv%-2s %-8s full %.2f ns (verdict %d); per-port counters %+.2f ns (%+.2f%%, %s%% over the loads), idle trace hook %+.2f ns (%+.2f%%, %s%%), active trace %+.2f ns (%+.2f%%)",
					t, f, a, mf, v["full"], med(dp, loads), med(dpp, loads), span(dpp, loads),
					med(dt, loads), med(dtp, loads), span(dtp, loads), mt - mf, (mt - mf) * 100 / mf
				if ("srcalways" in v)
					printf "; every source looked up %+.2f ns (%+.2f%%, %s%%)", med(ds, loads), med(dsp, loads), span(dsp, loads)
				if ("baseline" in v)
					printf "; BASELINE_OBJ %+.2f ns (%+.2f%%, %s%%)", med(db, loads), med(dbp, loads), span(dbp, loads)
				if ("nolookup" in v && "fibfwd" in v) {
					for (i = 1; i <= loads; i++) { nl[i] = ns[i, "nolookup"]; fb[i] = ns[i, "fibfwd"] }
					mn = med(nl, loads); mb = med(fb, loads)
					printf "; nolookup %.2f ns (verdict %d), fibfwd %.2f ns (verdict %d); less nolookup: xfib %.2f ns, fibfwd %.2f ns",
						mn, v["nolookup"], mb, v["fibfwd"], mf - mn, mb - mn
					if (mf > mn)
						printf " (%.2fx)", (mb - mn) / (mf - mn)
				}
				printf "\n"
				printf "%s\t%s\t%s\t%.3f\t%.3f\n", t, f, a, med(dp, loads), med(dt, loads) >>costs
			}' costs="$COSTS" "$raw" >>"$TIMING"
	done
}

# run_table TABLE ROUTES: every path and family, REPS times.
run_table() {
	local table=$1 routes=$2 rep fam algo path order fits=() vs ord v
	TABLE_NOW=$table
	# Which algorithms hold this table (tried once, up front).
	for fam in 4 6; do
		for algo in $(algos_of "$fam"); do
			if force_algo "$fam" "$algo"; then fits+=("$fam:$algo"); fi
		done
	done
	log "table $table: xfib algorithms that hold it: ${fits[*]}"
	for ((rep = 1; rep <= REPS; rep++)); do
		# Rotate the order: each path goes first once in a while.
		case $((rep % 3)) in
		1) order="nolookup kernel fibfwd xfib" ;;
		2) order="xfib nolookup kernel fibfwd" ;;
		0) order="fibfwd xfib nolookup kernel" ;;
		esac
		# The variants next to xfib, rotating among themselves too.
		vs=$(for v in $VARIANTS; do echo "$v"; done | awk -v r="$rep" '{ a[NR] = $0 } END { for (i = 0; i < NR; i++) print a[(i + r) % NR + 1] }' | xargs)
		variants_priced "$table" || vs=""
		ord=""
		for path in $order; do
			ord="$ord $path"
			[ "$path" != xfib ] || for v in $vs; do ord="$ord v:$v"; done
		done
		order=$ord
		# The gate right after xfib, the ruleset in the kernel right
		# after the kernel: the pairs compare best adjacent.
		if gate_priced "$table"; then
			order=${order/xfib/xfib xfib_ct xfib_nat}
			order=${order/kernel/kernel kernel_ct kernel_nat}
		fi
		! rules_priced "$table" || order=${order/xfib/xfib xfib_rmh xfib_rmi xfib_rwg}
		! bridge_priced "$table" || order=${order/xfib/xfib xfib_br}
		for path in $order; do
			case $path in
			kernel | kernel_ct | kernel_nat)
				use_kernel
				[ "$path" = kernel ] || gate_on "${path#kernel_}"
				for fam in 4 6; do measure "$table" "$routes" "$path" "" "$fam" "$rep"; done
				;;
			fibfwd)
				use_fibfwd
				for fam in 4 6; do measure "$table" "$routes" fibfwd "" "$fam" "$rep"; done
				;;
			nolookup)
				use_nolookup
				for fam in 4 6; do measure "$table" "$routes" nolookup "" "$fam" "$rep"; done
				;;
			v:*)
				for fam in 4 6; do
					algo=""
					for fa in "${fits[@]}"; do
						[ "${fa%%:*}" != "$fam" ] || [ -n "$algo" ] || algo=${fa#*:}
					done
					[ -n "$algo" ] && force_algo "$fam" "$algo" || continue
					gate_off
					use_variant "${path#v:}" "$fam"
					measure "$table" "$routes" "xfib-${path#v:}" "$algo" "$fam" "$rep"
				done
				;;
			xfib | xfib_ct | xfib_nat)
				for fa in "${fits[@]}"; do
					fam=${fa%%:*} algo=${fa#*:}
					force_algo "$fam" "$algo" || continue
					rules_off
					if [ "$path" = xfib ]; then gate_off; else gate_on "${path#xfib_}"; fi
					use_xfib "$fam"
					measure "$table" "$routes" "$path" "$algo" "$fam" "$rep"
				done
				;;
			xfib_br)
				gate_off
				rules_off
				bridge_on
				for fa in "${fits[@]}"; do
					fam=${fa%%:*} algo=${fa#*:}
					force_algo "$fam" "$algo" || continue
					use_xfib "$fam"
					wait_until 10 via_bridge "$fam" ||
						fail "IPv$fam: the ten routes not out of the bridge in XDP: $(rctl lookup 198.19.0.1 -j | jq -c .egress)"
					measure "$table" "$routes" "$path" "$algo" "$fam" "$rep"
				done
				bridge_off
				;;
			xfib_rmh | xfib_rmi | xfib_rwg)
				gate_off
				rules_on "${path#xfib_r}" || continue
				for fa in "${fits[@]}"; do
					fam=${fa%%:*} algo=${fa#*:}
					force_algo "$fam" "$algo" || continue
					use_xfib "$fam"
					measure "$table" "$routes" "$path" "$algo" "$fam" "$rep"
				done
				rules_off
				;;
			esac
		done
	done
	gate_off
	! variants_priced "$table" || time_variants "$table" "${fits[@]}"
	[ "${PERF:-0}" = 0 ] || profile_table "$table" "${fits[@]}"
	use_kernel
	rctl algo ipv4 auto >/dev/null || true
	rctl algo ipv6 auto >/dev/null || true
}

# test_table KIND COUNT GW BASE: the path of an `ip -batch` file of COUNT
# prefixes inside BASE (tests/bench/gen-bench-table.py KIND), kept in
# build/tables/ between runs; logs how many of them the destinations hit.
test_table() {
	local kind=$1 n=$2 gw=$3 base=$4 f dir="$XFIB_BUILD/tables"
	mkdir -p "$dir"
	f="$dir/$kind-$n-${base//[:\/.]/_}-${gw//[@:\/,]/_}-d$NDST.batch"
	if [ ! -s "$f" ] || [ ! -s "$f.hits" ]; then
		python3 "$here/gen-bench-table.py" "$kind" --count "$n" --gw "$gw" --base "$base" \
			--ndst "$NDST" >"$f.tmp.$$" 2>"$f.hits" || fail "gen-bench-table.py $kind"
		mv "$f.tmp.$$" "$f"
	fi
	log "$(cat "$f.hits")" >&2
	echo "$f"
}

log "$REPS repetitions x $SECS s per path, family and table; $NDST destinations; tables: $TABLES"
# Prefixes in the test ranges at full table (set when it is installed).
tn4=$T4
tn6=$T6
for table in $TABLES; do
	case $table in
	10)
		run_table 10 10
		;;
	full)
		f=$(bench_table "$FULL4" "$FULL6" 0 0 "$GW4" "$GW6")
		n4=$(test_table nested4 "$T4" "$GW4" 198.19.0.0/16)
		n6=$(test_table clustered6 "$T6" "$GW6" 2001:db8:8000::/33)
		# Without the ten routes' own prefixes, which the generated
		# ones may repeat.
		awk 'NR == FNR { ten[$3]; next } !($3 in ten)' "$XFIB_TMP/routes10" "$n4" "$n6" \
			>"$XFIB_TMP/test.batch"
		tn6=$(grep -c : "$XFIB_TMP/test.batch" || true)
		tn4=$(($(wc -l <"$XFIB_TMP/test.batch") - tn6))
		cat "$f" "$XFIB_TMP/test.batch" >"$XFIB_TMP/full.batch"
		log "installing $(wc -l <"$XFIB_TMP/full.batch") routes ($tn4 + $tn6 in the test ranges)"
		t0=$(now_ms)
		ip -n "$RTR" -batch "$XFIB_TMP/full.batch" || fail "installing $f, $n4, $n6"
		log "kernel install: $(($(now_ms) - t0)) ms"
		wait_routes $((BASE4 + FULL4 + tn4)) $((BASE6 + FULL6 + tn6))
		run_table full $((10 + FULL4 + tn4))
		;;
	*) fail "unknown table '$table' (10, full)" ;;
	esac
done
in_ns "$SNK" "$FWDBENCH" sink-detach --pin-dir "$SINK_PIN" || true
in_ns "$SNK2" "$FWDBENCH" sink-detach --pin-dir "$SINK2_PIN" || true

# ---- report -------------------------------------------------------------

mkdir -p "$(dirname "$OUT")"
[ -s "$VERIFIER" ] || fail "xfib was never attached: no processed-instruction count"
jq -s --argjson machine "$(bench_machine)" --arg scale "$SCALE" \
	--slurpfile verifier "$VERIFIER" \
	--argjson reps "$REPS" --argjson secs "$SECS" --argjson ndst "$NDST" \
	--argjson gcpu "$GEN_CPU" --arg placement "$PLACEMENT" \
	--argjson full "{\"ipv4\": $((FULL4 + tn4 + 10)), \"ipv6\": $((FULL6 + tn6 + 10))}" \
	--arg date "$(date -u +%Y-%m-%dT%H:%M:%SZ)" '
	def median: sort | if length == 0 then null
		elif length % 2 == 1 then .[length / 2 | floor]
		else (.[length / 2 - 1] + .[length / 2]) / 2 end;
	def r4: if . == null then null else . * 10000 | round / 10000 end;
	. as $s |
	# One summary per table, family, path and algorithm.
	[ $s | group_by([.table, .family, .path, .algorithm])[] |
	  . as $x | $x[0] as $h |
	  ($x | map(.received) | add) as $rx |
	  {table: $h.table, family: $h.family, path: $h.path, algorithm: $h.algorithm,
	   routes: (if $h.table == "full" then $full["ipv\($h.family)"] else 10 end),
	   n: ($x | length),
	   rx: ($x | map(.rx_mpps) | median), tx: ($x | map(.tx_mpps) | median),
	   rx_min: ($x | map(.rx_mpps) | min), rx_max: ($x | map(.rx_mpps) | max),
	   loss: ($x | map(.loss_pct) | median),
	   rx_samples: ($x | map(.rx_mpps | r4)),
	   kpct: (if $rx > 0 then ($x | map(.kernel_forwarded) | add) * 100 / $rx else 0 end),
	   xpct: (if $rx > 0 then ($x | map(.xfib_forwarded) | add) * 100 / $rx else 0 end),
	   busy: [range($x[0].cpu_busy_pct | length) as $i | $x | map(.cpu_busy_pct[$i]) | median],
	   si: [range($x[0].cpu_softirq_pct | length) as $i | $x | map(.cpu_softirq_pct[$i]) | median]}
	] as $sum |
	def base($t; $f; $p): [$sum[] | select(.table == $t and .family == $f and .path == $p)][0].rx;
	def xfib_rx($t; $f; $a): [$sum[] | select(.table == $t and .family == $f and .path == "xfib" and .algorithm == $a)][0].rx;
	$sum | map(. as $r | . + {
		ratio_kernel: (base($r.table; $r.family; "kernel") as $b | if $b and $b > 0 then $r.rx / $b else null end),
		ratio_fibfwd: (base($r.table; $r.family; "fibfwd") as $b | if $b and $b > 0 then $r.rx / $b else null end),
		# The conntrack gate against xfib without rules, same algorithm.
		ratio_gate_off: (if $r.path == "xfib_ct" or $r.path == "xfib_nat" then (xfib_rx($r.table; $r.family; $r.algorithm) as $b
			| if $b and $b > 0 then $r.rx / $b else null end) else null end),
		# Policy rules against xfib without them, same algorithm.
		ratio_rules_off: (if $r.path == "xfib_rmh" or $r.path == "xfib_rmi" or $r.path == "xfib_rwg" then (xfib_rx($r.table; $r.family; $r.algorithm) as $b
			| if $b and $b > 0 then $r.rx / $b else null end) else null end),
		# Out of a bridge against out of the plain ports, same algorithm.
		ratio_bridge_off: (if $r.path == "xfib_br" then (xfib_rx($r.table; $r.family; $r.algorithm) as $b
			| if $b and $b > 0 then $r.rx / $b else null end) else null end),
		verified: (if .path == "kernel" or .path == "kernel_ct" or .path == "kernel_nat" then .kpct >= 99 and .xpct == 0
		           elif .path == "fibfwd" or .path == "nolookup" then .kpct <= 0.1 and .xpct == 0 and .rx > 0
		           else .xpct >= 99 and .kpct <= 0.1 end)}) |
	. as $sum |
	# The router own cost per packet, per repetition: the path time per
	# packet minus nolookup in the same repetition, in ns.
	[ $s[] | select(.path != "nolookup" and .rx_mpps > 0) | . as $x |
	  ([$s[] | select(.path == "nolookup" and .table == $x.table and .family == $x.family
		and .rep == $x.rep and .rx_mpps > 0)][0]) as $n | select($n) |
	  {table, family, path, algorithm, rep, ns: (1000 / $x.rx_mpps - 1000 / $n.rx_mpps)} ] as $own |
	def own($t; $f; $p; $r): [$own[] | select(.table == $t and .family == $f and .path == $p and .rep == $r)][0].ns;
	def spread: if length == 0 then null else {median: median, min: min, max: max} end;
	def vs($g; $p): if ($g[0].path | startswith("xfib")) then
		[$g[] | own(.table; .family; $p; .rep) as $b | select($b != null and $b > 0 and .ns > 0) | $b / .ns] | spread
		else null end;
	[ $own | group_by([.table, .family, .path, .algorithm])[] | . as $g | $g[0] as $h |
	  {table: $h.table, family: $h.family, path: $h.path, algorithm: $h.algorithm,
	   n: ($g | length), ns: ($g | map(.ns) | spread), samples: ($g | map(.ns | r4)),
	   vs_kernel: vs($g; "kernel"), vs_fibfwd: vs($g; "fibfwd")} ] as $cost |
	{benchmark: "fwd", date: $date, machine: $machine, scale: $scale,
	 frame_bytes: 64, seconds_per_repetition: $secs, repetitions: $reps,
	 destinations: $ndst, generator_cpu: $gcpu, placement: $placement,
	 summary: $sum,
	 verifier: {verifier_limit: $verifier[0][0].limit,
		    programs: [$verifier[0][] | {program: .name, loaded: true, verified_insns,
			note: "as xfibctl attach loaded it"}]},
	 router_cost: $cost,
	 records: (([ $cost[] as $c |
		{bench: "fwd", family: "ipv\($c.family)",
		 algorithm: (if $c.path == "xfib" then $c.algorithm
			     elif $c.path == "xfib_ct" then $c.algorithm + "+ct_gate"
			     elif $c.path == "xfib_nat" then $c.algorithm + "+ct_gate+nat"
			     elif $c.path == "xfib_rmh" then $c.algorithm + "+rules_multihoming"
			     elif $c.path == "xfib_rmi" then $c.algorithm + "+rules_multihoming_iif"
			     elif $c.path == "xfib_rwg" then $c.algorithm + "+rules_wgquick"
			     elif $c.path == "xfib_br" then $c.algorithm + "+bridge"
			     elif ($c.path | startswith("xfib-")) then $c.path + "/" + $c.algorithm else $c.path end),
		 path: $c.path, table: $c.table, destinations: $ndst,
		 routes: ([$sum[] | select(.table == $c.table and .family == $c.family)][0].routes),
		 metric: "router_ns_per_packet", value: ($c.ns.median | r4), unit: "ns",
		 min: ($c.ns.min | r4), max: ($c.ns.max | r4), samples: $c.samples, repetitions: $c.n,
		 ratio_kernel_to_this: ($c.vs_kernel | if . then map_values(r4) else null end),
		 ratio_fibfwd_to_this: ($c.vs_fibfwd | if . then map_values(r4) else null end),
		 note: "time per packet of the chain minus that of the lookup-free forwarder (nolookup), same repetition"} ]) +
	 [ $sum[] as $r |
		({metric: "rx_mpps", value: ($r.rx | r4), unit: "Mpps", samples: $r.rx_samples},
		 {metric: "tx_mpps", value: ($r.tx | r4), unit: "Mpps"},
		 {metric: "loss", value: ($r.loss | r4), unit: "%"},
		 {metric: "path_verified", value: $r.verified, unit: "bool"})
		| {bench: "fwd", family: "ipv\($r.family)",
		   algorithm: (if $r.path == "xfib" then $r.algorithm
			       elif $r.path == "xfib_ct" then $r.algorithm + "+ct_gate"
			       elif $r.path == "xfib_nat" then $r.algorithm + "+ct_gate+nat"
			       elif $r.path == "xfib_rmh" then $r.algorithm + "+rules_multihoming"
			       elif $r.path == "xfib_rmi" then $r.algorithm + "+rules_multihoming_iif"
			       elif $r.path == "xfib_rwg" then $r.algorithm + "+rules_wgquick"
			       elif $r.path == "xfib_br" then $r.algorithm + "+bridge" else $r.path end),
		   path: $r.path, table: $r.table, routes: $r.routes, destinations: $ndst}
		  + . + {repetitions: $r.n,
		     ratio_to_kernel: (if .metric == "rx_mpps" then $r.ratio_kernel | r4 else null end),
		     ratio_to_fibfwd: (if .metric == "rx_mpps" then $r.ratio_fibfwd | r4 else null end),
		     ratio_to_gate_off: (if .metric == "rx_mpps" then $r.ratio_gate_off | r4 else null end),
		     ratio_to_rules_off: (if .metric == "rx_mpps" then $r.ratio_rules_off | r4 else null end),
		     ratio_to_bridge_off: (if .metric == "rx_mpps" then $r.ratio_bridge_off | r4 else null end)} ]),
	 samples: ($s | map(.family = "ipv\(.family)"))}' "$SAMPLES" >"$OUT.tmp"
mv "$OUT.tmp" "$OUT"

echo
echo "Forwarding over veth, gen -> router -> sinks, 64-byte UDP, $NDST destinations,"
echo "$REPS x ${SECS} s per path; $PLACEMENT; $NCPU CPUs, kernel $(uname -r)"
echo
printf '%-5s %-5s %-16s %9s %17s %8s %8s %8s %8s  %-26s %s\n' table family path "rx Mpps" "min-max" "tx Mpps" loss "/kernel" "/fibfwd" "forwarded by (of rx)" check
jq -r '.summary[] | [.table, .family, (if .path == "xfib" then "xfib/" + .algorithm
	elif .path == "xfib_ct" then "xfib+ct/" + .algorithm
	elif .path == "xfib_nat" then "xfib+nat/" + .algorithm
	elif .path == "xfib_rmh" then "xfib+rmh/" + .algorithm
	elif .path == "xfib_rmi" then "xfib+rmi/" + .algorithm
	elif .path == "xfib_rwg" then "xfib+rwg/" + .algorithm
	elif .path == "xfib_br" then "xfib+br/" + .algorithm else .path end),
	.rx, .rx_min, .rx_max, .tx, .loss, (.ratio_kernel // 0), (.ratio_fibfwd // 0), .kpct, .xpct, .verified] | @tsv' "$OUT" |
	while IFS=$'\t' read -r t f p rx mn mx tx loss rk rf kp xp ok; do
		printf '%-5s IPv%-2s %-16s %9.3f %8.3f-%-8.3f %8.3f %7.2f%% %7.2fx %7.2fx  kernel %5.1f%% xfib %5.1f%%  %s\n' \
			"$t" "$f" "$p" "$rx" "$mn" "$mx" "$tx" "$loss" "$rk" "$rf" "$kp" "$xp" \
			"$([ "$ok" = true ] && echo ok || echo 'NOT this path')"
	done
jq -r '.summary[] | select(.path == "xfib_ct" or .path == "xfib_nat") |
	(if .path == "xfib_nat" then "masquerade (NAT in XDP)" else "conntrack gate" end) as $what |
	"\($what), table \(.table), IPv\(.family), \(.algorithm): \(.rx * 1000 | round / 1000) Mpps, " +
	"\(if .ratio_gate_off then (.rx / .ratio_gate_off * 1000 | round / 1000 | tostring) else "?" end) Mpps without rules: " +
	"\(if .ratio_gate_off then (.ratio_gate_off * 100 | round | tostring) + "%" else "?" end)"' "$OUT"
# What the policy rules cost: against xfib without them in the same
# repetitions, and per rule read (multi-homing with iif: ten per packet)
# or for the run of ten, from the medians' time per packet.
jq -r '.summary[] | select(.path == "xfib_rmh" or .path == "xfib_rmi" or .path == "xfib_rwg") |
	(if .path == "xfib_rmh" then "policy rules, multi-homing (10 before main, one run on the source)"
	 elif .path == "xfib_rmi" then "policy rules, multi-homing with iif (10 read before main)"
	 else "policy rules, wg-quick (main by prefix length)" end) as $what |
	"\($what), table \(.table), IPv\(.family), \(.algorithm): \(.rx * 1000 | round / 1000) Mpps, " +
	"\(if .ratio_rules_off then (.rx / .ratio_rules_off * 1000 | round / 1000 | tostring) else "?" end) Mpps without rules: " +
	"\(if .ratio_rules_off then (.ratio_rules_off * 100 | round | tostring) + "%" else "?" end)" +
	(if .path == "xfib_rmh" and .ratio_rules_off then
		", \(((1000 / .rx - 1000 * .ratio_rules_off / .rx) * 10 | round) / 10) ns for the ten"
	 elif .path == "xfib_rmi" and .ratio_rules_off then
		", \(((1000 / .rx - 1000 * .ratio_rules_off / .rx) / 10 * 10 | round) / 10) ns per rule read" else "" end)' "$OUT"
# What routing out of a bridge costs: against the same routes out of the
# sinks' own links, same repetitions.
jq -r '.summary[] | select(.path == "xfib_br") |
	"bridged egress (out of a member by the FDB), table \(.table), IPv\(.family), \(.algorithm): \(.rx * 1000 | round / 1000) Mpps, " +
	"\(if .ratio_bridge_off then (.rx / .ratio_bridge_off * 1000 | round / 1000 | tostring) else "?" end) Mpps without the bridge: " +
	"\(if .ratio_bridge_off then (.ratio_bridge_off * 100 | round | tostring) + "%" else "?" end)"' "$OUT"
# Where the gate's time goes: the profiles of its paths (PERF=1), by the
# share of the core each of the forwarder's two functions took.
if [ "${PERF:-0}" != 0 ]; then
	for f in "$(dirname "$OUT")"/fwd-perf-*-xfib*.txt; do
		[ -e "$f" ] || continue
		echo "profile $(basename "$f" .txt): $(awk '$NF ~ /_(xfib_fwd|xfib_ct_gate_pre)$/ {
			n = $NF; sub(/^bpf_prog_[0-9a-f]+_/, "", n); printf "%s%s %s", sep, n, $1; sep = ", " }' "$f")"
	done
elif [ "$GATE" = 1 ]; then
	echo "(PERF=1 profiles the gate's paths too: the share of the core its function, xfib_ct_gate_pre, takes)"
fi
jq -r '.summary as $s | $s[] | select(.path == "kernel_ct" or .path == "kernel_nat") | . as $k |
	($k.path | sub("kernel"; "xfib")) as $xp |
	([$s[] | select(.path == $xp and .table == $k.table and .family == $k.family)][0]) as $x |
	select($x) | "same ruleset\(if $k.path == "kernel_nat" then " with masquerade" else "" end), IPv\(.family): " +
	"the kernel forwards \(.rx * 1000 | round / 1000) Mpps, " +
	"xfib \($x.rx * 1000 | round / 1000) Mpps (\($x.rx / .rx * 100 | round / 100)x)"' "$OUT"
echo
echo "The router's own cost per packet: time per packet (1 / rx) minus nolookup's (the lookup-free XDP"
echo "forwarder) in the same repetition; median [min..max] over $REPS repetitions. kernel/xfib and"
echo "fibfwd/xfib: that path's own cost over xfib's, per repetition (those where both are positive), median [min..max]:"
printf '%-5s %-5s %-20s %26s %24s %24s\n' table family path "own ns/packet" "kernel/xfib" "fibfwd/xfib"
jq -r '.router_cost[] | [.table, .family, (if .path == "xfib" then "xfib/" + .algorithm
	elif .path == "xfib_ct" then "xfib+ct/" + .algorithm
	elif .path == "xfib_nat" then "xfib+nat/" + .algorithm
	elif .path == "xfib_rmh" then "xfib+rmh/" + .algorithm
	elif .path == "xfib_rmi" then "xfib+rmi/" + .algorithm
	elif .path == "xfib_rwg" then "xfib+rwg/" + .algorithm
	elif .path == "xfib_br" then "xfib+br/" + .algorithm
	elif (.path | startswith("xfib-")) then .path + "/" + .algorithm else .path end),
	.ns.median, .ns.min, .ns.max,
	(.vs_kernel // {} | "\(.median // "-") \(.min // "-") \(.max // "-")"),
	(.vs_fibfwd // {} | "\(.median // "-") \(.min // "-") \(.max // "-")")] | @tsv' "$OUT" |
	while IFS=$'\t' read -r t f p m lo hi vk vf; do
		ratio() {
			# shellcheck disable=SC2086 # "median min max"
			set -- $1
			if [ "$1" = - ]; then echo -; else printf '%.2fx [%.2f..%.2f]' "$1" "$2" "$3"; fi
		}
		printf '%-5s IPv%-2s %-20s %8.1f [%6.1f..%6.1f] %24s %24s\n' "$t" "$f" "$p" "$m" "$lo" "$hi" \
			"$(ratio "$vk")" "$(ratio "$vf")"
	done
if [ -n "$VARIANTS" ]; then
	echo
	echo "Program cost per packet (BPF_PROG_TEST_RUN on CPU $TIME_CPU, a frame xfib forwards, verdict 4 = XDP_REDIRECT): per load of"
	echo "the builds, the mean of the middle 11 of 21 alternating rounds of 20000 single-packet runs; medians over $TIME_LOADS loads,"
	echo "and the range of the difference over them (active trace: every packet matches, sampled to 100/s; every source"
	echo "looked up: IPv4, the build without xfib_source_wanted4's skip, the cost of a second lookup on a port without rp_filter;"
	echo "BASELINE_OBJ, if set: that build's time minus this one's; nolookup and fibfwd: the other forwarders on the"
	echo "same frame, one JIT image each, and each program's time less nolookup's: its own cost by this method, on colder"
	echo "caches than the chain's own cost above):"
	cat "$TIMING" 2>/dev/null || true
	echo
	echo "The same added time against the time per forwarded packet (1 / xfib-full's median rate above): the share of"
	echo "the forwarding cost, gen -> router -> sink, that the per-port counters and the idle trace hook take:"
	while IFS=$'\t' read -r t f a dp dt; do
		rx=$(jq -r --arg t "$t" --argjson f "$f" '[.summary[] | select(.table == $t and .family == $f and
			.path == "xfib-full")][0].rx // 0' "$OUT")
		awk -v t="$t" -v f="$f" -v a="$a" -v dp="$dp" -v dt="$dt" -v rx="$rx" 'BEGIN {
			if (rx <= 0) exit
			printf "%-5s IPv%-2s %-8s %.1f ns per packet at %.3f Mpps; per-port counters %+.2f ns = %+.2f%%, idle trace hook %+.2f ns = %+.2f%%\n",
				t, f, a, 1000 / rx, rx, dp, dp * rx / 10, dt, dt * rx / 10 }'
	done <"$COSTS"
	echo
	echo "Costs in forwarding rate, same run (medians; ratio of the variant's rx to its base, same table, family, algorithm):"
	jq -r '.summary as $s | $s[] | select(.path | startswith("xfib-")) | . as $v |
		(if $v.path == "xfib-trace" then "xfib" else "xfib-full" end) as $base |
		([$s[] | select(.path == $base and .table == $v.table and .family == $v.family and
			.algorithm == $v.algorithm)][0].rx) as $x |
		select($v.path != "xfib-full") |
		select($x != null and $x > 0) |
		[$v.table, $v.family, $v.algorithm, $v.path, $v.rx, $x, ($v.rx / $x)] | @tsv' "$OUT" |
		while IFS=$'\t' read -r t f a p vrx xrx r; do
			case $p in
			xfib-noport) what="per-port counters: xfib-full / without them" ;;
			xfib-notrace) what="idle trace hook: xfib-full / without it" ;;
			xfib-trace) what="active trace: with it / xfib" ;;
			esac
			case $p in
			xfib-trace) printf '%-5s IPv%-2s %-8s %-44s %8.3f / %8.3f Mpps = %6.4f\n' "$t" "$f" "$a" "$what" "$vrx" "$xrx" "$r" ;;
			*) printf '%-5s IPv%-2s %-8s %-44s %8.3f / %8.3f Mpps = %6.4f\n' "$t" "$f" "$a" "$what" "$xrx" "$vrx" "$(echo "1 / $r" | bc -l)" ;;
			esac
		done
fi
echo
echo "rx = received by the sinks per second of generator run; loss = 1 - received/sent;"
echo "xfib+ct = xfib with a stateful ruleset and every flow established in conntrack;"
echo "kernel_ct = the kernel with that ruleset and those entries;"
echo "xfib+nat, kernel_nat = the same with masquerade: a nat chain, and every entry source-NATed;"
echo "/kernel, /fibfwd = ratio of the medians to that path's, same table and family."
jq -r '.verifier as $v | $v.programs[] | "Verifier: \(.program) (\(.note)): \(.verified_insns) instructions processed of \($v.verifier_limit), "
	+ "margin \($v.verifier_limit - .verified_insns) (\(.verified_insns / $v.verifier_limit * 1000 | round / 10)% used)"' "$OUT"
echo "Records: $OUT"
