#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Reverse-path filtering in XDP. gen sends raw ICMP echo requests to the
# sink with chosen sources (tests/lib/rawsend.py), the sink counts what
# arrives (Icmp InEchos; it does not answer), under each rp_filter mode of
# the router's ingress port r-gen, set through conf.all, the port, or both
# (the kernel takes the larger):
#
#   legit       gen's own address: route back by r-gen
#   no_route    198.18.12.7: no route back
#   blackhole   198.18.11.7: blackhole route back
#   other_port  198.18.9.7: route back via sink2 (r-sink2)
#   multipath   198.18.10.7: multipath back via gen (r-gen) and sink2
#   local       the router's own address on r-sink
#   broadcast   the sink subnet's broadcast address
#
# First the router's kernel alone (xfibd runs, no port attached) for every
# mode and source; then the same frames with xfib attached. Each source
# must arrive at the sink exactly as without xfib, and as the kernel's
# rules say; what arrives is forwarded in XDP (xfib's forwarded counter
# moves, the kernel's IpForwDatagrams stays flat) unless the kernel has to
# decide (a broadcast source with rp_filter off); what fails the check
# goes to the kernel counted pass_rp_filter (or pass_local_source), and
# the kernel drops it (IPReversePathFilter for rp_filter failures).
# run.sh: long
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init
command -v python3 >/dev/null || skip "missing tool: python3 (scripts/install-deps.sh)"

N=20
RAWSEND="$XFIB_TOP/tests/lib/rawsend.py"

topo_create
topo_add_sink2
# The sink counts echo requests and answers none (IPv4): nothing comes
# back to blur the router's counters.
ip netns exec "$SNK" sysctl -qw net.ipv4.icmp_echo_ignore_all=1
ip -n "$RTR" route add 198.18.9.0/24 via "$SNK2_4" dev "$R_SNK2"
ip -n "$RTR" route add 198.18.10.0/24 \
	nexthop via "$GEN4" dev "$R_GEN" nexthop via "$SNK2_4" dev "$R_SNK2"
ip -n "$RTR" route add blackhole 198.18.11.0/24
xfibd_start

declare -A SRC=(
	[legit]=$GEN4 [no_route]=198.18.12.7 [blackhole]=198.18.11.7
	[other_port]=198.18.9.7 [multipath]=198.18.10.7 [local]=$R_SNK4
	[broadcast]=$NET4_S.255
)
CASES="legit no_route blackhole other_port multipath local broadcast"
# mode name: conf.all.rp_filter conf.r-gen.rp_filter
declare -A MODE=(
	[off]="0 0" [strict_all]="1 0" [loose_port]="0 2" [strict_port]="0 1"
	[loose_max]="1 2"
)
MODES="off strict_all loose_port strict_port loose_max"

# The effective mode the dataplane must show for a mode name.
want_mode() {
	case $1 in
	off) echo off ;;
	strict*) echo strict ;;
	loose*) echo loose ;;
	esac
}

# router_kernel: the router kernel's IpForwDatagrams and
# IPReversePathFilter drops, on one line.
router_kernel() {
	# shellcheck disable=SC2016
	in_ns "$RTR" awk '
		$1 == "Ip:" && !ip { for (i = 2; i <= NF; i++) ic[$i] = i; ip = 1; next }
		$1 == "Ip:" && ip == 1 { fwd = $ic["ForwDatagrams"]; ip = 2 }
		$1 == "TcpExt:" && !tx { for (i = 2; i <= NF; i++) tc[$i] = i; tx = 1; next }
		$1 == "TcpExt:" && tx == 1 { rpf = $tc["IPReversePathFilter"]; tx = 2 }
		END { print fwd, rpf }
	' /proc/net/snmp /proc/net/netstat
}

# sink_echos: echo requests the sink received (IPv4).
sink_echos() {
	# shellcheck disable=SC2016
	in_ns "$SNK" awk '
		$1 == "Icmp:" && !hdr { for (i = 2; i <= NF; i++) col[$i] = i; hdr = 1; next }
		$1 == "Icmp:" && hdr { print $col["InEchos"]; exit }
	' /proc/net/snmp
}

rpf_shown() {
	[ "$(rctl lookup "$SNK4" --from "$GEN4" --iif "$R_GEN" -j |
		jq -r .from.rp_filter)" = "$1" ]
}

# set_mode NAME: the router's sysctls, and xfibd has followed them.
set_mode() {
	local all port
	read -r all port <<<"${MODE[$1]}"
	ip netns exec "$RTR" sysctl -qw "net.ipv4.conf.all.rp_filter=$all" \
		"net.ipv4.conf.$R_GEN.rp_filter=$port"
	wait_until 5 rpf_shown "$(want_mode "$1")" ||
		fail "mode $1: xfibctl lookup shows rp_filter $(rctl lookup "$SNK4" \
			--from "$GEN4" --iif "$R_GEN" -j | jq -r .from.rp_filter), expected $(want_mode "$1")"
}

# arrived_all TARGET: the sink's InEchos reached TARGET.
arrived_all() { [ "$(sink_echos)" -ge "$1" ]; }

# snap: every count send() compares, read at once: the sink's echo
# requests (S_ECHO), xfib's forwarded_v4, pass_rp_filter and
# pass_local_source (S_XF, S_RPF, S_LSRC), the router kernel's forwarded
# datagrams and rp_filter drops (S_KF, S_KRPF). Three processes rather
# than a dozen: the test sends 70 times.
snap() {
	local stats
	stats=$(xctl "$RTR" "$PIN" stats -j) || fail "xfibctl stats -j"
	read -r S_XF S_RPF S_LSRC < <(jqe -r '[.forwarded_v4, .pass_rp_filter,
		.pass_local_source] | map(.packets // error("no counter")) | @tsv' <<<"$stats") ||
		fail "xfibctl stats -j: $stats"
	read -r S_KF S_KRPF < <(router_kernel)
	S_ECHO=$(sink_echos)
}

# send CASE [NS IF DMAC]: N echo requests from the case's source (or
# CASE itself, an address) to the sink, raw from gen (or from NS's port IF
# to the router's MAC DMAC). Sets ARR (arrived at the sink), XF and KF (forwarded by xfib, by
# the router kernel), RPF and LSRC (xfib's pass_rp_filter and
# pass_local_source) and KRPF (the kernel's IPReversePathFilter).
send() {
	local e0 x0 k0 r0 l0 kr0
	snap
	e0=$S_ECHO x0=$S_XF k0=$S_KF r0=$S_RPF l0=$S_LSRC kr0=$S_KRPF
	local src=${SRC[$1]:-$1}
	ip netns exec "${2:-$GEN}" python3 "$RAWSEND" "${3:-$GEN_IF}" \
		"${4:-$R_GEN_MAC}" "$src" "$SNK4" "$N" || fail "rawsend from $src"
	# What will arrive has arrived once the counts settle: wait for all,
	# and give a drop the same time to show it was not a delay.
	wait_until 1 arrived_all $((e0 + N)) || true
	snap
	ARR=$((S_ECHO - e0)) XF=$((S_XF - x0)) KF=$((S_KF - k0))
	RPF=$((S_RPF - r0)) LSRC=$((S_LSRC - l0)) KRPF=$((S_KRPF - kr0))
}

# The kernel's answer for each mode and source, without xfib.
declare -A KERNEL=()
for m in $MODES; do
	set_mode "$m"
	for c in $CASES; do
		send "$c"
		((XF == 0)) || fail "kernel alone: xfib forwarded $XF"
		KERNEL[$m.$c]=$ARR
		log "kernel alone, $m, $c (${SRC[$c]}): $ARR/$N arrived, kernel forwarded $KF, rp_filter drops $KRPF"
	done
done

# What the kernel's rules say arrives (N or 0), as a check of the
# baseline itself: strict wants the route back by r-gen, loose any route
# back; a local source never passes, a broadcast one only with rp_filter
# off.
expect_arrival() {
	local m=$1 c=$2
	case $c in
	legit | multipath) echo "$N" ;;
	local) echo 0 ;;
	no_route | blackhole | broadcast) [ "$m" = off ] && echo "$N" || echo 0 ;;
	other_port) [ "$(want_mode "$m")" = strict ] && echo 0 || echo "$N" ;;
	esac
}
for m in $MODES; do
	for c in $CASES; do
		[ "${KERNEL[$m.$c]}" = "$(expect_arrival "$m" "$c")" ] ||
			fail "kernel alone, $m, $c: ${KERNEL[$m.$c]}/$N arrived, expected $(expect_arrival "$m" "$c")"
	done
done

set_mode off
attach_all
ip netns exec "$SNK" sysctl -qw net.ipv4.icmp_echo_ignore_all=0
resolve_neighbours
expect_xdp 4 "$SNK4"
ip netns exec "$SNK" sysctl -qw net.ipv4.icmp_echo_ignore_all=1

for m in $MODES; do
	set_mode "$m"
	for c in $CASES; do
		send "$c"
		what="with xfib, $m, $c (${SRC[$c]})"
		log "$what: $ARR/$N arrived, xfib forwarded $XF, kernel $KF, pass_rp_filter $RPF, pass_local_source $LSRC, kernel rp_filter drops $KRPF"
		((ARR == KERNEL[$m.$c])) ||
			fail "$what: $ARR/$N arrived, without xfib ${KERNEL[$m.$c]}"
		if ((ARR == N)) && [ "$c" != broadcast ]; then
			((XF == N && KF == 0)) ||
				fail "$what: forwarded by xfib $XF, by the kernel $KF, expected $N and 0"
		elif ((ARR == N)); then
			# rp_filter off: the kernel forwards from a broadcast address.
			((LSRC == N && KF == N && XF == 0)) ||
				fail "$what: pass_local_source $LSRC, kernel forwarded $KF, xfib $XF"
		elif [ "$c" = local ] || [ "$c" = broadcast ]; then
			((LSRC == N && XF == 0 && KF == 0)) ||
				fail "$what: pass_local_source $LSRC, forwarded by xfib $XF, kernel $KF"
		else
			((RPF == N && KRPF == N && XF == 0 && KF == 0)) ||
				fail "$what: pass_rp_filter $RPF, kernel rp_filter drops $KRPF, forwarded by xfib $XF, kernel $KF"
		fi
	done
done

# xfibctl lookup --from gives the program's decisions.
set_mode strict_all
lookup_reason() {
	rctl lookup "$SNK4" --from "$1" --iif "$R_GEN" -j | jq -r .reason
}
[ "$(lookup_reason 198.18.9.7)" = pass_rp_filter ] ||
	fail "lookup --from 198.18.9.7, strict: $(lookup_reason 198.18.9.7)"
[ "$(lookup_reason 198.18.10.7)" = forwarded_v4 ] ||
	fail "lookup --from 198.18.10.7, strict: $(lookup_reason 198.18.10.7)"
[ "$(lookup_reason "$NET4_S.255")" = pass_local_source ] ||
	fail "lookup --from $NET4_S.255: $(lookup_reason "$NET4_S.255")"
set_mode loose_port
[ "$(lookup_reason 198.18.9.7)" = forwarded_v4 ] ||
	fail "lookup --from 198.18.9.7, loose: $(lookup_reason 198.18.9.7)"
[ "$(lookup_reason 198.18.11.7)" = pass_rp_filter ] ||
	fail "lookup --from 198.18.11.7, loose: $(lookup_reason 198.18.11.7)"

# IPv6 has no rp_filter: forwarded in XDP whatever IPv4's mode.
set_mode strict_all
expect_xdp 6 "$SNK6"

# A port without an IPv4 address is strict whatever the mode (the kernel's
# no_addr case in __fib_validate_source()): from sink2, gen's address
# (route back by r-gen) fails with loose rp_filter on conf.all once
# r-sink2 has no address, and passes again when it has one.
rpf_shown_on() {
	[ "$(rctl lookup "$SNK4" --from "$GEN4" --iif "$R_SNK2" -j |
		jq -r .from.rp_filter)" = "$1" ]
}
ip netns exec "$RTR" sysctl -qw net.ipv4.conf.all.rp_filter=2
wait_until 5 rpf_shown_on loose || fail "r-sink2 not loose with conf.all.rp_filter=2"
send "$GEN4" "$SNK2" "$SNK2_IF" "$R_SNK2_MAC"
log "from sink2, loose: $ARR/$N arrived, xfib forwarded $XF, kernel $KF, pass_rp_filter $RPF"
((ARR == N && XF == N && KF == 0)) ||
	fail "from sink2, loose: $ARR/$N arrived, forwarded by xfib $XF, kernel $KF"
ip -n "$RTR" addr del "$R_SNK2_4/24" dev "$R_SNK2"
wait_until 5 rpf_shown_on strict || fail "r-sink2 without an address not strict"
send "$GEN4" "$SNK2" "$SNK2_IF" "$R_SNK2_MAC"
log "from sink2, loose, no address: $ARR/$N arrived, pass_rp_filter $RPF, kernel rp_filter drops $KRPF"
((ARR == 0 && RPF == N && KRPF == N && XF == 0)) ||
	fail "from sink2 without an address: $ARR/$N arrived, pass_rp_filter $RPF, kernel rp_filter drops $KRPF, xfib forwarded $XF"
ip -n "$RTR" addr add "$R_SNK2_4/24" dev "$R_SNK2"
wait_until 5 rpf_shown_on loose || fail "r-sink2 not loose again with its address back"

# Local sources that come and go while xfib forwards, rp_filter off: the
# forwarder skips a source's lookup only where xfib_nonlocal4 rules a
# local answer out (a bit per /16 for local prefixes shorter than /32, a
# hashed bit per local /32), so each must reach it before the lookup
# tables do, and the /16's bit must be set again once nothing local is
# left under it.
set_mode off
# nonlocal4_block_bit ADDR: "1" if xfib_nonlocal4 rules ADDR's /16 out.
nonlocal4_block_bit() {
	local a b c d blk byte
	IFS=. read -r a b c d <<<"$1"
	blk=$((a * 256 + b))
	# Word blk / 64 (a 4-byte key, little-endian), its bytes as "0x..".
	byte=$(bpftool map lookup pinned "$PIN/xfib_nonlocal4" \
		key $((blk / 64 % 256)) $((blk / 64 / 256)) 0 0 -j |
		jq -r ".value[$((blk % 64 / 8))]") || return 1
	echo $(((byte >> (blk % 8)) & 1))
}
lookup_from() { rctl lookup "$SNK4" --from "$1" --iif "$R_GEN" -j | jq -r .reason; }
reason_is() { [ "$(lookup_from "$1")" = "$2" ]; }
block_bit_is() { [ "$(nonlocal4_block_bit "$1")" = "$2" ]; }
# expect_local SRC: the kernel drops SRC as a martian, and xfib hands it
# over (pass_local_source) rather than forward it.
expect_local() {
	send "$1"
	log "from $1 (local): $ARR/$N arrived, pass_local_source $LSRC, xfib forwarded $XF, kernel $KF"
	((ARR == 0 && LSRC == N && XF == 0 && KF == 0)) ||
		fail "from local $1: $ARR/$N arrived, pass_local_source $LSRC, xfib forwarded $XF, kernel $KF"
}
expect_forwarded() {
	send "$1"
	log "from $1: $ARR/$N arrived, xfib forwarded $XF, kernel $KF"
	((ARR == N && XF == N && KF == 0)) ||
		fail "from $1: $ARR/$N arrived, xfib forwarded $XF, kernel $KF, pass_local_source $LSRC"
}
NEW32=198.18.77.1
NEW24_SRC=198.18.96.7
expect_forwarded "$NEW32"
ip -n "$RTR" addr add "$NEW32/32" dev "$R_SNK2"
wait_until 5 reason_is "$NEW32" pass_local_source ||
	fail "xfibctl lookup --from $NEW32 (now local): $(lookup_from "$NEW32")"
expect_local "$NEW32"
ip -n "$RTR" addr del "$NEW32/32" dev "$R_SNK2"
wait_until 5 reason_is "$NEW32" forwarded_v4 ||
	fail "xfibctl lookup --from $NEW32 (no longer local): $(lookup_from "$NEW32")"
expect_forwarded "$NEW32"
# A custom local route shorter than /32 clears its /16's bit (the kernel
# then checks every source against its FIB); the bit is set again once it
# goes.
[ "$(nonlocal4_block_bit "$NEW24_SRC")" = 1 ] ||
	fail "xfib_nonlocal4: $NEW24_SRC's /16 not ruled out before any local prefix there"
ip -n "$RTR" route add local 198.18.96.0/24 dev lo table local
wait_until 5 reason_is "$NEW24_SRC" pass_local_source ||
	fail "xfibctl lookup --from $NEW24_SRC (in a local /24): $(lookup_from "$NEW24_SRC")"
[ "$(nonlocal4_block_bit "$NEW24_SRC")" = 0 ] ||
	fail "xfib_nonlocal4: $NEW24_SRC's /16 ruled out under a local /24"
expect_local "$NEW24_SRC"
ip -n "$RTR" route del local 198.18.96.0/24 dev lo table local
wait_until 5 block_bit_is "$NEW24_SRC" 1 ||
	fail "xfib_nonlocal4: $NEW24_SRC's /16 not ruled out again with nothing local under it"
expect_forwarded "$NEW24_SRC"

log "PASS"
