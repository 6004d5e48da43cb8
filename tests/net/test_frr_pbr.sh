#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# FRR's policy-based routing daemon (pbrd) as a source of rules and
# tables: a pbr-map on the router's gen port sends gen's subnet's traffic
# to one prefix by sink2, where main sends it to the sink. pbrd installs
# its own rule ("from ... to ... iif r-gen lookup <its table>") and table
# through zebra; xfib must walk them in XDP: echoes reach sink2, forwarded
# by xfib with the router kernel's counters flat, and xfibctl lookup
# names pbrd's rule and agrees with the kernel. Without the policy on the
# port, main again. Both families.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
# shellcheck source=tests/lib/frr.sh
. "$(dirname "$0")/../lib/frr.sh"
xfib_init
frr_available || skip "frr not installed and cannot be (scripts/install-deps.sh)"
[ -x "$FRR_DIR/pbrd" ] || skip "frr's pbrd not installed"

topo_up sink2
RIP="ip -n $RTR"
sinks_share 198.18.99 2001:db8:99
A4=$SHARED4 A6=$SHARED6

expect_xdp 4 $A4 10000 "$SNK"
expect_xdp 6 $A6 10000 "$SNK"

cat >"$XFIB_TMP/zebra.conf" <<EOF
hostname rtr
EOF
cat >"$XFIB_TMP/pbrd.conf" <<EOF
hostname rtr
pbr-map XFIBPBR seq 10
 match src-ip $NET4_G.0/24
 match dst-ip 198.18.99.0/24
 set nexthop $SNK2_4
!
pbr-map XFIBPBR seq 20
 match src-ip $NET6_G::/64
 match dst-ip 2001:db8:99::/48
 set nexthop $SNK2_6
!
interface $R_GEN
 pbr-policy XFIBPBR
!
EOF
frr_start "$RTR" zebra "$XFIB_TMP/zebra.conf"
frr_start "$RTR" pbrd "$XFIB_TMP/pbrd.conf"

# pbrd's rules, as the kernel holds them: one per family, on r-gen.
t0=$(now_ms)
until [ "$($RIP -4 -j rule | jq "[.[] | select(.iif == \"$R_GEN\")] | length")" -ge 1 ] &&
	[ "$($RIP -6 -j rule | jq "[.[] | select(.iif == \"$R_GEN\")] | length")" -ge 1 ]; do
	(($(now_ms) - t0 < 20000)) ||
		fail "pbrd installed no rules: $($RIP rule | tr '\n' ';') / $($RIP -6 rule | tr '\n' ';') ($(tail -n 5 "$XFIB_TMP"/frr-*pbrd.log | tr '\n' ' '))"
	sleep 0.2
done
log "pbrd's rules: $($RIP -4 rule | grep "$R_GEN" | tr '\n' ';') $($RIP -6 rule | grep "$R_GEN" | tr '\n' ';')"

expect_xdp 4 $A4 10000 "$SNK2"
expect_xdp 6 $A6 10000 "$SNK2"
for fam in 4 6; do
	prio=$($RIP "-$fam" -j rule | jq "[.[] | select(.iif == \"$R_GEN\")][0].priority")
	src=$GEN4 dst=$A4
	[ "$fam" = 4 ] || { src=$GEN6; dst=$A6; }
	lookup_names_rule "$dst" "$src" "$prio"
	[ "$(rctl rules -j | jq -r ".ipv$fam.rules[] | select(.priority == $prio) | .xfib.table.state")" = xdp ] ||
		fail "ipv$fam: pbrd's table is not in XDP: $(rctl rules -j | jq -c ".ipv$fam.rules[] | select(.priority == $prio)")"
done
log "pbrd's rules and tables walked in XDP"

# The policy off the port: pbrd removes its rules; main again.
vty "$RTR" -c "configure terminal" -c "interface $R_GEN" -c "no pbr-policy XFIBPBR" >/dev/null
expect_xdp 4 $A4 10000 "$SNK"
expect_xdp 6 $A6 10000 "$SNK"
log "pbrd's policy removed: main again"
