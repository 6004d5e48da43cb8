# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# The second build the upgrade tests upgrade to and from: this tree with
# make LAYOUT_TEST=1, whose maps differ from the default build's and whose
# layout is one newer (include/xfib/maps.h), in a BUILD of its own. Sourced
# after tests/lib/netns.sh, once xfib_init has run.

# layout_test_build: builds it (under a lock: the tests that use it may run
# side by side) and sets NEWD and NEWCTL to private copies of its xfibd and
# xfibctl, in $XFIB_TMP/new.
layout_test_build() {
	local dir="$XFIB_BUILD/layout-test"
	mkdir -p "$dir"
	log "building the LAYOUT_TEST=1 copy into $dir"
	flock "$dir.lock" make -s -C "$XFIB_TOP" BUILD="$dir" LAYOUT_TEST=1 \
		SAN="${XFIB_SAN:-0}" "$dir/xfibd" "$dir/xfibctl" \
		>"$XFIB_TMP/make.log" 2>&1 ||
		fail "make LAYOUT_TEST=1: $(tail -n 20 "$XFIB_TMP/make.log")"
	mkdir "$XFIB_TMP/new"
	cp "$dir/xfibd" "$dir/xfibctl" "$XFIB_TMP/new/"
	chmod 755 "$XFIB_TMP/new" "$XFIB_TMP/new/"*
	# shellcheck disable=SC2034 # for the test that sources this
	NEWD="$XFIB_TMP/new/xfibd" NEWCTL="$XFIB_TMP/new/xfibctl"
}

# prog_ids: the XDP program id of every port of the current router, on one
# line (0 for a port without one).
prog_ids() {
	local p
	for p in $(router_ports); do
		ip -n "$RTR" -j -d link show dev "$p" | jq -r '.[0].xdp.prog.id // 0'
	done | tr '\n' ' '
}
