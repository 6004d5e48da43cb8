#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# xfibctl refuses bad input cleanly: a non-zero exit (1, or 2 for usage
# errors), one error line "xfibctl: <command> <object>: <cause>" naming the
# object, and nothing left half done (no program on any port it failed on,
# ports attached before untouched).
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init
command -v setpriv >/dev/null || skip "missing tool: setpriv (util-linux)"

topo_create
xfibd_start

ERR="$XFIB_TMP/stderr"

# Wrong messages and exit codes are collected and reported together at the
# end; state left half done fails at once.
BAD=()
bad() {
	log "WRONG: $*"
	BAD+=("$*")
}

# expect_error RC PATTERN CMD...: CMD exits with RC and writes exactly one
# line to stderr, matching the extended regexp PATTERN.
expect_error() {
	local want=$1 pat=$2 rc=0 lines
	shift 2
	"$@" >/dev/null 2>"$ERR" || rc=$?
	lines=$(wc -l <"$ERR")
	log "$* -> exit $rc: $(head -n 1 "$ERR")"
	if [ "$rc" -ne "$want" ]; then
		bad "$*: exit $rc, expected $want (stderr: $(cat "$ERR"))"
	elif [ "$lines" -ne 1 ]; then
		bad "$*: $lines lines on stderr, expected one: $(cat "$ERR")"
	elif ! grep -Eq "$pat" "$ERR"; then
		bad "$*: error does not match /$pat/: $(cat "$ERR")"
	fi
}

# expect_usage CMD...: a usage error: exit 2 and something on stderr.
expect_usage() {
	local rc=0
	"$@" >/dev/null 2>"$ERR" || rc=$?
	log "$* -> exit $rc: $(head -n 1 "$ERR")"
	if [ "$rc" -ne 2 ]; then
		bad "$*: exit $rc, expected 2 (stderr: $(cat "$ERR"))"
	elif ! [ -s "$ERR" ]; then
		bad "$*: usage error with nothing on stderr"
	fi
}

# attached_ports: the names status lists, sorted, one line.
attached_ports() { rctl status -j | jq -r '[.interfaces[].name] | sort | join(" ")'; }

# no_xdp PORT...: none of the ports carries an XDP program.
no_xdp() {
	local p
	for p in "$@"; do
		! xdp_prog_on "$RTR" "$p" || fail "$p has an XDP program left"
	done
}

# 1. Unknown interface, alone and next to a good one (either order).
expect_error 1 '^xfibctl: attach nosuch0: ' rctl attach nosuch0
expect_error 1 '^xfibctl: attach nosuch0: ' rctl attach "$R_GEN" nosuch0
no_xdp "$R_GEN" "$R_SNK"
expect_error 1 '^xfibctl: attach nosuch0: ' rctl attach nosuch0 "$R_SNK"
no_xdp "$R_GEN" "$R_SNK"
[ -z "$(attached_ports)" ] || fail "failed attach left ports in status: $(attached_ports)"
expect_error 1 '^xfibctl: detach nosuch0: ' rctl detach nosuch0

# 2. Attaching an attached port fails and leaves it attached as it was.
rctl attach "$R_GEN" || fail "attach $R_GEN"
id0=$(ip -n "$RTR" -j -d link show dev "$R_GEN" | jq '.[0].xdp.prog.id')
expect_error 1 "^xfibctl: attach $R_GEN: " rctl attach "$R_GEN"
id1=$(ip -n "$RTR" -j -d link show dev "$R_GEN" | jq '.[0].xdp.prog.id')
[[ $id0 == "$id1" && $id1 != null ]] || fail "$R_GEN program changed by the failed attach ($id0 -> $id1)"
# ... also when it comes after a good port, which must be rolled back.
expect_error 1 "^xfibctl: attach $R_GEN: " rctl attach "$R_SNK" "$R_GEN"
no_xdp "$R_SNK"
[ "$(attached_ports)" = "$R_GEN" ] || fail "after failed attach, status lists: $(attached_ports)"

# 3. Detaching a port that is not attached.
expect_error 1 "^xfibctl: detach $R_SNK: " rctl detach "$R_SNK"
xdp_prog_on "$RTR" "$R_GEN" || fail "failed detach of $R_SNK removed $R_GEN's program"

# 3b. Devices that cannot be routed ports: a bridge (its members are
# attached instead; a bond member would be refused too, but this kernel
# has no bonding module), and a device without an Ethernet address (tun;
# no ipip, sit or wireguard here). Refused with the reason named, alone
# and next to a good port in either order, and nothing attached.
ip -n "$RTR" link add br-x type bridge
ip -n "$RTR" link add bp-x type veth peer name bp-y
ip -n "$RTR" link set bp-x master br-x
ip -n "$RTR" link set bp-x up
ip -n "$RTR" tuntap add mode tun dev tun-x
expect_error 1 "^xfibctl: attach br-x: a bridge: attach its member ports instead" \
	rctl attach br-x
expect_error 1 "^xfibctl: attach br-x: a bridge" rctl attach "$R_SNK" br-x
expect_error 1 "^xfibctl: attach br-x: a bridge" rctl attach br-x "$R_SNK"
expect_error 1 "^xfibctl: attach tun-x: no Ethernet \\(MAC\\) address" rctl attach tun-x
expect_error 1 "^xfibctl: attach tun-x: no Ethernet" rctl attach "$R_SNK" tun-x
no_xdp br-x tun-x "$R_SNK"
[ "$(attached_ports)" = "$R_GEN" ] || fail "after refused ports, status lists: $(attached_ports)"
# A device whose ifindex is beyond the ports the dataplane holds
# (XFIB_PORT_MAX, 1024): refused alone and next to a good port. xfibd
# says so once for the link, however often it changes, and carries on.
ip -n "$RTR" link add hi-x index 1024 type veth peer name hi-y
ip -n "$RTR" link set hi-x up
expect_error 1 "^xfibctl: attach hi-x: ifindex 1024 is beyond the 1024 ports xfib forwards between" \
	rctl attach hi-x
expect_error 1 "^xfibctl: attach hi-x: ifindex 1024 is beyond" rctl attach "$R_SNK" hi-x
no_xdp hi-x "$R_SNK"
ip -n "$RTR" link set hi-x mtu 1400
ip -n "$RTR" link set hi-x down
hi_down() { grep -q 'link hi-x down' "$XFIBD_LOG"; }
wait_until 5 hi_down || fail "xfibd did not see hi-x go down"
# Said once: not again for the MTU or the down (identical lines in a row
# would be collapsed into "last message repeated", before the down line).
[ "$(grep -c 'link hi-x: ifindex 1024 is beyond' "$XFIBD_LOG")" -eq 1 ] ||
	fail "xfibd did not say exactly once that hi-x is beyond its ports"
grep -B1 'link hi-x down' "$XFIBD_LOG" | head -n 1 | grep -q 'repeated' &&
	fail "xfibd repeated that hi-x is beyond its ports: $(grep -B1 'link hi-x down' "$XFIBD_LOG" | head -n 1)"
rctl status >/dev/null || fail "status after hi-x came and changed"
kill -0 "$XFIBD_PID" || fail "xfibd exited after hi-x came"
ip -n "$RTR" link del hi-x
# Out of the bridge, the same veth is a port like any other.
ip -n "$RTR" link set bp-x nomaster
rctl attach bp-x || fail "attach bp-x after it left the bridge"
xdp_prog_on "$RTR" bp-x || fail "no XDP program on bp-x after attach"
rctl detach bp-x || fail "detach bp-x"
ip -n "$RTR" link del bp-x
ip -n "$RTR" link del br-x
ip -n "$RTR" link del tun-x

# 4. Not root: capabilities dropped with the uid. ($XFIBCTL is a copy an
# unprivileged user can run, so the error is xfibctl's own.)
nobody() {
	in_ns "$RTR" setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$XFIBCTL" --pin-dir "$PIN" "$@"
}
expect_error 1 "^xfibctl: attach ($R_SNK|${PIN}[^ ]*): " nobody attach "$R_SNK"
no_xdp "$R_SNK"
expect_error 1 "^xfibctl: detach ($R_GEN|${PIN}[^ ]*): " nobody detach "$R_GEN"
xdp_prog_on "$RTR" "$R_GEN" || fail "unprivileged detach removed $R_GEN's program"
expect_error 1 "^xfibctl: stats( ${PIN}[^ ]*)?: " nobody stats

# 5. No bpffs under the pin directory.
NOBPF="$XFIB_TMP/nobpf" # tmpfs or ext4, removed at exit
mkdir "$NOBPF"
[ "$(stat -f -c %T "$NOBPF")" != bpf_fs ] || fail "$NOBPF is on a bpffs"
nobpf() { xctl "$RTR" "$NOBPF/pins" "$@"; }
expect_error 1 "^xfibctl: attach ($R_SNK|$NOBPF/pins): " nobpf attach "$R_SNK"
no_xdp "$R_SNK"
expect_error 1 "^xfibctl: status( $NOBPF/pins)?: " nobpf status
[ -z "$(ls -A "$NOBPF")" ] || fail "xfibctl left files in $NOBPF: $(ls -A "$NOBPF")"
# The daemon refuses it too, and quickly.
rc=0
timeout 5 nsenter --net="/run/netns/$RTR" -- "$XFIBD" --pin-dir "$NOBPF/pins" \
	>/dev/null 2>"$ERR" || rc=$?
log "xfibd --pin-dir $NOBPF/pins -> exit $rc: $(head -n 1 "$ERR")"
(( rc != 0 && rc != 124 )) || fail "xfibd with a pin dir off bpffs: exit $rc, expected a prompt error"
grep -q "$NOBPF/pins" "$ERR" || bad "xfibd error does not name $NOBPF/pins: $(cat "$ERR")"
[ ! -e "$NOBPF/pins" ] || fail "xfibd created $NOBPF/pins"

# 6. Malformed options and arguments.
expect_usage rctl --bogus-option status
expect_usage rctl bogus-command
expect_usage rctl attach
expect_usage rctl attach --mode bogus "$R_SNK"
no_xdp "$R_SNK"
expect_usage rctl detach
# xfibd: refuses to start (a non-zero exit, promptly, with a message).
for args in "--bogus-option" "--batch-ms notanumber" "--table notanumber"; do
	rc=0
	# shellcheck disable=SC2086 # split the argument list on purpose
	timeout 5 nsenter --net="/run/netns/$RTR" -- "$XFIBD" --pin-dir "$PIN" $args \
		>/dev/null 2>"$ERR" || rc=$?
	log "xfibd $args -> exit $rc: $(head -n 1 "$ERR")"
	(( rc != 0 && rc != 124 )) || fail "xfibd $args: exit $rc, expected a prompt error"
	[ -s "$ERR" ] || bad "xfibd $args: no message"
done
# ... and a number out of its option's range is refused, not cut down to
# one that fits (4294967297 was once taken as 1): a usage error naming the
# option, the value and the range.
for args in "--batch-ms 4294967297" "--table 4294967296" "--rcvbuf 4294971392" \
	"--eval-changes 4294967297" "--eval-ms -1"; do
	# shellcheck disable=SC2086 # split the argument list on purpose
	expect_error 2 "^xfibd: ${args%% *} '${args#* }': not .* \([0-9]+\.\.[0-9]+\)\$" \
		timeout 5 nsenter --net="/run/netns/$RTR" -- "$XFIBD" --pin-dir "$PIN" $args
done

# After all that: exactly the one good port attached, and it forwards.
[ "$(attached_ports)" = "$R_GEN" ] || fail "status lists: $(attached_ports), expected $R_GEN"
no_xdp "$R_SNK"
kill -0 "$XFIBD_PID" || fail "xfibd died during the bad input tests"
rctl attach "$R_SNK" || fail "attach $R_SNK after the errors"
resolve_neighbours
expect_xdp 4 "$SNK4"
expect_xdp 6 "$SNK6"

if [ ${#BAD[@]} -gt 0 ]; then
	printf 'wrong: %s\n' "${BAD[@]}" >&2
	fail "${#BAD[@]} bad inputs not reported as specified"
fi
log "PASS: bad input refused cleanly"
