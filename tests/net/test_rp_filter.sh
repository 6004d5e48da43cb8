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
#
# When have all N frames of a send been dealt with? Each send from gen
# ends with two markers from gen's own address to the sink, echo replies
# (the sink counts them as InEchoReps, apart from the frames' InEchos),
# always forwarded: one plain, forwarded in XDP when xfib is attached, and
# one with an IP option, which xfib hands to the kernel (pass_ip_options)
# and the kernel forwards. Once both have reached the sink, every frame
# sent before them has been forwarded to the sink and counted there, or
# dropped and counted as dropped, because every step keeps the order:
#  - gen's frames leave by one AF_PACKET socket, one after the other, and
#    its veth hands each to the router's r-gen at once (veth_xmit: no
#    queue, IFF_NO_QUEUE);
#  - xfib not attached: r-gen has no NAPI (no XDP program, GRO off), so
#    veth_xmit puts each frame on the backlog of the sending CPU
#    (__netif_rx; no RPS on r-gen, so enqueue_to_backlog() on
#    smp_processor_id()): rawsend.py
#    keeps to one CPU, so all share one backlog, which that CPU's
#    process_backlog takes in order, each frame through the router's IP
#    layer (dropped, or forwarded out of r-sink) before the next;
#  - xfib attached: r-gen's XDP program makes veth put each frame on r-gen's
#    ring (veth_xdp_rx; one queue), which one NAPI instance empties in
#    order, one poll at a time; a frame XDP redirects goes to a bulk queue
#    in order and is flushed (xdp_do_flush) within the poll, a frame passed
#    goes to the poll's GRO list in order (ICMP is not merged), which is
#    handed to the IP layer (in order: ip_list_rcv_finish) before the poll
#    ends (napi_complete_done, or __napi_poll on a full budget), before the
#    next poll can start: a frame redirected after another redirected one
#    reaches sink0 after it, and a frame the kernel forwards after another
#    passed one also reaches sink0 after it, or after its drop (the two
#    kinds do not keep their order between them: hence a marker of each);
#  - what the router sends to sink0 goes on sink0's one ring (sink0 has
#    GRO on, so NAPI; an XDP-redirected frame by veth_ndo_xdp_xmit, a frame
#    the kernel forwards by veth_xmit, as r-sink has TSO off: with TSO on,
#    veth_skb_is_eligible_for_gro() would send that one to the backlog of
#    whichever CPU the router's poll ran on), which sink0's NAPI empties in
#    order, each kind in its order to the sink's IP layer, as above.
# Each counter is bumped where the frame is dealt with, before the marker
# of its kind comes along: xfib's in the XDP program, the router kernel's
# forwarded and rp_filter counts in its IP layer, the sink's InEchos in
# its ICMP layer; a snap reads the markers first and the counts after.
# The markers are counted out of the router's forwarding counters (both
# by the kernel without xfib; the first by xfib and the second by the
# kernel with it) and pass_ip_options is checked to have grown by the
# second alone, so every check of a send holds the N frames' counts.
# The sends from sink2 (r-sink2 is also sent from without an address,
# with nothing routed back through it, so no marker could pass) wait for
# all N to arrive, and give a drop a second to show it was not a delay.
# run.sh: long
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init
python3_resolve

N=20
RAWSEND="$XFIB_TOP/tests/lib/rawsend.py"

topo_create
topo_add_sink2
# The sink counts echo requests and answers none (IPv4): nothing comes
# back to blur the router's counters.
ip netns exec "$SNK" sysctl -qw net.ipv4.icmp_echo_ignore_all=1
# What the router kernel forwards to the sink goes on sink0's ring, in
# order with what xfib redirects there (see the top).
ip netns exec "$RTR" ethtool -K "$R_SNK" tso off >/dev/null ||
	fail "ethtool -K $R_SNK tso off"
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

# snap: every count send() compares, the markers first (see the top): the
# sink's echo replies (S_MARK), the router kernel's forwarded datagrams
# and rp_filter drops (S_KF, S_KRPF), the sink's echo requests (S_ECHO),
# then xfib's forwarded_v4, pass_rp_filter, pass_local_source and
# pass_ip_options (S_XF, S_RPF, S_LSRC, S_IPOPT). Two processes: one awk
# in the sink's namespace reads the sink's file twice and the router's
# through xfibd's /proc entry (xfibd runs in the router's namespace
# throughout), then xfibctl stats -j: the test sends 75 times.
snap() {
	local stats
	# shellcheck disable=SC2016
	read -r S_MARK S_KF S_KRPF S_ECHO < <(in_ns "$SNK" awk '
		FNR == 1 { f++ }
		$1 == "Icmp:" && !icmp[f]++ { for (i = 2; i <= NF; i++) ic[$i] = i; next }
		$1 == "Icmp:" && f == 1 { mark = $ic["InEchoReps"] }
		$1 == "Icmp:" && f == 4 { echo = $ic["InEchos"] }
		$1 == "Ip:" && f == 2 && !ip++ { for (i = 2; i <= NF; i++) pc[$i] = i; next }
		$1 == "Ip:" && f == 2 { fwd = $pc["ForwDatagrams"] }
		$1 == "TcpExt:" && !tx++ { for (i = 2; i <= NF; i++) tc[$i] = i; next }
		$1 == "TcpExt:" { rpf = $tc["IPReversePathFilter"] }
		END { print mark, fwd, rpf, echo }
	' /proc/net/snmp "/proc/$XFIBD_PID/net/snmp" "/proc/$XFIBD_PID/net/netstat" \
		/proc/net/snmp) && [ -n "$S_ECHO" ] || fail "reading the sink's and the router's counters"
	stats=$(xctl "$RTR" "$PIN" stats -j) || fail "xfibctl stats -j"
	# Its compact JSON, {"forwarded_v4":{"packets":N,...},...}, read by
	# bash: a jq costs more than the rest of a snap.
	local re='"(forwarded_v4|pass_rp_filter|pass_local_source|pass_ip_options)":\{"packets":([0-9]+)[,}]' \
		rest=$stats
	local -A got=()
	while [[ $rest =~ $re ]]; do
		got[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
		rest=${rest#*"${BASH_REMATCH[0]}"}
	done
	((${#got[@]} == 4)) || fail "xfibctl stats -j: a counter missing: $stats"
	S_XF=${got[forwarded_v4]} S_RPF=${got[pass_rp_filter]}
	S_LSRC=${got[pass_local_source]} S_IPOPT=${got[pass_ip_options]}
}

# Where the two markers of a send go (see the top): forwarded by xfib,
# by the kernel, and counted as pass_ip_options. Without xfib, both by
# the kernel.
MARK_XF=0 MARK_KF=2 MARK_IPOPT=0

# send CASE [NS IF DMAC]: N echo requests from the case's source (or
# CASE itself, an address) to the sink, raw from gen followed by the two
# markers (or from NS's port IF to the router's MAC DMAC, without
# markers). Sets ARR (arrived at the sink), XF and KF (forwarded by xfib,
# by the router kernel), RPF and LSRC (xfib's pass_rp_filter and
# pass_local_source) and KRPF (the kernel's IPReversePathFilter): of the
# N frames alone.
send() {
	local e0 x0 k0 r0 l0 kr0 m0 o0 deadline
	snap
	e0=$S_ECHO x0=$S_XF k0=$S_KF r0=$S_RPF l0=$S_LSRC kr0=$S_KRPF m0=$S_MARK o0=$S_IPOPT
	local src=${SRC[$1]:-$1}
	if [ $# -eq 1 ]; then
		ip netns exec "$GEN" "$PYTHON3" -S "$RAWSEND" "$GEN_IF" "$R_GEN_MAC" \
			"$src" "$SNK4" "$N" "$GEN4" || fail "rawsend from $src"
		deadline=$(($(now_ms) + 10000))
		snap
		until ((S_MARK >= m0 + 2)); do
			(($(now_ms) < deadline)) ||
				fail "from $src: $((S_MARK - m0)) of 2 markers arrived after 10 s"
			sleep 0.1
			snap
		done
		((S_MARK == m0 + 2 && S_IPOPT - o0 == MARK_IPOPT)) ||
			fail "from $src: $((S_MARK - m0)) markers arrived, pass_ip_options +$((S_IPOPT - o0)), expected 2 and $MARK_IPOPT"
		x0=$((x0 + MARK_XF)) k0=$((k0 + MARK_KF))
	else
		ip netns exec "$2" "$PYTHON3" -S "$RAWSEND" "$3" "$4" "$src" "$SNK4" \
			"$N" || fail "rawsend from $src"
		# What will arrive has arrived once the counts settle: wait for
		# all, and give a drop the same time to show it was not a delay.
		wait_until 1 arrived_all $((e0 + N)) || true
		snap
	fi
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
MARK_XF=1 MARK_KF=1 MARK_IPOPT=1
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
