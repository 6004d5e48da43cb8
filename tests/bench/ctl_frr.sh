# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# The FRR case of tests/bench/ctl.sh (sourced by it, run after its own
# steps): mirror lag while a routing daemon, not `ip -batch`, installs a
# large table. A second router (topology 1) runs xfibd and FRR's zebra and
# bgpd; a BIRD in its sink announces FRR4 + FRR6 prefixes (the
# Internet-shaped table of scripts/gen-table.py) over eBGP, and zebra
# installs them in the kernel through a nexthop object, at its own pace
# and in its own batches.
#
# tests/bench/ctlwatch.c, started in the router before BIRD, notes when
# the kernel announces each route (its route notifications, protocol bgp)
# and when xfibd's published instances hold as many. Recorded:
#   frr_install_ms, frr_kernel_routes_per_s: the kernel's first route
#     announced to its last (zebra's pace, with BGP and BIRD's);
#   frr_mirror_lag_ms: the kernel's last route to the dataplane holding
#     them all;
#   frr_lag_p50_ms, frr_lag_p99_ms, frr_lag_max_ms: per route, from the
#     kernel announcing it to the dataplane holding as many routes (how
#     stale the dataplane is while the table loads);
#   frr_backlog_max_routes: most routes announced and not yet published;
#   frr_xfibd_cpu_ms, frr_zebra_cpu_ms, frr_bgpd_cpu_ms: CPU time each
#     spent from BIRD's start to the end.
# Needs frr and bird2 (scripts/install-deps.sh); without them the case is
# skipped with a message.

# bird_static NAME FAMILY (ipv4, ipv6) < TABLE: a BIRD static protocol of
# the `ip -batch` routes of that family, as blackholes (BGP announces
# them with the speaker itself as next hop).
bird_static() {
	# shellcheck disable=SC2016
	awk -v name="$1" -v fam="$2" '
		BEGIN { printf "protocol static %s {\n\t%s;\n", name, fam }
		($3 ~ /:/) == (fam == "ipv6") { printf "\troute %s blackhole;\n", $3 }
		END { print "}" }'
}

# frr_router_conf: bgpd's configuration: eBGP with the sink, both families.
frr_router_conf() {
	cat <<EOF
frr defaults traditional
router bgp 65001
 bgp router-id $R_SNK4
 no bgp ebgp-requires-policy
 no bgp default ipv4-unicast
 neighbor $SNK4 remote-as 65002
 neighbor $SNK6 remote-as 65002
 neighbor $SNK4 timers connect 1
 neighbor $SNK6 timers connect 1
 address-family ipv4 unicast
  neighbor $SNK4 activate
 exit-address-family
 address-family ipv6 unicast
  neighbor $SNK6 activate
 exit-address-family
EOF
}

frr_case() {
	local table total x w p c0 z0 g0 zpid gpid wpid
	if ! frr_available || ! bird_available; then
		log "FRR case skipped: frr or bird2 not installed (scripts/install-deps.sh)"
		return 0
	fi
	# The table of step 1 when the sizes agree (the test-range prefixes
	# are clear of this router's subnets too).
	table=$(bench_table "$FRR4" "$FRR6" "$T4" "$T6" "$GW4" "$GW6")
	total=$(wc -l <"$table")
	topo_create 1
	xfibd_start
	echo "hostname $RTR" >"$XFIB_TMP/frr-zebra.conf"
	frr_router_conf >"$XFIB_TMP/frr-bgpd.conf"
	frr_start "$RTR" zebra "$XFIB_TMP/frr-zebra.conf"
	zpid=$FRR_PID
	frr_start "$RTR" bgpd "$XFIB_TMP/frr-bgpd.conf"
	gpid=$FRR_PID
	{
		bgp_peer_conf "$SNK4" 65002 "$R_SNK4" "$R_SNK6" 65001
		bird_static static4 ipv4 <"$table"
		bird_static static6 ipv6 <"$table"
	} >"$XFIB_TMP/bird-frr-peer.conf"

	log "FRR: BIRD announces $total routes to bgpd in $RTR"
	in_ns "$RTR" "$CTLWATCH" --pin-dir "$PIN" --routes "$total" --proto 186 \
		>"$XFIB_TMP/ctlwatch.json" 2>"$XFIB_TMP/ctlwatch.err" &
	wpid=$!
	XFIB_PIDS+=("$wpid")
	until grep -qs listening "$XFIB_TMP/ctlwatch.err"; do
		kill -0 "$wpid" 2>/dev/null || fail "ctlwatch: $(cat "$XFIB_TMP/ctlwatch.err")"
		sleep 0.05
	done
	# shellcheck disable=SC2153 # XFIBD_PID: set by xfibd_start
	c0=$(cpu_ms "$XFIBD_PID") z0=$(cpu_ms "$zpid") g0=$(cpu_ms "$gpid")
	bird_start "$SNK" "$XFIB_TMP/bird-frr-peer.conf" "$XFIB_TMP/bird-frr-peer.ctl"
	wait "$wpid" || fail "ctlwatch: $(cat "$XFIB_TMP/ctlwatch.err" "$XFIB_TMP/ctlwatch.json")"
	w=$(cat "$XFIB_TMP/ctlwatch.json")
	[ "$(jq .lost <<<"$w")" = 0 ] || fail "ctlwatch lost route notifications: $w"
	x="{\"routes\": $total, \"source\": \"frr bgpd\"}"
	rec frr_install_ms "$(jq .install_ms <<<"$w")" ms all "$x"
	rec frr_kernel_routes_per_s "$(jq '.routes * 1000 / (.install_ms + 1) | floor' <<<"$w")" routes/s all "$x"
	rec frr_mirror_lag_ms "$(jq .mirror_lag_ms <<<"$w")" ms all "$x"
	for p in p50 p99 max; do
		rec "frr_lag_${p}_ms" "$(jq ".lag_ms.$p" <<<"$w")" ms all "$x"
	done
	rec frr_backlog_max_routes "$(jq .backlog_max <<<"$w")" routes all "$x"
	rec frr_xfibd_cpu_ms $(($(cpu_ms "$XFIBD_PID") - c0)) ms all "$x"
	rec frr_zebra_cpu_ms $(($(cpu_ms "$zpid") - z0)) ms all "$x"
	rec frr_bgpd_cpu_ms $(($(cpu_ms "$gpid") - g0)) ms all "$x"
	log "FRR: $(rctl status -j | jq -c '{v4: .ipv4 | {algorithm, routes}, v6: .ipv6 | {algorithm, routes}}')"
}
