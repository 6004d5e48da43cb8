# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# Helpers shared by the benchmarks (tests/bench/*.sh), on top of
# tests/lib/netns.sh: the generated tables, waiting for xfibd to hold
# them, forcing a lookup algorithm.

# bench_table V4 V6 T4 T6 GW4 GW6: prints the path of an `ip -batch` file
# with V4 + V6 Internet-shaped prefixes and T4 + T6 prefixes inside the
# test ranges (scripts/gen-table.py), over the gateways given. The file
# depends only on its parameters and is kept in build/tables/ between
# runs (same name scheme as tests/net/test_scale.sh).
bench_table() {
	local v4=$1 v6=$2 t4=$3 t6=$4 gw4=$5 gw6=$6 dir="$XFIB_BUILD/tables" f
	mkdir -p "$dir"
	f="$dir/v4-$v4-v6-$v6-t$t4-$t6-${gw4//[@:\/,]/_}-${gw6//[@:\/,]/_}.batch"
	if [ ! -s "$f" ]; then
		log "generating $f" >&2
		python3 "$XFIB_TOP/scripts/gen-table.py" --v4 "$v4" --v6 "$v6" \
			--test4 "$t4" --test6 "$t6" --gw4 "$gw4" --gw6 "$gw6" \
			>"$f.tmp.$$" || fail "gen-table.py"
		mv "$f.tmp.$$" "$f"
	fi
	echo "$f"
}

# wait_routes MIN4 MIN6 [TIMEOUT_S]: xfibd's published instances hold at
# least MIN4 IPv4 and MIN6 IPv6 prefixes.
wait_routes() {
	local deadline=$((SECONDS + ${3:-300})) st
	while :; do
		st=$(rctl status -j)
		[ "$(jq '.ipv4.routes' <<<"$st")" -ge "$1" ] &&
			[ "$(jq '.ipv6.routes' <<<"$st")" -ge "$2" ] && return 0
		((SECONDS < deadline)) ||
			fail "xfibd holds $(jq -c '[.ipv4.routes, .ipv6.routes]' <<<"$st") routes, want $1/$2"
		sleep 0.1
	done
}

# force_algo FAMILY ALGO: publishes ALGO for FAMILY (4 or 6). False (and
# says why) if the algorithm cannot hold the table.
force_algo() {
	local fam=$1 algo=$2 out st deadline
	if out=$(rctl algo "ipv$fam" "$algo" 2>&1 >/dev/null); then
		return 0
	fi
	if grep -q "cannot hold" <<<"$out"; then
		log "IPv$fam $algo: $out"
		return 1
	fi
	# xfibctl waits a few seconds only; a big build can take longer.
	deadline=$((SECONDS + 120))
	while ((SECONDS < deadline)); do
		st=$(rctl status -j | jq -c ".ipv$fam")
		[ "$(jq -r '.algorithm' <<<"$st")" = "$algo" ] && return 0
		if [ "$(jq -r '.fallback' <<<"$st")" != none ]; then
			log "IPv$fam $algo: cannot hold the table ($(jq -c . <<<"$st"))"
			return 1
		fi
		sleep 0.2
	done
	log "IPv$fam $algo: not published after 120 s: $out"
	return 1
}

# bench_machine: the machine, as JSON, for the records.
bench_machine() {
	jq -n -c --arg kernel "$(uname -r)" --argjson ncpu "$(nproc)" \
		--arg cpu_model "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)" \
		'{kernel: $kernel, cpus: $ncpu, cpu_model: $cpu_model}'
}
