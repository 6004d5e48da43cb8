# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# Helpers for xfib's namespace tests, sourced by tests/net/test_*.sh and
# scripts/demo.sh. They build a gen -- router -- sink topology out of veth
# pairs in namespaces with unique names (so several runs can go in
# parallel), run xfibd and xfibctl inside the router, read xfib's and the
# kernel's counters, and tear everything down on every exit path.
#
#   gen                 router                    sink
#   gen0 ------------- r-gen     r-sink ------------- sink0
#   198.18.N1.2/24  198.18.N1.1  198.18.N2.1      198.18.N2.2/24
#   2001:db8:N1::2  2001:db8:N1::1  2001:db8:N2::1  2001:db8:N2::2
#
# where N1 = 16*id + 1 and N2 = 16*id + 2 for topology id (0 by default),
# and optionally a second sink (sink2, 198.18.N3.0/24) on router port
# r-sink2. Only 198.18.0.0/15 and 2001:db8::/32 are used.
#
# The router kernel is set up as a plain forwarding router: forwarding on,
# rp_filter off. gen0 and sink0 have GRO on, because a veth receives
# XDP-redirected frames only with GRO on (or an XDP program attached).
#
# xfibd and xfibctl of a router run under `nsenter --net=...`, not
# `ip netns exec`: the latter remounts /sys, so bpffs pins would vanish.
#
# Environment: XFIBD / XFIBCTL (binaries, default build/), XFIB_MODE
# (attach mode: native or generic), XFIB_KEEP_LOGS=1 (keep the scratch
# directory with the daemon logs).

XFIB_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
XFIB_BUILD=${BUILD:-$XFIB_TOP/build}
XFIBD=${XFIBD:-$XFIB_BUILD/xfibd}
XFIBCTL=${XFIBCTL:-$XFIB_BUILD/xfibctl}

# Everything to undo at exit.
XFIB_NETNS=()       # namespaces created
XFIB_PIDS=()        # background processes (xfibd, ping, tcpdump)
XFIB_PIN_DIRS=()    # pin directories to remove
XFIB_EXIT_HOOKS=()  # commands run at the end of cleanup
XFIB_AUTO_PIN_NS=() # routers using the automatic per-namespace pin dir
XFIB_TMP=""         # scratch directory (logs, captures)
XFIB_KEEP_LOGS=${XFIB_KEEP_LOGS:-0}

log() { printf '[%(%T)T] %s\n' -1 "$*"; }
fail() {
	printf 'FAIL: %s\n' "$*" >&2
	exit 1
}
skip() {
	printf 'SKIP: %s\n' "$*"
	exit 77
}

# ---- cleanup ------------------------------------------------------------

xfib_cleanup() {
	local rc=$? pid ns d live=() mine
	set +e
	# Not back to the defaults: timeout(1) signals the test and then its
	# whole process group, so a second SIGTERM can come while this runs,
	# and must not cut the cleanup short. (A trap, unlike an ignored
	# signal, is not inherited by the commands run here.)
	trap - EXIT
	trap : INT TERM
	# Only processes this shell started and has not reaped yet: a pid that
	# was waited for may since belong to someone else.
	mine=" $(jobs -p | tr '\n' ' ') "
	for pid in "${XFIB_PIDS[@]}"; do
		[[ $mine == *" $pid "* ]] && live+=("$pid")
	done
	for pid in "${live[@]}"; do
		kill -TERM "$pid" 2>/dev/null
	done
	for pid in "${live[@]}"; do
		# Give xfibd a moment to exit cleanly (a sanitized one checks
		# for leaks on the way out), then insist.
		for _ in $(seq 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	# Automatic pin directories are named after the namespace: ask
	# xfibctl inside it while it exists (the error names it too).
	for ns in "${XFIB_AUTO_PIN_NS[@]}"; do
		d=$(xctl "$ns" "" status -j 2>&1 | sed -n \
			-e 's/.*"pin_dir":"\(\/sys\/fs\/bpf\/xfib-ns[0-9]*\)".*/\1/p' \
			-e 's/^xfibctl: status \(\/sys\/fs\/bpf\/xfib-ns[0-9]*\): .*/\1/p')
		[ -z "$d" ] || XFIB_PIN_DIRS+=("$d")
	done
	# Deleting a namespace destroys its veths and with them any attached
	# XDP program; the pinned maps go with the pin directory.
	for ns in "${XFIB_NETNS[@]}"; do
		ip netns del "$ns" 2>/dev/null
	done
	for d in "${XFIB_PIN_DIRS[@]}"; do
		case $d in
		/sys/fs/bpf/?*) rm -rf "$d" ;;
		esac
	done
	# A test's own resources, once its processes are gone.
	for d in "${XFIB_EXIT_HOOKS[@]}"; do
		eval "$d"
	done
	# The kernel sends no malformed netlink: xfibd dropping a message as
	# malformed means its attribute policy refuses what the kernel sends.
	if [ "$rc" -eq 0 ] && [ -n "$XFIB_TMP" ] &&
		grep -qs "netlink: malformed" "$XFIB_TMP"/*.log; then
		printf 'FAIL: xfibd dropped netlink messages as malformed:\n' >&2
		grep -hs "netlink: malformed" "$XFIB_TMP"/*.log | head -n 5 >&2
		rc=1
	fi
	if [ -n "$XFIB_TMP" ] && [ -d "$XFIB_TMP" ]; then
		if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; then
			# Show the daemon logs of a failed run.
			for f in "$XFIB_TMP"/*.log; do
				[ -f "$f" ] || continue
				echo "---- $(basename "$f") (last 30 lines)"
				tail -n 30 "$f"
			done
		fi
		[ "$XFIB_KEEP_LOGS" = 1 ] || rm -rf "$XFIB_TMP"
	fi
	exit "$rc"
}

# Checks the prerequisites and installs the cleanup traps. Call first.
xfib_init() {
	local t
	[ "$(id -u)" -eq 0 ] || skip "needs root (network namespaces, XDP, bpffs)"
	for t in ip nsenter jq ethtool ping tcpdump timeout; do
		command -v "$t" >/dev/null 2>&1 || skip "missing tool: $t (scripts/install-deps.sh)"
	done
	[ -x "$XFIBD" ] || fail "$XFIBD not built (run make)"
	[ -x "$XFIBCTL" ] || fail "$XFIBCTL not built (run make)"
	trap xfib_cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	if ! mountpoint -q /sys/fs/bpf; then
		mount -t bpf -o mode=0700 bpf /sys/fs/bpf || skip "cannot mount bpffs on /sys/fs/bpf"
	fi
	XFIB_TMP=$(mktemp -d "${TMPDIR:-/tmp}/xfib-test.XXXXXX")
	XFIB_TAG="xfib-$$"
	# Private copies: a rebuild during the run cannot swap binaries under
	# a test, and an unprivileged user can run them (test_bad_input).
	mkdir "$XFIB_TMP/bin"
	cp "$XFIBD" "$XFIBCTL" "$XFIB_TMP/bin/"
	chmod 755 "$XFIB_TMP" "$XFIB_TMP/bin" "$XFIB_TMP/bin/"*
	XFIBD="$XFIB_TMP/bin/$(basename "$XFIBD")"
	XFIBCTL="$XFIB_TMP/bin/$(basename "$XFIBCTL")"
	[ "${XFIB_SAN:-0}" != 1 ] || [ "${XFIB_CTL_LEAK_CHECK:-0}" = 1 ] ||
		xfibctl_without_leak_check
	# Tests choose their pin directories themselves.
	unset XFIB_PIN_DIR
}

# xfibctl_without_leak_check: in a sanitized run (XFIB_SAN=1), xfibctl
# runs with AddressSanitizer and UBSan but without LeakSanitizer's check
# at exit, which stops the process and scans its memory: about 60 ms of
# CPU for each of the hundreds of calls a test's polling makes, most of
# the sanitized run's time. xfibd, whose leaks would grow, and the unit
# tests keep it; so does a test that sets XFIB_CTL_LEAK_CHECK=1
# (net/test_cli_golden, which runs every xfibctl command).
xfibctl_without_leak_check() {
	mv "$XFIBCTL" "$XFIBCTL.san"
	cat >"$XFIBCTL" <<-EOF
	#!/bin/bash
	ASAN_OPTIONS="\${ASAN_OPTIONS:-}:detect_leaks=0" exec -a "\$0" "$XFIBCTL.san" "\$@"
	EOF
	chmod 755 "$XFIBCTL"
}

# ---- running things in namespaces ---------------------------------------

# in_ns NS CMD... : runs CMD in namespace NS, keeping the host's /sys/fs/bpf.
in_ns() {
	local ns=$1
	shift
	nsenter --net="/run/netns/$ns" -- "$@"
}

# xctl NS PIN_DIR ARGS... : xfibctl of the router in NS. An empty PIN_DIR
# means the automatic per-namespace directory.
xctl() {
	local ns=$1 pin=$2
	shift 2
	if [ -n "$pin" ]; then
		in_ns "$ns" "$XFIBCTL" --pin-dir "$pin" "$@"
	else
		in_ns "$ns" "$XFIBCTL" "$@"
	fi
}

# rctl ARGS... : xfibctl of the current topology's router.
rctl() { xctl "$RTR" "$PIN" "$@"; }


# ---- topology -----------------------------------------------------------

# mac_of NS DEV
mac_of() { ip -n "$1" -j link show dev "$2" | jq -r '.[0].address'; }

# add_ns NAME: creates a namespace (registered for deletion), lo up.
add_ns() {
	ip netns add "$1" || fail "ip netns add $1"
	XFIB_NETNS+=("$1")
	ip -n "$1" link set lo up
}

# link_ns NS_A DEV_A NS_B DEV_B: veth pair between two namespaces.
link_ns() {
	ip -n "$1" link add "$2" type veth peer name "$4" netns "$3" ||
		fail "veth $1/$2 -- $3/$4"
	ip -n "$1" link set "$2" up
	ip -n "$3" link set "$4" up
}

# router_sysctls NS DEV...: a forwarding router without source filtering.
router_sysctls() {
	local ns=$1 d
	shift
	ip netns exec "$ns" sh -e -c '
		sysctl -qw net.ipv4.ip_forward=1
		sysctl -qw net.ipv6.conf.all.forwarding=1
		sysctl -qw net.ipv4.conf.all.rp_filter=0
		sysctl -qw net.ipv4.conf.default.rp_filter=0
	' || fail "sysctls in $ns"
	for d in "$@"; do
		ip netns exec "$ns" sysctl -qw "net.ipv4.conf.$d.rp_filter=0" \
			"net.ipv4.conf.$d.forwarding=1" || fail "sysctls of $ns/$d"
	done
}

# host_if NS DEV V4NET V6NET: end host on a router link: .2 / ::2, default
# routes via .1 / ::1, GRO on (it receives XDP-redirected frames).
host_if() {
	local ns=$1 dev=$2 v4=$3 v6=$4
	ip -n "$ns" addr add "$v4.2/24" dev "$dev"
	ip -n "$ns" addr add "$v6::2/64" dev "$dev" nodad
	ip -n "$ns" route add default via "$v4.1"
	ip -n "$ns" -6 route add default via "$v6::1"
	ip netns exec "$ns" ethtool -K "$dev" gro on >/dev/null ||
		fail "ethtool -K $dev gro on in $ns"
	# Accept whatever arrives; some tests route extra prefixes to hosts.
	ip netns exec "$ns" sysctl -qw net.ipv4.conf.all.rp_filter=0 \
		"net.ipv4.conf.$dev.rp_filter=0"
}

# wait_ipv6_ready NS...: waits until no address in these namespaces is
# still tentative (duplicate address detection takes about 2 s after a
# link comes up). Until then a router cannot resolve an IPv6 next hop:
# the kernel sends a neighbour solicitation for a forwarded packet only
# from a usable link-local address, and the next try comes a second
# later, after ping -W 1 has given up.
wait_ipv6_ready() {
	local deadline=$((SECONDS + 10)) ns busy
	while :; do
		busy=""
		for ns in "$@"; do
			[ -z "$(ip -n "$ns" -6 addr show tentative)" ] || busy="$busy $ns"
		done
		[ -n "$busy" ] || return 0
		((SECONDS < deadline)) ||
			fail "IPv6 addresses still tentative after 10 s in:$busy"
		sleep 0.1
	done
}

# shellcheck disable=SC2034 # the variables are for the tests
# topo_create [ID]: builds gen -- router -- sink and sets, for that
# topology: GEN RTR SNK (namespaces), GEN_IF R_GEN R_SNK SNK_IF (ports),
# GEN4 R_GEN4 R_SNK4 SNK4 / GEN6 R_GEN6 R_SNK6 SNK6 (addresses), and the
# MACs R_GEN_MAC R_SNK_MAC GEN_MAC SNK_MAC. Also PIN: a unique pin dir
# for this router (xfibd/xfibctl are not started here).
topo_create() {
	local id=${1:-0} n1 n2
	n1=$((16 * id + 1))
	n2=$((16 * id + 2))
	TOPO_ID=$id
	GEN="$XFIB_TAG-$id-gen"
	RTR="$XFIB_TAG-$id-rtr"
	SNK="$XFIB_TAG-$id-sink"
	GEN_IF=gen0 R_GEN=r-gen R_SNK=r-sink SNK_IF=sink0
	NET4_G="198.18.$n1" NET4_S="198.18.$n2"
	NET6_G="2001:db8:$n1" NET6_S="2001:db8:$n2"
	GEN4="$NET4_G.2" R_GEN4="$NET4_G.1" R_SNK4="$NET4_S.1" SNK4="$NET4_S.2"
	GEN6="$NET6_G::2" R_GEN6="$NET6_G::1" R_SNK6="$NET6_S::1" SNK6="$NET6_S::2"

	add_ns "$GEN"
	add_ns "$RTR"
	add_ns "$SNK"
	router_sysctls "$RTR"
	link_ns "$GEN" "$GEN_IF" "$RTR" "$R_GEN"
	link_ns "$SNK" "$SNK_IF" "$RTR" "$R_SNK"
	router_sysctls "$RTR" "$R_GEN" "$R_SNK"
	ip -n "$RTR" addr add "$R_GEN4/24" dev "$R_GEN"
	ip -n "$RTR" addr add "$R_SNK4/24" dev "$R_SNK"
	ip -n "$RTR" addr add "$R_GEN6/64" dev "$R_GEN" nodad
	ip -n "$RTR" addr add "$R_SNK6/64" dev "$R_SNK" nodad
	host_if "$GEN" "$GEN_IF" "$NET4_G" "$NET6_G"
	host_if "$SNK" "$SNK_IF" "$NET4_S" "$NET6_S"

	wait_ipv6_ready "$GEN" "$RTR" "$SNK"

	GEN_MAC=$(mac_of "$GEN" "$GEN_IF")
	SNK_MAC=$(mac_of "$SNK" "$SNK_IF")
	R_GEN_MAC=$(mac_of "$RTR" "$R_GEN")
	R_SNK_MAC=$(mac_of "$RTR" "$R_SNK")
	PIN="/sys/fs/bpf/${XFIB_PIN_PREFIX:-xfib-test}-$$-$id"
	XFIB_PIN_DIRS+=("$PIN")
	XFIBD_LOG="$XFIB_TMP/xfibd-$id.log"
	log "topology $id: $GEN ($GEN4) -- $RTR -- $SNK ($SNK4), pin dir $PIN"
}

# shellcheck disable=SC2034 # the variables are for the tests
# topo_add_sink2: a second sink namespace SNK2 on router port R_SNK2, net
# 198.18.(16*id+3).0/24 and 2001:db8:(16*id+3)::/64 (SNK2_4, SNK2_6, ...).
topo_add_sink2() {
	local n3=$((16 * TOPO_ID + 3))
	SNK2="$XFIB_TAG-$TOPO_ID-sink2"
	R_SNK2=r-sink2 SNK2_IF=sink0
	NET4_S2="198.18.$n3" NET6_S2="2001:db8:$n3"
	R_SNK2_4="$NET4_S2.1" SNK2_4="$NET4_S2.2"
	R_SNK2_6="$NET6_S2::1" SNK2_6="$NET6_S2::2"
	add_ns "$SNK2"
	link_ns "$SNK2" "$SNK2_IF" "$RTR" "$R_SNK2"
	router_sysctls "$RTR" "$R_SNK2"
	ip -n "$RTR" addr add "$R_SNK2_4/24" dev "$R_SNK2"
	ip -n "$RTR" addr add "$R_SNK2_6/64" dev "$R_SNK2" nodad
	host_if "$SNK2" "$SNK2_IF" "$NET4_S2" "$NET6_S2"
	wait_ipv6_ready "$RTR" "$SNK2"
	SNK2_MAC=$(mac_of "$SNK2" "$SNK2_IF")
	R_SNK2_MAC=$(mac_of "$RTR" "$R_SNK2")
}

# use_auto_pin_dir: the current router's xfibd and xfibctl run without
# --pin-dir, on the automatic per-namespace directory (removed at exit).
use_auto_pin_dir() {
	PIN=""
	XFIB_AUTO_PIN_NS+=("$RTR")
}

# router_ports: the router ports of the current topology.
router_ports() {
	echo "$R_GEN" "$R_SNK"
	[ -z "${SNK2:-}" ] || echo "$R_SNK2"
}

# neighbours_permanent: the router's neighbours gen, sink and sink2 (if
# there is one) entered permanent in both families, with the MACs of their
# ports: no change a test makes then waits for a neighbour to resolve.
neighbours_permanent() {
	local n
	for n in "$GEN4 $GEN6 $GEN $GEN_IF $R_GEN" "$SNK4 $SNK6 $SNK $SNK_IF $R_SNK" \
		${SNK2:+"$SNK2_4 $SNK2_6 $SNK2 $SNK2_IF $R_SNK2"}; do
		# shellcheck disable=SC2086 # five words intended
		set -- $n
		ip -n "$RTR" neigh replace "$1" lladdr "$(mac_of "$3" "$4")" dev "$5" nud permanent
		ip -n "$RTR" -6 neigh replace "$2" lladdr "$(mac_of "$3" "$4")" dev "$5" nud permanent
	done
}

# resolve_neighbours: gen pings every sink address through the router (by
# the kernel or by xfib), so every neighbour on the path is resolved. The
# first echo may be lost while the kernels resolve each other: retry.
resolve_neighbours() {
	local dst ok
	for dst in "$SNK4" "$SNK6" ${SNK2:+"$SNK2_4" "$SNK2_6"}; do
		ok=0
		for _ in 1 2 3 4 5; do
			if ip netns exec "$GEN" ping -q -c 1 -W 1 "$dst" >/dev/null 2>&1; then
				ok=1
				break
			fi
			sleep 0.2
		done
		[ "$ok" = 1 ] || fail "gen cannot reach $dst through the router"
	done
}

# ---- xfibd --------------------------------------------------------------

# xfibd_start_ns NS PIN_DIR LOG [ARGS...]: starts xfibd in router NS in the
# background and waits until it has synced. Sets XFIBD_PID.
xfibd_start_ns() {
	local ns=$1 pin=$2 logf=$3
	shift 3
	local args=(-v)
	[ -z "$pin" ] || args+=(--pin-dir "$pin")
	nsenter --net="/run/netns/$ns" -- "$XFIBD" "${args[@]}" "$@" >>"$logf" 2>&1 &
	XFIBD_PID=$!
	XFIB_PIDS+=("$XFIBD_PID")
	if ! xfibd_wait_synced "$ns" "$pin" "${XFIBD_SYNC_TIMEOUT:-10}" "$XFIBD_PID"; then
		kill -0 "$XFIBD_PID" 2>/dev/null || fail "xfibd exited during start-up (log: $(tail -n 5 "$logf"))"
		fail "xfibd in $ns not synced after ${XFIBD_SYNC_TIMEOUT:-10} s: $(xctl "$ns" "$pin" status -j 2>&1 | tr -d '\n')"
	fi
	log "xfibd pid $XFIBD_PID synced in $ns"
}

# xfibd_start: xfibd of the current topology's router.
xfibd_start() { xfibd_start_ns "$RTR" "$PIN" "$XFIBD_LOG"; }

# xfibd_tbl24_maps PID: how many maps of the dir24_8 / trie6 tbl24 shape
# (one 64 MiB value) xfibd PID holds: one per family running either.
xfibd_tbl24_maps() {
	{ grep -l '^value_size:[[:space:]]*67108864$' /proc/"$1"/fdinfo/* 2>/dev/null || true; } | wc -l
}

# jqe ARGS...: jq -e on standard input, false when the input is empty. jq
# 1.6's -e exits 0 when it reads no value at all, so a check of a command
# that printed nothing (a status that failed) would pass.
jqe() {
	local in
	in=$(cat)
	[ -n "${in//[[:space:]]/}" ] || return 1
	jq -e "$@" <<<"$in"
}

# xfibd_synced NS PIN_DIR PID: status says xfibd PID is running and
# synced, and both families have routes.
xfibd_synced() {
	xctl "$1" "$2" status -j 2>/dev/null | jqe --argjson pid "$3" '
		.daemon.running == true and .daemon.pid == $pid and
		.daemon.synced == true and
		.ipv4.routes > 0 and .ipv6.routes > 0' >/dev/null 2>&1
}

# xfibd_wait_synced NS PIN_DIR TIMEOUT_S PID: waits up to TIMEOUT_S for
# xfibd_synced.
xfibd_wait_synced() {
	wait_until "$3" xfibd_synced "$1" "$2" "$4"
}

# attach_all: attaches every router port of the topology (in mode
# $XFIB_MODE if set: native or generic).
attach_all() {
	local p mode=()
	[ -z "${XFIB_MODE:-}" ] || mode=(--mode "$XFIB_MODE")
	# shellcheck disable=SC2046 # word splitting of the port list intended
	rctl attach "${mode[@]}" $(router_ports) || fail "xfibctl attach $(router_ports | tr '\n' ' ')"
	for p in $(router_ports); do
		xdp_prog_on "$RTR" "$p" || fail "no XDP program on $RTR/$p after attach"
	done
}

# xdp_prog_on NS DEV: true if an XDP program is attached to DEV.
xdp_prog_on() {
	ip -n "$1" -j -d link show dev "$2" | jqe '.[0].xdp != null' >/dev/null
}

# ---- counters -----------------------------------------------------------
# (The awk programs are in single quotes on purpose: SC2016 below.)

# xcounters NS PIN_DIR FIELD NAME...: xfib counters NAME... (FIELD packets
# or bytes of each) from one stats -j, on one line. The output is compact
# JSON, {"NAME":{"packets":N,"bytes":N},...}, read by bash: counters are
# read hundreds of times a test, and a jq costs more than xfibctl itself.
xcounters() {
	local stats f=$3 n re out=()
	stats=$(xctl "$1" "$2" stats -j) || fail "xfibctl stats -j"
	shift 3
	for n; do
		re="\"$n\":\\{[^{}]*\"$f\":([0-9]+)[,}]"
		[[ $stats =~ $re ]] || fail "xfibctl stats -j: no counter $n $f: $stats"
		out+=("${BASH_REMATCH[1]}")
	done
	echo "${out[*]}"
}

# xcounter NS PIN_DIR NAME [packets|bytes]: an xfib counter from stats -j.
xcounter() { xcounters "$1" "$2" "${4:-packets}" "$3"; }

# counter NAME: xfib packet counter of the current router.
counter() { xcounter "$RTR" "$PIN" "$1"; }

# kfwd4 NS: the router kernel's Ip: ForwDatagrams (IpForwDatagrams).
kfwd4() {
	# shellcheck disable=SC2016
	in_ns "$1" awk '
		$1 == "Ip:" && !hdr { for (i = 2; i <= NF; i++) col[$i] = i; hdr = 1; next }
		$1 == "Ip:" && hdr { print $col["ForwDatagrams"]; exit }
	' /proc/net/snmp
}

# kfwd6 NS: the router kernel's Ip6OutForwDatagrams.
kfwd6() {
	# shellcheck disable=SC2016
	in_ns "$1" awk '$1 == "Ip6OutForwDatagrams" { print $2 }' /proc/net/snmp6
}

# icmp_in_echos NS: echo requests received by NS's kernel, v4 and v6 summed.
icmp_in_echos() {
	local v4 v6
	# shellcheck disable=SC2016
	v4=$(in_ns "$1" awk '
		$1 == "Icmp:" && !hdr { for (i = 2; i <= NF; i++) col[$i] = i; hdr = 1; next }
		$1 == "Icmp:" && hdr { print $col["InEchos"]; exit }
	' /proc/net/snmp)
	# shellcheck disable=SC2016
	v6=$(in_ns "$1" awk '$1 == "Icmp6InEchos" { print $2 }' /proc/net/snmp6)
	echo $((v4 + v6))
}

# kfwd46 NS: kfwd4 and kfwd6 of NS, on one line (one process).
kfwd46() {
	# shellcheck disable=SC2016
	in_ns "$1" awk '
		$1 == "Ip:" && !hdr { for (i = 2; i <= NF; i++) col[$i] = i; hdr = 1; next }
		$1 == "Ip:" && hdr == 1 { v4 = $col["ForwDatagrams"]; hdr = 2 }
		$1 == "Ip6OutForwDatagrams" { v6 = $2 }
		END { if (v4 == "" || v6 == "") exit 1; print v4, v6 }
	' /proc/net/snmp /proc/net/snmp6
}

# fwd_counts: the forwarding counters of the current router, xfib's
# forwarded_v4 and forwarded_v6 and the kernel's, to F_X4 F_X6 F_K4 F_K6.
fwd_counts() {
	local x k
	x=$(xcounters "$RTR" "$PIN" packets forwarded_v4 forwarded_v6)
	k=$(kfwd46 "$RTR") || fail "the forwarding counters of $RTR's kernel"
	read -r F_X4 F_X6 <<<"$x"
	read -r F_K4 F_K6 <<<"$k"
}

# snapshot: records the forwarding counters of the current router
# (S_X4 S_X6 xfib forwarded, S_K4 S_K6 kernel forwarded).
snapshot() {
	fwd_counts
	S_X4=$F_X4 S_X6=$F_X6 S_K4=$F_K4 S_K6=$F_K6
}

# deltas: sets D_X4 D_X6 D_K4 D_K6 relative to the last snapshot.
deltas() {
	fwd_counts
	D_X4=$((F_X4 - S_X4)) D_X6=$((F_X6 - S_X6))
	D_K4=$((F_K4 - S_K4)) D_K6=$((F_K6 - S_K6))
	log "xfib forwarded v4 +$D_X4 v6 +$D_X6, kernel forwarded v4 +$D_K4 v6 +$D_K6"
}

# forwarded_by xdp|kernel MIN WHAT: by the last deltas, that path forwarded
# MIN packets or more in each family and the other path none.
forwarded_by() {
	local who=$1 min=$2
	if [ "$who" = xdp ]; then
		((D_X4 >= min && D_X6 >= min && D_K4 == 0 && D_K6 == 0)) && return 0
	else
		((D_K4 >= min && D_K6 >= min && D_X4 == 0 && D_X6 == 0)) && return 0
	fi
	fail "$3: expected $who to forward >= $min per family and the other path none: xfib v4 +$D_X4 v6 +$D_X6, kernel v4 +$D_K4 v6 +$D_K6"
}

# ---- traffic ------------------------------------------------------------

# check_flowing WHAT: over the next second, traffic already running from
# gen (40 packets or more per family) is forwarded by xfib and none by the
# router kernel.
check_flowing() {
	snapshot
	sleep 1
	deltas
	forwarded_by xdp 40 "$1 (1 s of traffic)"
}

# nping NS ARGS...: ping from NS, waiting at most 1 s for an answer (ARGS
# may override -W). Not quiet: ICMP errors are printed per packet.
nping() {
	local ns=$1
	shift
	ip netns exec "$ns" ping -W 1 "$@"
}

# ping_summary TEXT: sets PING_TX and PING_RX from the summary line of
# ping's output TEXT ("N packets transmitted, M received, ..."); returns 1
# (both 0) if there is none.
ping_summary() {
	local line
	PING_TX=0 PING_RX=0
	line=$(grep -m 1 'packets transmitted' <<<"$1") || return 1
	PING_TX=$(sed -n 's/^\([0-9]*\) packets transmitted.*/\1/p' <<<"$line")
	PING_RX=$(sed -n 's/.* \([0-9]*\) received.*/\1/p' <<<"$line")
	PING_TX=${PING_TX:-0} PING_RX=${PING_RX:-0}
}

# ping_all NS FAMILY DST COUNT [ARGS...]: COUNT echoes, every one answered.
ping_all() {
	local ns=$1 fam=$2 dst=$3 n=$4 out
	shift 4
	out=$(nping "$ns" "-$fam" -q -c "$n" -i 0.01 "$@" "$dst" 2>&1) || true
	ping_summary "$out" || true
	[ "$PING_RX" -eq "$n" ] ||
		fail "ping -$fam $dst from $ns: $PING_RX/$n answered: $(tr '\n' ' ' <<<"$out")"
}

# ping_both COUNT [DST4 DST6]: COUNT echoes per family from gen to DST4
# and DST6 (default: the sink), every one answered, counted: snapshot
# before, deltas after.
ping_both() {
	snapshot
	ping_all "$GEN" 4 "${2:-$SNK4}" "$1"
	ping_all "$GEN" 6 "${3:-$SNK6}" "$1"
	deltas
}

# Streams: pings from gen that run in the background while a test changes
# things, checked when they end. Their pids, by name.
declare -gA XFIB_STREAMS=()

# stream_start NAME FAMILY DST PING_ARGS...: starts a quiet ping from gen
# to DST (PING_ARGS give its count or deadline and interval); its output
# goes to $XFIB_TMP/NAME.out.
stream_start() {
	local name=$1 fam=$2 dst=$3
	shift 3
	nping "$GEN" "-$fam" -q "$@" "$dst" >"$XFIB_TMP/$name.out" 2>&1 &
	XFIB_STREAMS[$name]=$!
	XFIB_PIDS+=("$!")
}

# stream_wait NAME: waits for the stream to end and sets PING_TX and
# PING_RX from its summary; fails if it printed none.
stream_wait() {
	wait "${XFIB_STREAMS[$1]}" 2>/dev/null || true
	ping_summary "$(cat "$XFIB_TMP/$1.out")" ||
		fail "stream $1: no ping summary: $(tr '\n' ' ' <"$XFIB_TMP/$1.out")"
	log "stream $1: $PING_RX/$PING_TX answered"
}

# stream_answered NAME COUNT WHAT: the stream sent COUNT echoes and every
# one was answered.
stream_answered() {
	stream_wait "$1"
	((PING_TX == $2 && PING_RX == $2)) ||
		fail "$3: $PING_RX of $PING_TX echoes answered, $2 expected: $(tr '\n' ' ' <"$XFIB_TMP/$1.out")"
}

# stream_finish NAME: ends a running stream the way ping's own deadline
# does (SIGINT: it prints its summary), then stream_wait. For a stream
# that must span steps whose duration depends on the machine's load.
stream_finish() {
	# The stream's pid is the background subshell that runs nping (with
	# SIGINT ignored, as every background command), ping its child.
	kill -INT "${XFIB_STREAMS[$1]}" 2>/dev/null || true
	pkill -INT -P "${XFIB_STREAMS[$1]}" 2>/dev/null || true
	stream_wait "$1"
}

# stream_stop NAME: ends a stream that is still running.
stream_stop() {
	kill "${XFIB_STREAMS[$1]}" 2>/dev/null || true
	wait "${XFIB_STREAMS[$1]}" 2>/dev/null || true
}

# xdp_ping_ok FAMILY DST [ECHO_NS [PING_ARGS...]]: one ping from gen to
# DST (FAMILY 4 or 6; with PING_ARGS, a source address say) is answered,
# xfib forwarded the echo and its reply (the forwarded counter grew by 2
# or more) and the router kernel forwarded nothing. With ECHO_NS, the echo
# must also have reached that namespace's kernel.
xdp_ping_ok() {
	local fam=$1 dst=$2 echo_ns=${3:-} x0 k0 e0=0 x1 k1 e1=1 c=forwarded_v4 kf=kfwd4
	shift $(($# < 3 ? $# : 3))
	[ "$fam" = 4 ] || { c=forwarded_v6; kf=kfwd6; }
	x0=$(counter "$c")
	k0=$("$kf" "$RTR")
	[ -z "$echo_ns" ] || e0=$(icmp_in_echos "$echo_ns")
	nping "$GEN" "-$fam" -c 1 "$@" "$dst" >/dev/null 2>&1 || return 1
	x1=$(counter "$c")
	k1=$("$kf" "$RTR")
	[ -z "$echo_ns" ] || e1=$(icmp_in_echos "$echo_ns")
	[ $((x1 - x0)) -ge 2 ] && [ "$k1" -eq "$k0" ] && [ "$e1" -gt "$e0" ]
}

# python3_resolve: sets PYTHON3 to the interpreter python3 starts (its
# sys.executable), for a test that runs Python scripts many times: the
# python3 on PATH may be a version manager's shim, a script that looks the
# version up at every start (a second or more each on a busy machine).
python3_resolve() {
	command -v python3 >/dev/null 2>&1 || skip "missing tool: python3 (scripts/install-deps.sh)"
	PYTHON3=$(python3 -c 'import sys; print(sys.executable)') && [ -x "$PYTHON3" ] ||
		fail "python3: no interpreter path (sys.executable: '$PYTHON3')"
}

# hosts_fill_checksums NS:DEV...: the hosts compute their own TCP/UDP
# checksums, as hosts behind a physical port do. By default a host on a
# veth leaves them to the device (CHECKSUM_PARTIAL), and xfib hands such
# packets to the kernel (pass_csum_partial, test_csum_offload): a test
# that wants its flows forwarded in XDP needs hosts that fill them in.
hosts_fill_checksums() {
	local nd
	for nd in "$@"; do
		ip netns exec "${nd%%:*}" ethtool -K "${nd#*:}" tx off >/dev/null ||
			fail "ethtool -K ${nd#*:} tx off in ${nd%%:*}"
	done
}

# now_ms: the wall clock in milliseconds (bash's own, no fork), for
# deadlines and durations. Not $SECONDS: it counts whole seconds, so a
# deadline of SECONDS + 1 can pass a moment after it is set.
now_ms() {
	local us=${EPOCHREALTIME//[!0-9]/}
	echo $((10#$us / 1000))
}

# wait_until TIMEOUT_S CMD...: runs CMD every 0.1 s until it succeeds;
# returns 1 if it still fails TIMEOUT_S seconds (whole) after the call.
wait_until() {
	local deadline=$(($(now_ms) + $1 * 1000))
	shift
	until "$@"; do
		(($(now_ms) < deadline)) || return 1
		sleep 0.1
	done
}

# wait_xdp_ping FAMILY DST TIMEOUT_MS [ECHO_NS [PING_ARGS...]]: polls
# xdp_ping_ok until it holds and prints the milliseconds it took; returns
# 1 after TIMEOUT_MS.
wait_xdp_ping() {
	local fam=$1 dst=$2 limit=$3 echo_ns=${4:-} t0
	shift $(($# < 4 ? $# : 4))
	t0=$(now_ms)
	while :; do
		if xdp_ping_ok "$fam" "$dst" "$echo_ns" "$@"; then
			echo $(($(now_ms) - t0))
			return 0
		fi
		[ $(($(now_ms) - t0)) -lt "$limit" ] || return 1
	done
}

# capture_start NS DEV FILTER: tcpdump of the first matching frame,
# link-level header and IP header details, into CAP_FILE. Sets CAP_PID.
capture_start() {
	local ns=$1 dev=$2 filter=$3
	CAP_FILE=$(mktemp "$XFIB_TMP/cap.XXXXXX")
	ip netns exec "$ns" timeout 10 tcpdump -l -e -v -n -c 1 -i "$dev" "$filter" \
		>"$CAP_FILE" 2>"$CAP_FILE.err" &
	CAP_PID=$!
	XFIB_PIDS+=("$CAP_PID")
	for _ in $(seq 50); do
		grep -q 'listening on' "$CAP_FILE.err" 2>/dev/null && return 0
		sleep 0.1
	done
	fail "tcpdump did not start in $ns: $(cat "$CAP_FILE.err")"
}

# capture_wait: waits for the capture to finish and sets CAP_TEXT to the
# frame. (Not in a $(...) subshell: only this shell can wait for tcpdump.)
capture_wait() {
	wait "$CAP_PID" || true
	[ -s "$CAP_FILE" ] || fail "nothing captured ($(tr '\n' ' ' <"$CAP_FILE.err"))"
	CAP_TEXT=$(cat "$CAP_FILE")
	log "captured: $(tr '\n' ' ' <<<"$CAP_TEXT" | tr -s ' ')"
}

# check_frame TEXT SRC_MAC DST_MAC TTL: the captured frame (tcpdump -e -v)
# carries these MACs and this TTL / hop limit.
check_frame() {
	local text=$1 smac=$2 dmac=$3 ttl=$4 first
	first=$(head -n 1 <<<"$text")
	[[ $first == *"$smac > $dmac"* ]] ||
		fail "frame MACs: expected $smac > $dmac, got: $first"
	[[ $text =~ (ttl|hlim)\ ${ttl}[,\)] ]] ||
		fail "frame TTL/hop limit: expected $ttl, got: $(tr '\n' ' ' <<<"$text")"
}

# ---- common set-ups -----------------------------------------------------

# expect_xdp FAMILY DST [TIMEOUT_MS [ECHO_NS [PING_ARGS...]]]: fails
# unless a ping from gen to DST (with PING_ARGS) is XDP-forwarded both
# ways (and reaches ECHO_NS) within TIMEOUT_MS (default 3000).
expect_xdp() {
	local fam=$1 dst=$2 limit=${3:-3000} echo_ns=${4:-} ms
	shift $(($# < 4 ? $# : 4))
	ms=$(wait_xdp_ping "$fam" "$dst" "$limit" "$echo_ns" "$@") ||
		fail "ping -$fam $dst${*:+ $*}${echo_ns:+ to $echo_ns} not XDP-forwarded within $limit ms ($(stats_line))"
	log "ping -$fam $dst${*:+ $*}${echo_ns:+ to $echo_ns}: XDP-forwarded after $ms ms"
}

# sinks_share NET4 NET6: NET4.1 and NET6::1 (a /24 and a /48 prefix,
# without their length) on the loopback of both sinks, the router's main
# table routing the prefixes to the sink: which sink answers a ping tells
# the router's choice. Sets SHARED4 and SHARED6 to the addresses.
sinks_share() {
	local ns
	SHARED4=$1.1 SHARED6=$2::1
	for ns in "$SNK" "$SNK2"; do
		ip -n "$ns" addr add "$SHARED4/32" dev lo || fail "$SHARED4 on $ns"
		ip -n "$ns" addr add "$SHARED6/128" dev lo || fail "$SHARED6 on $ns"
	done
	ip -n "$RTR" route add "$1.0/24" via "$SNK4" || fail "route $1.0/24"
	ip -n "$RTR" -6 route add "$2::/48" via "$SNK6" || fail "route $2::/48"
}

# wgquick_rules: wg-quick's policy routing on the router (topology with
# sink2), both families: main's default route to the sink, table 51820's
# to sink2 (a tunnel device in real life: the kernel's either way for
# xfib), and the rules "lookup main suppress_prefixlength 0" (priority
# 32764) then "not fwmark 0xca6c lookup 51820" (32765).
wgquick_rules() {
	local fam
	ip -n "$RTR" route add default via "$SNK4"
	ip -n "$RTR" -6 route add default via "$SNK6"
	ip -n "$RTR" route add default via "$SNK2_4" table 51820
	ip -n "$RTR" -6 route add default via "$SNK2_6" table 51820
	for fam in 4 6; do
		ip -n "$RTR" "-$fam" rule add not fwmark 0xca6c table 51820 pref 32765
		ip -n "$RTR" "-$fam" rule add table main suppress_prefixlength 0 pref 32764
	done
}

# lookup_names_rule DST SRC PRIO: xfibctl lookup of DST from SRC entering
# by r-gen names the policy rule of priority PRIO as the one that decided,
# and agrees with the kernel's answer for the same packet.
lookup_names_rule() {
	local out
	out=$(rctl lookup -j "$1" --from "$2" --iif "$R_GEN")
	[ "$(jq -r '.rules.priority // "none"' <<<"$out")" = "$3" ] ||
		fail "lookup $1 from $2: rule $(jq -c .rules <<<"$out"), want priority $3"
	[ "$(jq -r .verdict <<<"$out")" = match ] ||
		fail "lookup $1 from $2: xfib and the kernel disagree: $(jq -c '{nexthop,kernel_fib,verdict}' <<<"$out")"
}

# stats_line: the non-zero xfib counters, on one line (for messages).
stats_line() {
	rctl stats -j 2>&1 | jq -c 'with_entries(select(.value.packets > 0)) |
		map_values(.packets)' 2>/dev/null || rctl stats -j 2>&1 | tr '\n' ' '
}

# topo_up [sink2]: topology 0 (with the second sink if asked), xfibd,
# every port attached, neighbours resolved, and traffic from gen to each
# sink XDP-forwarded in both families.
# shellcheck disable=SC2120 # the second sink is optional
topo_up() {
	topo_create 0
	[ "${1:-}" != sink2 ] || topo_add_sink2
	xfibd_start
	attach_all
	resolve_neighbours
	expect_xdp 4 "$SNK4"
	expect_xdp 6 "$SNK6"
	if [ -n "${SNK2:-}" ]; then
		expect_xdp 4 "$SNK2_4" 3000 "$SNK2"
		expect_xdp 6 "$SNK2_6" 3000 "$SNK2"
	fi
}

# ---- comparing with the kernel ------------------------------------------

# kernel_prefixes NS FAMILY: the prefixes of the kernel's main and local
# tables (what xfib mirrors by default), counted once per table.
kernel_prefixes() {
	ip -n "$1" "-$2" -j route show table all | jq '[.[] |
		select((.table // "main") == "main" or .table == "local") |
		((.table // "main") + " " + .dst)] | unique | length'
}

# wait_prefixes_match [TIMEOUT_S]: the router's published instances hold
# as many prefixes as the kernel's main and local tables, in both families.
# shellcheck disable=SC2120 # the timeout is optional
wait_prefixes_match() {
	local deadline=$((SECONDS + ${1:-10})) st k4 k6 x4 x6
	while :; do
		k4=$(kernel_prefixes "$RTR" 4)
		k6=$(kernel_prefixes "$RTR" 6)
		st=$(rctl status -j)
		x4=$(jq .ipv4.routes <<<"$st")
		x6=$(jq .ipv6.routes <<<"$st")
		[ "$k4" = "$x4" ] && [ "$k6" = "$x6" ] && return 0
		((SECONDS < deadline)) ||
			fail "prefixes: kernel ipv4 $k4 ipv6 $k6, xfib ipv4 $x4 ipv6 $x6"
		sleep 0.1
	done
}

# verify_clean [WHAT]: xfibctl verify finds no mismatch (and random
# addresses agree too).
verify_clean() {
	local out
	out=$(rctl verify --random 20000 2>&1) ||
		fail "verify${1:+ ($1)}: $(tail -n 20 <<<"$out")"
	log "verify${1:+ ($1)}: $(grep -c '^ipv[46]: .* 0 mismatched' <<<"$out") families clean, $(grep -c '^ipv[46] rule flows: .* 0 mismatched' <<<"$out") with rule flows"
}

# lookup_is ADDR JQ_EXPR: the dataplane's answer for ADDR (lookup -j)
# satisfies JQ_EXPR.
lookup_is() {
	rctl -j lookup "$1" 2>/dev/null | jqe "$2" >/dev/null 2>&1
}

# wait_lookup ADDR JQ_EXPR [TIMEOUT_S]: polls lookup_is until it holds.
wait_lookup() {
	wait_until "${3:-10}" lookup_is "$1" "$2" ||
		fail "lookup $1: not $2 after ${3:-10} s: $(rctl -j lookup "$1" 2>&1 | jq -c '{nexthop, egress, neighbour, action, reason}' 2>/dev/null)"
}

# status_is JQ_EXPR: the router's status (status -j) satisfies JQ_EXPR.
status_is() {
	rctl status -j 2>/dev/null | jqe "$1" >/dev/null 2>&1
}

# kicmp NS FIELD: a field of the Icmp: line of NS's /proc/net/snmp
# (OutDestUnreachs, InEchos, ...); kicmp6 NS NAME: a /proc/net/snmp6 one.
kicmp() {
	# shellcheck disable=SC2016
	in_ns "$1" awk -v f="$2" '
		$1 == "Icmp:" && !hdr { for (i = 2; i <= NF; i++) col[$i] = i; hdr = 1; next }
		$1 == "Icmp:" && hdr { print $col[f]; exit }
	' /proc/net/snmp
}
kicmp6() {
	# shellcheck disable=SC2016
	in_ns "$1" awk -v f="$2" '$1 == f { print $2 }' /proc/net/snmp6
}

# routes56 add|del FROM TO: IPv6 /56s number FROM to TO - 1 of
# 2001:db8:4000::/34, via $SNK6 on the router, in one ip -batch. No
# traffic goes to them: they size the router's table.
routes56() {
	awk -v op="$1" -v from="$2" -v to="$3" -v gw="$SNK6" 'BEGIN {
		for (i = from; i < to; i++) {
			p = sprintf("2001:db8:%x:%x00::/56", 16384 + int(i / 256), i % 256)
			if (op == "add")
				print "route add " p " via " gw
			else
				print "route del " p
		}
	}' >"$XFIB_TMP/batch56"
	ip -n "$RTR" -6 -batch "$XFIB_TMP/batch56"
}
