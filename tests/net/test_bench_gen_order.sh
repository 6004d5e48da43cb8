#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The forwarding benchmark's generator (fwdbench gen, tests/bench/gen.bpf.c)
# sends to its N destinations in a shuffled order, the same in every
# round: 4 rounds of 16 destinations captured on the receiving veth are 4
# times one sequence, which holds each destination once and is not in
# address order. (In address order, 256 frames in a row went through one
# tbl24 entry of the router.) An order that is the same in another run
# of the same N keeps the benchmark's repetitions comparable: a second
# run sends the same sequence.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

FWDBENCH=${FWDBENCH:-$XFIB_BUILD/bench/fwdbench}
[ -x "$FWDBENCH" ] || fail "$FWDBENCH not built (make $FWDBENCH)"
cp "$FWDBENCH" "$XFIB_TMP/bin/"
FWDBENCH="$XFIB_TMP/bin/$(basename "$FWDBENCH")"

NS="$XFIB_TAG-gen"
add_ns "$NS"
ip -n "$NS" link add g0 type veth peer name g1 || fail "veth g0 -- g1"
ip -n "$NS" link set g0 up
ip -n "$NS" link set g1 up
# Redirected (XDP_TX) frames reach a veth peer without an XDP program
# only with GRO on.
ip netns exec "$NS" ethtool -K g1 gro on >/dev/null || fail "ethtool -K g1 gro on"

N=16
# send_round FILE: 4 x N frames from the generator, their destinations
# (last octet) as tcpdump saw them on g1, one a line, into FILE.
send_round() {
	local out=$1 pid
	ip netns exec "$NS" timeout 20 tcpdump -l -n -c $((4 * N)) -i g1 udp \
		>"$out.raw" 2>"$out.err" &
	pid=$!
	XFIB_PIDS+=("$pid")
	for _ in $(seq 50); do
		grep -q 'listening on' "$out.err" 2>/dev/null && break
		sleep 0.1
	done
	grep -q 'listening on' "$out.err" || fail "tcpdump did not start: $(cat "$out.err")"
	in_ns "$NS" "$FWDBENCH" gen --ifname g0 --dst-mac 02:00:00:00:00:01 \
		--src-mac 02:00:00:00:00:02 --src 198.18.1.2 --dst-base 198.19.0.0 \
		--ndst "$N" --packets $((4 * N)) >/dev/null || fail "fwdbench gen"
	wait "$pid" || fail "tcpdump saw fewer than $((4 * N)) frames: $(wc -l <"$out.raw")"
	# "IP 198.18.1.2.9 > 198.19.0.13.9: UDP, length 22"
	awk '{ split($5, a, "."); print a[4] }' "$out.raw" >"$out"
}

send_round "$XFIB_TMP/r1"
mapfile -t d <"$XFIB_TMP/r1"
log "destinations (last octet): ${d[*]}"
((${#d[@]} == 4 * N)) || fail "captured ${#d[@]} destinations, want $((4 * N))"
first=("${d[@]:0:N}")
# Every round is the first one again.
for ((i = 0; i < 4 * N; i++)); do
	[ "${d[i]}" = "${first[i % N]}" ] ||
		fail "frame $i went to .${d[i]}, round 1 sent .${first[i % N]} there"
done
# The round holds every destination once.
[ "$(printf '%s\n' "${first[@]}" | sort -n | tr '\n' ' ')" = "$(seq 0 $((N - 1)) | tr '\n' ' ')" ] ||
	fail "one round is not each of the $N destinations once: ${first[*]}"
# Not in address order (nor its reverse).
[ "${first[*]}" != "$(seq 0 $((N - 1)) | xargs)" ] || fail "destinations sent in address order"
[ "${first[*]}" != "$(seq $((N - 1)) -1 0 | xargs)" ] || fail "destinations sent in reverse address order"

# Another run, the same sequence.
send_round "$XFIB_TMP/r2"
cmp -s "$XFIB_TMP/r1" "$XFIB_TMP/r2" || fail "a second run sent another order: $(xargs <"$XFIB_TMP/r2")"

log "PASS: the generator sends its $N destinations in one shuffled order, the same every round and run"
