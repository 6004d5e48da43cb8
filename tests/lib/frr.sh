# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# Routing daemons as route sources, for tests and benchmarks that source
# tests/lib/netns.sh first: FRR (Debian's frr: zebra, staticd, bgpd) and
# BIRD 2, each instance in a namespace, with its configuration, sockets
# and log in the test's scratch directory, stopped on every exit path.
#
# FRR daemons of namespace NS run in the foreground under
# `ip netns exec NS`, with -N NS (their own path space: vty sockets and
# pid files in /var/run/frr/NS, a folder owned by the frr user, removed at
# exit) and no TCP vty. zebra runs with -r: it leaves its routes when it
# stops, so stopping it is immediate (the namespace goes anyway).

FRR_DIR=/usr/lib/frr
FRR_RUN=/var/run/frr

# frr_available: the FRR daemons and vtysh are installed (or can be).
frr_available() {
	if [ ! -x "$FRR_DIR/zebra" ] || ! command -v vtysh >/dev/null; then
		"$XFIB_TOP/scripts/install-deps.sh" >/dev/null 2>&1 || true
	fi
	[ -x "$FRR_DIR/zebra" ] && [ -x "$FRR_DIR/bgpd" ] &&
		[ -x "$FRR_DIR/staticd" ] && command -v vtysh >/dev/null
}

# bird_available: bird and birdc are installed (or can be).
bird_available() {
	if ! command -v bird >/dev/null || ! command -v birdc >/dev/null; then
		"$XFIB_TOP/scripts/install-deps.sh" >/dev/null 2>&1 || true
	fi
	command -v bird >/dev/null && command -v birdc >/dev/null
}

# frr_start NS DAEMON CONF [ARGS...]: starts FRR's DAEMON (zebra, staticd,
# bgpd) in NS with configuration CONF, logging to
# $XFIB_TMP/frr-NS-DAEMON.log, and waits until its vty answers. Start
# zebra first: the others connect to it. Sets FRR_PID.
# shellcheck disable=SC2034 # FRR_PID is for the callers
frr_start() {
	local ns=$1 d=$2 conf=$3 run=$FRR_RUN/$1 logf deadline pid extra=()
	shift 3
	logf="$XFIB_TMP/frr-${ns##*-}-$d.log"
	if [ ! -d "$run" ]; then
		mkdir -p "$run" || fail "mkdir $run"
		XFIB_EXIT_HOOKS+=("rm -rf '$run'")
		chown frr:frr "$run" || fail "chown frr $run"
	fi
	# The daemons drop to the frr user: the configuration must be readable.
	chmod 0644 "$conf"
	[ "$d" != zebra ] || extra=(-r -s 90000000)
	ip netns exec "$ns" "$FRR_DIR/$d" -N "$ns" -f "$conf" -i "$run/$d.pid" \
		-P 0 --log stdout "${extra[@]}" "$@" >>"$logf" 2>&1 &
	pid=$!
	XFIB_PIDS+=("$pid")
	deadline=$((SECONDS + 20))
	until [ -S "$run/$d.vty" ] && vty "$ns" "show version" >/dev/null 2>&1; do
		kill -0 "$pid" 2>/dev/null || fail "$d in $ns exited: $(tail -n 5 "$logf")"
		((SECONDS < deadline)) || fail "$d in $ns: no vty after 20 s"
		sleep 0.1
	done
	FRR_PID=$pid
}

# vty NS ARGS...: vtysh of the FRR instance of NS (ARGS as for vtysh, e.g.
# -c "show ip route"); the vty sockets of that instance only.
vty() {
	local ns=$1
	shift
	vtysh --vty_socket "$FRR_RUN/$ns" "$@"
}

# bird_start NS CONF SOCK: BIRD in the foreground in NS, in the
# background, logging to CONF's name with .log; waits for its socket.
# Sets BIRD_PID.
bird_start() {
	local deadline=$((SECONDS + 20))
	ip netns exec "$1" bird -f -c "$2" -s "$3" >>"${2%.conf}.log" 2>&1 &
	BIRD_PID=$!
	XFIB_PIDS+=("$BIRD_PID")
	until ip netns exec "$1" birdc -s "$3" show status >/dev/null 2>&1; do
		kill -0 "$BIRD_PID" 2>/dev/null || fail "bird in $1 exited: $(tail -n 5 "${2%.conf}.log")"
		((SECONDS < deadline)) || fail "bird in $1: no control socket after 20 s"
		sleep 0.1
	done
}

# bgp_peer_conf ROUTER_ID LOCAL_AS PEER4 PEER6 PEER_AS: BIRD configuration
# of a BGP speaker that announces its static protocols (declared after
# it) to PEER4 (IPv4 session) and PEER6 (IPv6 session) with itself as the
# next hop, learns nothing and installs nothing in its kernel.
bgp_peer_conf() {
	cat <<EOF
router id $1;
protocol device { scan time 5; }
template bgp peer {
	local as $2;
	connect delay time 1;
	connect retry time 1;
}
protocol bgp down4 from peer {
	neighbor $3 as $5;
	ipv4 { import none; export all; next hop self; };
}
protocol bgp down6 from peer {
	neighbor $4 as $5;
	ipv6 { import none; export all; next hop self; };
}
EOF
}
