#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Packets that would leave the router with TTL / hop limit 0 go to the
# kernel (pass_ttl), which answers with ICMP time exceeded from the router's
# address; none of them reaches the sink. TTL 2 still goes through xfib.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

topo_up

for fam in 4 6; do
	if [ "$fam" = 4 ]; then
		dst=$SNK4 rtr=$R_GEN4 want="Time to live exceeded"
	else
		dst=$SNK6 rtr=$R_GEN6 want="Time exceeded: Hop limit"
	fi
	t0=$(counter pass_ttl)
	e0=$(icmp_in_echos "$SNK")
	x0=$(counter "forwarded_v$fam")
	out=$(nping "$GEN" "-$fam" -c 1 -t 1 "$dst" 2>&1) &&
		fail "ping -$fam -t 1 $dst was answered by the sink: $out"
	log "ping -$fam -t 1 $dst: $(grep -i 'from' <<<"$out" | head -n 1)"
	grep -q "From $rtr .*$want" <<<"$out" ||
		fail "ping -$fam -t 1 $dst: expected '$want' from $rtr, got: $(tr '\n' ' ' <<<"$out")"
	[ "$(counter pass_ttl)" -gt "$t0" ] || fail "pass_ttl did not move for ping -$fam -t 1"
	[ "$(counter "forwarded_v$fam")" -eq "$x0" ] || fail "xfib forwarded a TTL 1 packet"
	[ "$(icmp_in_echos "$SNK")" -eq "$e0" ] || fail "a TTL 1 echo reached the sink"

	# TTL 2 leaves the router with 1: forwarded by xfib, answered.
	snapshot
	ping_all "$GEN" "$fam" "$dst" 1 -t 2
	deltas
	(( D_X4 + D_X6 >= 2 && D_K4 + D_K6 == 0 )) ||
		fail "ping -$fam -t 2 not XDP-forwarded"
done

log "PASS: TTL/hop limit 1 answered with time exceeded by the router kernel"
