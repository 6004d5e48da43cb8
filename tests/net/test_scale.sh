#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A full Internet-shaped table (scripts/gen-table.py: 1M IPv4 + 250k IPv6
# prefixes over two gateways on two ports, plus nested prefixes inside the
# test ranges) loaded into the router's kernel while xfibd runs:
#  - xfibd keeps up with the kernel's install (mirror lag reported);
#  - automatic selection runs dir24_8 and poptrie6; dxr and trie6, forced,
#    too;
#  - xfibctl verify --random 1000000: every prefix's edges and a million
#    random addresses per family agree with the kernel's bpf_fib_lookup;
#  - real packets to sampled destinations inside the test ranges leave by
#    the port the kernel's route names, forwarded by XDP;
#  - a restarted xfibd syncs the whole table again (cold start reported).
# XFIB_SCALE_V4 / XFIB_SCALE_V6 set the table size.
# Alone: its 1.25M-route install and verify keep both CPUs busy
# for minutes, which would stretch other tests' latency bounds, and it
# bounds how long xfibd takes to catch up.
# run.sh: alone
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

V4=${XFIB_SCALE_V4:-1000000}
V6=${XFIB_SCALE_V6:-250000}
T4=1000
T6=2000

topo_create
topo_add_sink2
GW4="$SNK4@$R_SNK,$SNK2_4@$R_SNK2"
GW6="$SNK6@$R_SNK,$SNK2_6@$R_SNK2"

# The generated table depends only on its parameters: keep it between runs.
tables="$XFIB_BUILD/tables"
mkdir -p "$tables"
table="$tables/v4-$V4-v6-$V6-t$T4-$T6-${GW4//[@:\/,]/_}-${GW6//[@:\/,]/_}.batch"
if [ ! -s "$table" ]; then
	log "generating $table"
	python3 "$XFIB_TOP/scripts/gen-table.py" --v4 "$V4" --v6 "$V6" \
		--test4 "$T4" --test6 "$T6" --gw4 "$GW4" --gw6 "$GW6" >"$table.tmp"
	mv "$table.tmp" "$table"
fi
total=$(wc -l <"$table")

xfibd_start
attach_all
resolve_neighbours
base4=$(rctl status -j | jq '.ipv4.routes')
base6=$(rctl status -j | jq '.ipv6.routes')

log "installing $total routes in the router's kernel"
t0=$(now_ms)
ip -n "$RTR" -batch "$table"
t1=$(now_ms)
want4=$((base4 + V4 + T4))
want6=$((base6 + V6 + T6))
while :; do
	st=$(rctl status -j)
	[ "$(jq '.ipv4.routes' <<<"$st")" -ge "$want4" ] &&
		[ "$(jq '.ipv6.routes' <<<"$st")" -ge "$want6" ] && break
	(($(now_ms) - t1 < 60000)) || fail "xfibd not caught up 60 s after the install: $(jq -c '{v4: .ipv4.routes, v6: .ipv6.routes}' <<<"$st"), want $want4/$want6"
	sleep 0.05
done
t2=$(now_ms)
log "kernel install: $((t1 - t0)) ms ($((total * 1000 / (t1 - t0 + 1))) routes/s); xfibd caught up $((t2 - t1)) ms after the install ended"

# 1.25M prefix changes: the selection has evaluated long before now.
deadline=$((SECONDS + 30))
until st=$(rctl status -j) && [ "$(jq -r '.ipv4.algorithm' <<<"$st")" = dir24_8 ] &&
	[ "$(jq -r '.ipv6.algorithm' <<<"$st")" = poptrie6 ]; do
	((SECONDS < deadline)) || fail "full table runs $(jq -r '.ipv4.algorithm' <<<"$st")/$(jq -r '.ipv6.algorithm' <<<"$st"), not dir24_8/poptrie6"
	sleep 0.5
done
log "status: $(jq -c '{v4: .ipv4 | {algorithm, routes, memory, bytes_per_prefix, ranges, capacity, build_us}, v6: .ipv6 | {algorithm, routes, memory, bytes_per_prefix, ranges, capacity, build_us}}' <<<"$st")"

out=$(rctl verify --random 1000000 2>&1) || fail "verify found mismatches or failed: $(tail -n 25 <<<"$out")"
log "verify: $(tr '\n' ' ' <<<"$out")"
grep -q "ipv4: dir24_8.* 0 mismatched" <<<"$out" || fail "verify did not check ipv4 on dir24_8: $out"
grep -q "ipv6: poptrie6.* 0 mismatched" <<<"$out" || fail "verify did not check ipv6 on poptrie6: $out"

# The other large-table algorithm of each family over the same table, forced.
rctl algo ipv4 dxr >/dev/null || fail "forcing dxr on the full table failed"
rctl algo ipv6 trie6 >/dev/null || fail "forcing trie6 on the full table failed"
st=$(rctl status -j)
[ "$(jq -r '.ipv4.algorithm' <<<"$st")" = dxr ] || fail "full table runs $(jq -r '.ipv4.algorithm' <<<"$st") after forcing dxr"
[ "$(jq -r '.ipv6.algorithm' <<<"$st")" = trie6 ] || fail "full table runs $(jq -r '.ipv6.algorithm' <<<"$st") after forcing trie6"
log "forced: $(jq -c '{v4: .ipv4 | {algorithm, routes, memory, bytes_per_prefix, ranges, capacity, build_us}, v6: .ipv6 | {algorithm, routes, memory, bytes_per_prefix, ranges, capacity, build_us}}' <<<"$st")"
out=$(rctl verify --random 1000000 2>&1) || fail "verify on dxr/trie6 found mismatches or failed: $(tail -n 25 <<<"$out")"
log "verify (dxr/trie6): $(tr '\n' ' ' <<<"$out")"
grep -q "ipv4: dxr.* 0 mismatched" <<<"$out" || fail "verify did not check ipv4 on dxr: $out"
grep -q "ipv6: trie6.* 0 mismatched" <<<"$out" || fail "verify did not check ipv6 on trie6: $out"
rctl algo ipv4 auto >/dev/null || fail "back to automatic selection failed"
rctl algo ipv6 auto >/dev/null || fail "back to automatic selection failed"

# Real packets: destinations inside the generated test-range prefixes go
# out of the port the kernel's route names. Each sink captures the echo
# requests that reach it (it does not answer: they are counted on
# arrival) until it has as many as the kernel's routes send it; then
# every destination must have all its frames on its own sink, and the
# router's kernel must have forwarded none of them.
sample=$(grep -E ' (198\.19\.|2001:db8:[89a-f])' "$table" | shuf -n 60 --random-source=<(yes) | awk '{print $3}')
# One address in each sampled prefix, all picked by one python3.
# shellcheck disable=SC2086 # one prefix per word
picks=$(python3 -c 'import ipaddress,sys,random
for p in sys.argv[1:]:
    n = ipaddress.ip_network(p)
    print(p, n[random.Random(n.num_addresses).randrange(n.num_addresses)])' $sample)
# The kernel's egress for each, by one ip process.
devs=$(awk '{print "route get", $2}' <<<"$picks" | ip -n "$RTR" -j -batch - | jq -r '.[0].dev')
declare -A WANT=([$R_SNK]=0 [$R_SNK2]=0)
while read -r dev; do
	[ -n "${WANT[$dev]+x}" ] || fail "a sampled destination's kernel route leaves by $dev"
	WANT[$dev]=$((WANT[$dev] + 3))
done <<<"$devs"
# capture_sink NS PORT: NS's echo requests, until WANT[PORT] of them.
capture_sink() {
	local f="$XFIB_TMP/sample-$2.txt"
	ip netns exec "$1" timeout 60 tcpdump -l -n -c "${WANT[$2]}" -i "$SNK_IF" \
		'icmp[icmptype] == icmp-echo or (icmp6 and ip6[40] == 128)' >"$f" 2>"$f.err" &
	XFIB_PIDS+=("$!")
	CAPS+=("$!")
	wait_until 5 grep -q 'listening on' "$f.err" || fail "tcpdump did not start in $1"
}
CAPS=()
capture_sink "$SNK" "$R_SNK"
capture_sink "$SNK2" "$R_SNK2"
x0=$(($(counter forwarded_v4) + $(counter forwarded_v6)))
k0=$(($(kfwd4 "$RTR") + $(kfwd6 "$RTR")))
while read -r _ addr; do
	fam=4
	[[ $addr == *:* ]] && fam=6
	nping "$GEN" "-$fam" -q -c 3 -i 0.01 -W 0.01 "$addr" >/dev/null 2>&1 || true
done <<<"$picks"
for pid in "${CAPS[@]}"; do
	wait "$pid" || fail "the sinks did not get the $((WANT[$R_SNK] + WANT[$R_SNK2])) frames the kernel's routes send them: $(cat "$XFIB_TMP"/sample-*.txt | wc -l) captured"
done
x1=$(($(counter forwarded_v4) + $(counter forwarded_v6)))
k1=$(($(kfwd4 "$RTR") + $(kfwd6 "$RTR")))
checked=0
while read -r pfx addr <&3 && read -r dev <&4; do
	n=$(grep -c -F " > $addr: ICMP" "$XFIB_TMP/sample-$dev.txt" || true)
	((n == 3)) || fail "$addr ($pfx): $n of 3 frames reached the sink the kernel's route names ($dev)"
	checked=$((checked + 1))
done 3<<<"$picks" 4<<<"$devs"
((k1 == k0)) || fail "the router's kernel forwarded $((k1 - k0)) of the sampled frames"
((x1 - x0 >= 180)) || fail "XDP forwarded $((x1 - x0)) of the 180 sampled frames"
log "$checked sampled destinations left by the kernel's egress, forwarded by XDP ($((x1 - x0)) frames)"

# Cold start: a new xfibd dumps and builds the whole table.
kill "$XFIBD_PID"
wait "$XFIBD_PID" 2>/dev/null || true
t0=$(now_ms)
XFIBD_SYNC_TIMEOUT=120 xfibd_start
log "cold start (dump, build, publish): $(($(now_ms) - t0)) ms; $(grep 'sync (start)' "$XFIBD_LOG" | tail -n 1)"
out=$(rctl verify 2>&1) || fail "verify after the restart: $(tail -n 25 <<<"$out")"
log "PASS: full table mirrored, verified and forwarded"
