# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# Helpers for the netfilter tests (tests/net/test_nf_*.sh), on top of
# tests/lib/netns.sh: each family's netfilter mode from xfibctl status,
# the hosts' TCP, conntrack entries, and the suite a stateful firewall
# (nftables or legacy iptables) must pass with xfib attached.

# nf_tools TOOL...: skips the test unless every tool is installed.
nf_tools() {
	local t
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 || skip "missing tool: $t (scripts/install-deps.sh)"
	done
}

# nf_mode FAMILY: the router's netfilter mode for ipv4 or ipv6 (forward,
# gate, pass).
nf_mode() { rctl status -j | jq -r ".netfilter.ipv$1.mode"; }

# wait_nf_mode FAMILY MODE [TIMEOUT_S]: xfibd publishes MODE for FAMILY
# (legacy iptables are read every second: allow a few).
wait_nf_mode() {
	local deadline=$((SECONDS + ${3:-5}))
	until [ "$(nf_mode "$1")" = "$2" ]; do
		((SECONDS < deadline)) ||
			fail "netfilter ipv$1: mode $(nf_mode "$1"), expected $2: $(rctl status -j | jq -c .netfilter)"
		sleep 0.1
	done
	log "netfilter ipv$1: $2"
}

# ct_entries NS ARGS...: conntrack -L of NS with ARGS, one entry a line.
ct_entries() {
	local ns=$1
	shift
	ip netns exec "$ns" conntrack -L "$@" 2>/dev/null || true
}

# ct_id NS ARGS...: the ids of the entries conntrack -L ARGS lists.
ct_id() {
	local ns=$1
	shift
	ct_entries "$ns" "$@" -o id | sed -n 's/.*id=\([0-9]*\).*/\1/p' | sort | tr '\n' ' '
}

# share WHAT X K: logs the fast-path share of X packets forwarded by xfib
# and K by the kernel; sets SHARE to the percentage (integer).
share() {
	local what=$1 x=$2 k=$3 pm
	pm=$((x + k > 0 ? 1000 * x / (x + k) : 0))
	SHARE=$((pm / 10))
	log "fast-path share, $what: xfib $x, kernel $k packets: $((pm / 10)).$((pm % 10))% in XDP"
	echo "share: $what: xfib $x, kernel $k: $((pm / 10)).$((pm % 10))% in XDP" >>"$XFIB_TMP/shares"
}

# ---- the stateful firewall suite ------------------------------------------------
# The router's ruleset, installed by the test: forward policy drop; invalid
# dropped (and counted: the test defines nf_invalid_drops); established and
# related accepted; echo requests and TCP port 5201 accepted; masquerade
# out of r-sink2. Topology 0 with sink2; xfibd running, ports attached.

# nf_serve NS CMD...: CMD in NS in the background (killed at exit); sets
# SERVE_PID. Waits until something listens on port NF_PORT if set.
nf_serve() {
	local ns=$1 deadline=$((SECONDS + 5))
	shift
	ip netns exec "$ns" "$@" &
	SERVE_PID=$!
	XFIB_PIDS+=("$SERVE_PID")
	[ -n "${NF_PORT:-}" ] || return 0
	until ip netns exec "$ns" ss -Hltn "sport = :$NF_PORT" | grep -q .; do
		((SECONDS < deadline)) || fail "nothing listens on port $NF_PORT in $ns"
		sleep 0.05
	done
}

# nf_pings FAMILY DST: a ping stream (one echo flow) is XDP-forwarded
# after its first packets: xfibd learns the flow from the first echo and
# reply it is told about, or, should it ask conntrack before the kernel
# has seen the reply, from the next ones the dataplane reports 100 ms
# later (XFIB_CT_LEARN_RETRY_NS). How many exchanges that takes depends on
# the machine's speed (one here; up to a hundred under an emulated CPU on
# a busy machine), so what is required is the order: XDP takes the flow
# while it runs, and from then on the kernel forwards none of it. The
# share is logged. COUNTER (default forwarded_vFAMILY) is the counter that
# moves for them in XDP (forwarded_nat_vFAMILY through NAT).
nf_pings() {
	local fam=$1 dst=$2 c=${3:-forwarded_v$1} kf=kfwd$1 x0 k0 k1 dx dk late
	x0=$(counter "$c")
	k0=$("$kf" "$RTR")
	stream_start "nfping$fam" "$fam" "$dst" -c 200 -i 0.01
	# Four exchanges in XDP: both directions learned.
	wait_until 10 counter_reached "$c" $((x0 + 8)) ||
		fail "IPv$fam pings: never XDP-forwarded ($(stats_line))"
	k1=$("$kf" "$RTR")
	stream_answered "nfping$fam" 200 "IPv$fam pings through the stateful ruleset"
	dx=$(($(counter "$c") - x0))
	dk=$(($("$kf" "$RTR") - k0))
	late=$(($("$kf" "$RTR") - k1))
	share "ping stream IPv$fam, 200 echoes 10 ms apart" "$dx" "$dk"
	((late == 0)) ||
		fail "IPv$fam pings: xfib +$dx, kernel +$dk, +$late of them after XDP took the flow ($(stats_line))"
}

# counter_reached NAME N: xfib's counter NAME is at least N.
counter_reached() { (($(counter "$1") >= $2)); }

# nf_tcp_transfer FAMILY DST BYTES: a TCP transfer of BYTES to port 5201
# arrives whole, mostly XDP-forwarded, without an invalid packet, and its
# connection closes (the router's entry leaves ESTABLISHED).
nf_tcp_transfer() {
	local fam=$1 dst=$2 bytes=$3 c=forwarded_v$1 kf=kfwd$1 tcp=TCP x0 k0 l0 dx dk dl inv0
	local got="$XFIB_TMP/tcp-bytes-$1" t0 deadline
	[ "$fam" = 4 ] || { tcp=TCP6; dst="[$dst]"; }
	inv0=$(nf_invalid_drops)
	rm -f "$got"
	NF_PORT=5201 nf_serve "$SNK" bash -c \
		"socat -u $tcp-LISTEN:5201,reuseaddr STDOUT | wc -c >$got"
	x0=$(counter "$c")
	k0=$("$kf" "$RTR")
	l0=$(counter pass_ct_learn)
	t0=$(now_ms)
	head -c "$bytes" /dev/zero | timeout 300 ip netns exec "$GEN" socat -u - "$tcp:$dst:5201" ||
		fail "IPv$fam TCP transfer to $dst failed ($(stats_line))"
	nf_receiver_ends "IPv$fam TCP"
	dx=$(($(counter "$c") - x0))
	dk=$(($("$kf" "$RTR") - k0))
	[ "$(cat "$got")" = "$bytes" ] || fail "IPv$fam TCP: $(cat "$got") of $bytes bytes arrived"
	dl=$(($(counter pass_ct_learn) - l0))
	share "TCP transfer IPv$fam, $bytes bytes in $(($(now_ms) - t0)) ms" "$dx" "$dk"
	# The kernel forwards the handshake, the close, and the data until
	# xfibd has made the entry liberal (pass_ct_learn): a wakeup of the
	# daemon, tens of ms, whose packets depend on the rate and the load
	# (about 2% of them here on an idle machine, 2.6% with two test runs
	# beside). Beyond those, a few dozen at most.
	((dk - dl <= 40 && SHARE >= 90)) ||
		fail "IPv$fam TCP: xfib +$dx, kernel +$dk ($dl while learning): not kept in XDP ($(stats_line))"
	[ "$(nf_invalid_drops)" = "$inv0" ] ||
		fail "IPv$fam TCP: the router dropped $(($(nf_invalid_drops) - inv0)) invalid packets"
	deadline=$((SECONDS + 5))
	while ct_entries "$RTR" -p tcp --dport 5201 -f "ipv$fam" | grep -q ESTABLISHED; do
		((SECONDS < deadline)) ||
			fail "IPv$fam TCP: entry still established: $(ct_entries "$RTR" -p tcp --dport 5201)"
		sleep 0.1
	done
	log "IPv$fam TCP closed: $(ct_entries "$RTR" -p tcp --dport 5201 -f "ipv$fam" | awk '{ print $4 }' | tr '\n' ' ')"
}

# nf_receiver_ends WHAT: the receiver (SERVE_PID) ends within 30 s of
# the sender's end, when the sender's FIN arrives: a FIN the router drops
# shows as a receiver still running. Timed from the sender's end, not the
# transfer's start: under an emulated CPU a transfer takes minutes.
nf_receiver_ends() {
	local deadline=$((SECONDS + 30))
	while kill -0 "$SERVE_PID" 2>/dev/null; do
		((SECONDS < deadline)) ||
			fail "$1: no FIN at the receiver within 30 s of the sender's end ($(nf_invalid_drops) invalid packets dropped)"
		sleep 0.1
	done
	wait "$SERVE_PID" || fail "$1: the receiver exited $?"
}

# nf_port_closed FAMILY DST: TCP to port 5202, which the rules do not
# allow, gets nothing through, though a listener there accepts its own
# host's connections.
nf_port_closed() {
	local fam=$1 dst=$2 hits="$XFIB_TMP/hits-5202-$1" tcp=TCP
	[ "$fam" = 4 ] || { tcp=TCP6; dst="[$dst]"; }
	rm -f "$hits"
	NF_PORT=5202 nf_serve "$SNK" socat "$tcp-LISTEN:5202,fork,reuseaddr" \
		"SYSTEM:echo hit >>$hits"
	ip netns exec "$SNK" socat -u OPEN:/dev/null "$tcp:$dst:5202" ||
		fail "the listener on port 5202 does not take local connections"
	sleep 0.2
	[ -s "$hits" ] || fail "the listener on port 5202 did not record a local connection"
	rm -f "$hits"
	if timeout 5 ip netns exec "$GEN" socat -u OPEN:/dev/null \
		"$tcp:$dst:5202,connect-timeout=2" 2>/dev/null; then
		fail "IPv$fam TCP to port 5202 connected through the router"
	fi
	[ ! -s "$hits" ] || fail "IPv$fam TCP to port 5202 reached the listener"
	kill "$SERVE_PID"
	wait "$SERVE_PID" 2>/dev/null || true
	log "IPv$fam TCP to port 5202: nothing through"
}

# nf_masquerade FAMILY: a flow to sink2 is masqueraded (sink2 sees the
# router's address) and, after its first round trips, forwarded in XDP
# with conntrack's translation both ways: gen's segments out with the
# router's address, sink2's 5 MB back to gen, counted as NAT-forwarded.
# The kernel forwards the handshake, the close and what comes before
# xfibd made the entry liberal (pass_ct_learn), as in nf_tcp_transfer.
nf_masquerade() {
	local fam=$1 dst=$SNK2_4 me=$R_SNK2_4 tcp=TCP c=forwarded_nat_v$1 kf=kfwd$1
	local x0 k0 l0 p0 dx dk dl peer got="$XFIB_TMP/masq-$1"
	[ "$fam" = 4 ] || { dst="[$SNK2_6]"; me=$R_SNK2_6; tcp=TCP6; }
	NF_PORT=5201 nf_serve "$SNK2" socat "$tcp-LISTEN:5201,reuseaddr" \
		"SYSTEM:echo \$SOCAT_PEERADDR; head -c 5000000 /dev/zero"
	x0=$(counter "$c")
	k0=$("$kf" "$RTR")
	l0=$(counter pass_ct_learn)
	p0=$(counter forwarded_v"$fam")
	timeout 300 ip netns exec "$GEN" socat -u "$tcp:$dst:5201" "OPEN:$got,creat,trunc" ||
		fail "IPv$fam masqueraded TCP to $dst failed"
	wait "$SERVE_PID" 2>/dev/null || true
	dx=$(($(counter "$c") - x0))
	dk=$(($("$kf" "$RTR") - k0))
	dl=$(($(counter pass_ct_learn) - l0))
	# socat writes IPv6 addresses in full, in brackets.
	peer=$(python3 -c 'import ipaddress, sys; print(ipaddress.ip_address(sys.argv[1].strip("[]")))' \
		"$(head -n 1 "$got")" 2>/dev/null) || peer="'$(head -n 1 "$got")'"
	[ "$peer" = "$me" ] ||
		fail "IPv$fam masquerade: sink2 saw the connection from '$peer', not $me"
	(($(stat -c %s "$got") > 5000000)) || fail "IPv$fam masquerade: $(stat -c %s "$got") bytes arrived"
	share "masqueraded TCP IPv$fam, 5 MB" "$dx" "$dk"
	((dk - dl <= 40 && SHARE >= 90)) ||
		fail "IPv$fam masqueraded flow: xfib +$dx with NAT, kernel +$dk ($dl while learning): not kept in XDP ($(stats_line))"
	(($(counter forwarded_v"$fam") == p0)) ||
		fail "IPv$fam masqueraded flow: $(($(counter forwarded_v"$fam") - p0)) packets forwarded in XDP without the NAT"
	log "IPv$fam masquerade: sink2 saw $peer; $dx packets NAT-forwarded in XDP"
}

# nf_keepalive: with conntrack timeouts of 3 s, a 6 s ping stream and a
# 6 s trickle of TCP keep their one entry each (the same id from start to
# end): the fast path refreshes what the kernel no longer sees.
nf_keepalive() {
	local id0 id1 n out
	ip netns exec "$RTR" sysctl -qw net.netfilter.nf_conntrack_icmp_timeout=3 \
		net.netfilter.nf_conntrack_tcp_timeout_established=3
	# Earlier flows' entries out of the way: one entry per flow below.
	ip netns exec "$RTR" conntrack -D -p icmp >/dev/null 2>&1 || true
	ip netns exec "$RTR" conntrack -D -p tcp >/dev/null 2>&1 || true
	sleep 1.2 # xfibd reads the sysctls every second
	ip netns exec "$GEN" ping -q -c 60 -i 0.1 -W 1 "$SNK4" >"$XFIB_TMP/ka-ping" 2>&1 &
	n=$!
	XFIB_PIDS+=("$n")
	sleep 1
	id0=$(ct_id "$RTR" -p icmp -s "$GEN4")
	wait "$n" || fail "keepalive pings: $(tail -n 2 "$XFIB_TMP/ka-ping")"
	id1=$(ct_id "$RTR" -p icmp -s "$GEN4")
	if [ -z "$id0" ] || [ "$id0" != "$id1" ]; then
		fail "the ping stream's conntrack entry changed over 6 s: '$id0' -> '$id1'"
	fi
	grep -q ' 0% packet loss' "$XFIB_TMP/ka-ping" || fail "keepalive pings: $(tail -n 2 "$XFIB_TMP/ka-ping")"
	NF_PORT=5201 nf_serve "$SNK" socat -u TCP-LISTEN:5201,reuseaddr "OPEN:$XFIB_TMP/ka-tcp,creat,trunc"
	out="$XFIB_TMP/ka-client"
	for _ in $(seq 60); do head -c 1000 /dev/zero; sleep 0.1; done |
		ip netns exec "$GEN" socat -u - "TCP:$SNK4:5201" 2>"$out" &
	n=$!
	XFIB_PIDS+=("$n")
	sleep 1
	id0=$(ct_id "$RTR" -p tcp --dport 5201 --state ESTABLISHED)
	wait "$n" || fail "keepalive TCP client: $(cat "$out")"
	wait "$SERVE_PID" || fail "keepalive TCP server"
	[ "$(stat -c %s "$XFIB_TMP/ka-tcp")" = 60000 ] ||
		fail "keepalive TCP: $(stat -c %s "$XFIB_TMP/ka-tcp") of 60000 bytes arrived"
	id1=$(ct_id "$RTR" -p tcp --dport 5201)
	if [ -z "$id0" ] || [ "$id0" != "$id1" ]; then
		fail "the TCP trickle's conntrack entry changed over 6 s: '$id0' -> '$id1'"
	fi
	ip netns exec "$RTR" sysctl -qw net.netfilter.nf_conntrack_icmp_timeout=30 \
		net.netfilter.nf_conntrack_tcp_timeout_established=432000
	log "keepalive: ping and TCP entries lived through 6 s with 3 s timeouts"
}

# nf_rule_stops ADD DEL: a rule ADD (a command) that drops gen's IPv4
# packets stops an established, fast-pathed ping flow: the family goes to
# the kernel, which drops them. DEL removes it, and the gate is back.
nf_rule_stops() {
	local add=$1 del=$2 out
	ping_all "$GEN" 4 "$SNK4" 20
	eval "$add"
	wait_nf_mode 4 pass
	out=$(nping "$GEN" -4 -q -c 5 -i 0.1 "$SNK4" 2>&1) || true
	grep -q ' 0 received' <<<"$out" || fail "pings crossed a rule that drops them: $out"
	eval "$del"
	wait_nf_mode 4 gate
	ping_all "$GEN" 4 "$SNK4" 5
	log "a drop rule added under an established flow stops it"
}

# nf_stateful_suite ADD DEL: all of the above.
nf_stateful_suite() {
	wait_nf_mode 4 gate
	wait_nf_mode 6 gate
	nf_pings 4 "$SNK4"
	nf_pings 6 "$SNK6"
	nf_tcp_transfer 4 "$SNK4" 100000000
	nf_tcp_transfer 6 "$SNK6" 100000000
	nf_port_closed 4 "$SNK4"
	nf_port_closed 6 "$SNK6"
	nf_masquerade 4
	nf_masquerade 6
	nf_keepalive
	nf_rule_stops "$1" "$2"
	cat "$XFIB_TMP/shares"
}
