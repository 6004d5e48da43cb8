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
# out of the port the kernel's route names (the sinks do not answer: the
# frames are counted on arrival).
rx() { ip -n "$1" -j -s link show dev "$2" | jq '.[0].stats64.rx.packets'; }
sample=$(grep -E ' (198\.19\.|2001:db8:[89a-f])' "$table" | shuf -n 60 --random-source=<(yes) | awk '{print $3}')
# One address in each sampled prefix, all picked by one python3.
# shellcheck disable=SC2086 # one prefix per word
picks=$(python3 -c 'import ipaddress,sys,random
for p in sys.argv[1:]:
    n = ipaddress.ip_network(p)
    print(p, n[random.Random(n.num_addresses).randrange(n.num_addresses)])' $sample)
checked=0
while read -r pfx addr <&3; do
	dev=$(ip -n "$RTR" -j route get "$addr" | jq -r '.[0].dev')
	case $dev in
	"$R_SNK") ns=$SNK ;;
	"$R_SNK2") ns=$SNK2 ;;
	*) fail "kernel route for $addr leaves by $dev" ;;
	esac
	fam=4
	[[ $addr == *:* ]] && fam=6
	r0=$(rx "$ns" "$SNK_IF")
	c=forwarded_v$fam
	x0=$(counter "$c")
	nping "$GEN" "-$fam" -q -c 3 -i 0.01 -W 0.2 "$addr" >/dev/null 2>&1 || true
	r1=$(rx "$ns" "$SNK_IF")
	x1=$(counter "$c")
	((r1 - r0 >= 3)) || fail "$addr ($pfx): $((r1 - r0)) of 3 frames reached $ns via $dev"
	((x1 - x0 >= 3)) || fail "$addr: not forwarded by XDP (+$((x1 - x0)))"
	checked=$((checked + 1))
done 3<<<"$picks"
log "$checked sampled destinations left by the kernel's egress, forwarded by XDP"

# Cold start: a new xfibd dumps and builds the whole table.
kill "$XFIBD_PID"
wait "$XFIBD_PID" 2>/dev/null || true
t0=$(now_ms)
XFIBD_SYNC_TIMEOUT=120 xfibd_start
log "cold start (dump, build, publish): $(($(now_ms) - t0)) ms; $(grep 'sync (start)' "$XFIBD_LOG" | tail -n 1)"
out=$(rctl verify 2>&1) || fail "verify after the restart: $(tail -n 25 <<<"$out")"
log "PASS: full table mirrored, verified and forwarded"
