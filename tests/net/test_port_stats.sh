#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Per-port counters: pings through the router move each port's counters by
# exactly what crossed it (echoes in on r-gen and out of r-sink, replies
# the other way), a TTL-1 echo counts as pass_ttl on the port it arrived
# on only; stats --ports in text, JSON and -i, the Prometheus series with
# a port label and status agree with one another.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

N=20
topo_up

# pstat PORT JQ: a value of PORT's entry in stats --ports -j.
pstat() {
	rctl stats --ports -j | jqe -r --arg p "$1" ".[] | select(.ifname == \$p) | $2" ||
		fail "stats --ports -j: no $2 for $1"
}

# ---- forwarded traffic, both ways -------------------------------------------

for fam in 4 6; do
	dst=$SNK4 len=98
	[ "$fam" = 4 ] || { dst=$SNK6; len=118; }
	g0=$(pstat "$R_GEN" ".received_as.forwarded_v$fam.packets")
	gt0=$(pstat "$R_GEN" ".tx.bytes")
	s0=$(pstat "$R_SNK" ".received_as.forwarded_v$fam.packets")
	st0=$(pstat "$R_SNK" ".tx.packets")
	ping_all "$GEN" "$fam" "$dst" "$N"
	dg=$(($(pstat "$R_GEN" ".received_as.forwarded_v$fam.packets") - g0))
	dgt=$(($(pstat "$R_GEN" ".tx.bytes") - gt0))
	ds=$(($(pstat "$R_SNK" ".received_as.forwarded_v$fam.packets") - s0))
	dst_=$(($(pstat "$R_SNK" ".tx.packets") - st0))
	log "IPv$fam: $R_GEN forwarded in +$dg, sent +$dgt bytes; $R_SNK forwarded in +$ds, sent +$dst_"
	[ "$dg" -eq "$N" ] || fail "$R_GEN forwarded_v$fam in: +$dg, expected $N echoes"
	[ "$ds" -eq "$N" ] || fail "$R_SNK forwarded_v$fam in: +$ds, expected $N replies"
	[ "$dst_" -eq "$N" ] || fail "$R_SNK sent +$dst_, expected $N echoes"
	[ "$dgt" -eq $((N * len)) ] || fail "$R_GEN sent +$dgt bytes, expected $((N * len)) (replies)"
done

# ---- passed to the kernel, on the port it came in by -------------------------

g0=$(pstat "$R_GEN" ".received_as.pass_ttl.packets")
s0=$(pstat "$R_SNK" ".received_as.pass_ttl.packets")
nping "$GEN" -4 -q -c 3 -i 0.05 -t 1 "$SNK4" >/dev/null 2>&1 || true
dg=$(($(pstat "$R_GEN" ".received_as.pass_ttl.packets") - g0))
ds=$(($(pstat "$R_SNK" ".received_as.pass_ttl.packets") - s0))
[ "$dg" -eq 3 ] || fail "$R_GEN pass_ttl: +$dg, expected 3 (TTL-1 echoes)"
[ "$ds" -eq 0 ] || fail "$R_SNK pass_ttl: +$ds, expected 0"

# Totals are the sum of the reasons; received = forwarded + to kernel + dropped.
rctl stats --ports -j | jqe 'length == 2 and all(.[];
	.counted and
	.rx.packets == ([.received_as[].packets] | add) and
	.rx.bytes == ([.received_as[].bytes] | add) and
	.rx.packets == .forwarded.packets + .to_kernel.packets + .dropped.packets and
	.forwarded.packets == .received_as.forwarded_v4.packets + .received_as.forwarded_v6.packets)' \
	>/dev/null || fail "stats --ports -j: totals do not add up: $(rctl stats --ports -j)"

# ---- the other views agree ----------------------------------------------------

# The counters are live: the hosts' own IPv6 traffic (neighbour and
# router solicitations, MLD) may arrive between two commands. So every
# view is read between two readings of stats --ports -j, and each of its
# values must lie between the two (equal when nothing arrived).
J1=$(rctl stats --ports -j)
TXT=$(rctl stats --ports)
P=$(rctl stats --prometheus)
S=$(rctl status -j)
ST=$(rctl status)
J2=$(rctl stats --ports -j)
# pval J PORT JQ: a value of PORT's entry in the stats --ports -j output J.
pval() { jq -r --arg p "$2" ".[] | select(.ifname == \$p) | $3" <<<"$1"; }
# within WHAT V LO HI: LO <= V <= HI.
within() {
	if ! [[ $2 =~ ^[0-9]+$ ]] || (($2 < $3 || $2 > $4)); then
		fail "$1: '$2', not between the readings before and after ($3..$4)"
	fi
}
for p in "$R_GEN" "$R_SNK"; do
	rx1=$(pval "$J1" "$p" .rx.packets) rx2=$(pval "$J2" "$p" .rx.packets)
	tx1=$(pval "$J1" "$p" .tx.packets) tx2=$(pval "$J2" "$p" .tx.packets)
	fw1=$(pval "$J1" "$p" .received_as.forwarded_v4.packets)
	fw2=$(pval "$J2" "$p" .received_as.forwarded_v4.packets)
	row=$(awk -v p="$p" '$1 == p && NF == 8 { print $2, $4 }' <<<"$TXT")
	[ -n "$row" ] || fail "stats --ports: no row for $p: $TXT"
	within "stats --ports, $p rx" "${row% *}" "$rx1" "$rx2"
	within "stats --ports, $p tx" "${row#* }" "$tx1" "$tx2"
	within "prometheus, $p forwarded_v4" "$(sed -n "s/^xfib_port_received_packets_total{port=\"$p\",reason=\"forwarded_v4\"} //p" <<<"$P")" "$fw1" "$fw2"
	within "prometheus, $p sent" "$(sed -n "s/^xfib_port_sent_packets_total{port=\"$p\"} //p" <<<"$P")" "$tx1" "$tx2"
	within "status -j, $p rx" "$(jq -r --arg p "$p" '.interfaces[] | select(.name == $p) | .counters.rx.packets' <<<"$S")" "$rx1" "$rx2"
	within "status -j, $p tx" "$(jq -r --arg p "$p" '.interfaces[] | select(.name == $p) | .counters.tx.packets' <<<"$S")" "$tx1" "$tx2"
	within "status, $p rx" "$(sed -n "s/^  $p: rx \([0-9]*\) packets .*/\1/p" <<<"$ST")" "$rx1" "$rx2"
	within "status, $p tx" "$(sed -n "s/^  $p: rx .* tx \([0-9]*\) packets.*/\1/p" <<<"$ST")" "$tx1" "$tx2"
done

# ---- rates ---------------------------------------------------------------------

OUT="$XFIB_TMP/ndjson"
nping "$GEN" -4 -q -i 0.005 -c 400 "$SNK4" >/dev/null 2>&1 &
ping_pid=$!
XFIB_PIDS+=("$ping_pid")
sleep 0.1
timeout 10 nsenter --net="/run/netns/$RTR" -- "$XFIBCTL" --pin-dir "$PIN" \
	stats --ports -i 0.5 -c 2 -j >"$OUT" || fail "stats --ports -i 0.5 -c 2 -j: exit $?"
[ "$(wc -l <"$OUT")" -eq 2 ] || fail "stats --ports -i: $(wc -l <"$OUT") lines, expected 2"
jqe -s --arg g "$R_GEN" 'all(.[]; (.interval - 0.5 | fabs) < 0.1 and
	(.ports[] | select(.ifname == $g) | .rx.pps > 0 and .tx.pps > 0 and
	 (.received_as.forwarded_v4.bps / .received_as.forwarded_v4.pps - 784 | fabs) < 1))' \
	<"$OUT" >/dev/null || fail "stats --ports -i: $R_GEN not moving at 784 bit/packet: $(cat "$OUT")"

# ---- counted from the attach ------------------------------------------------------

# Once the pings above are over (a late echo would be counted after the
# attach), a new attach starts the port's counters from zero.
wait "$ping_pid" || true
rx=$(pstat "$R_GEN" ".rx.packets")
[ "$rx" -ge 400 ] || fail "$R_GEN rx $rx before the new attach, expected the 400 echoes at least"
rctl detach "$R_GEN" >/dev/null || fail "detach $R_GEN"
rctl attach "$R_GEN" >/dev/null || fail "attach $R_GEN"
rx=$(pstat "$R_GEN" ".rx.packets")
[ "$rx" -lt 10 ] || fail "$R_GEN counters not zeroed by attach: rx $rx"
log "ok"
