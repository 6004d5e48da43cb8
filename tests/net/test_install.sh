#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make install / uninstall, and the service steps run from the installed
# files on a namespaced router:
#  - install honours PREFIX and DESTDIR-less prefixes, keeps an existing
#    configuration, and systemd accepts the unit; bash-completion finds
#    the completion of xfibctl where it is installed;
#  - the installed xfib-service starts xfibd with the configured table and
#    timers, attaches the configured ports and applies the algorithm
#    policy; traffic is XDP-forwarded;
#  - stop with XFIB_ON_STOP=keep leaves the dataplane forwarding, with
#    detach the ports go back to the kernel;
#  - uninstall removes everything but the configuration.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init

root="$XFIB_TMP/root"
mk() { make -s -C "$XFIB_TOP" --no-print-directory PREFIX="$root/usr" SYSCONFDIR="$root/etc" "$@"; }
mk install >/dev/null
for f in usr/sbin/xfibd usr/sbin/xfibctl usr/libexec/xfib/xfib-service \
	usr/lib/systemd/system/xfibd.service etc/xfib/xfibd.conf \
	usr/share/bash-completion/completions/xfibctl; do
	[ -e "$root/$f" ] || fail "make install did not install $f"
done
# bash-completion looks in XDG_DATA_DIRS (/usr/local/share:/usr/share by
# default): PREFIX/share.
if [ -r /usr/share/bash-completion/bash_completion ]; then
	out=$(XDG_DATA_DIRS="$root/usr/share" bash --norc -c '
		. /usr/share/bash-completion/bash_completion
		__load_completion xfibctl && complete -p xfibctl' 2>&1) || true
	[ "$out" = "complete -F _xfibctl xfibctl" ] ||
		fail "bash-completion does not find the installed completion: $out"
fi
for m in "$XFIB_TOP"/man/*.8; do
	[ -e "$m" ] || continue
	[ -e "$root/usr/share/man/man8/$(basename "$m")" ] || fail "man page $(basename "$m") not installed"
done
grep -q "ExecStart=$root/usr/libexec/xfib/xfib-service run" "$root/usr/lib/systemd/system/xfibd.service" ||
	fail "unit does not point at the installed helper"
"$root/usr/sbin/xfibctl" -h >/dev/null || fail "installed xfibctl does not run"
"$root/usr/sbin/xfibd" -h >/dev/null || fail "installed xfibd does not run"
unit="$root/usr/lib/systemd/system/xfibd.service"
command -v systemd-analyze >/dev/null || fail "no systemd-analyze (scripts/install-deps.sh installs systemd)"
# Documentation= is checked with man(1), which a minimal system may
# lack; the man pages themselves are tested in tests/doc.
out=$(MANPATH="$root/usr/share/man" systemd-analyze verify "$unit" 2>&1 |
	grep -v "Command 'man " || true)
[ -z "$out" ] || fail "systemd rejects the unit: $out"
# The hardened unit: the daemon's exposure as systemd scores it, offline.
out=$(systemd-analyze security --offline=true "$unit" 2>&1) || true
score=$(sed -n 's/.*Overall exposure level for xfibd.service: \([0-9.]*\).*/\1/p' <<<"$out")
[ -n "$score" ] || fail "no exposure score: $(tail -n 3 <<<"$out")"
awk -v s="$score" 'BEGIN { exit !(s <= 3.0) }' || fail "unit exposure $score, above 3.0"
grep -qx "CapabilityBoundingSet=CAP_BPF CAP_NET_ADMIN" "$unit" ||
	fail "unit capability set is not CAP_BPF CAP_NET_ADMIN"
log "unit exposure $score (systemd-analyze security, offline)"
# An existing configuration survives a reinstall.
echo "# local change" >>"$root/etc/xfib/xfibd.conf"
mk install >/dev/null
grep -q "local change" "$root/etc/xfib/xfibd.conf" || fail "reinstall overwrote the configuration"

# ---- the service steps on a router ----------------------------------------
topo_create
svc() { # svc STEP [VAR=VALUE...]: a unit step in the router namespace
	local step=$1
	shift
	env XFIB_INTERFACES="$R_GEN $R_SNK" XFIB_MODE=native XFIB_TABLE=254 \
		XFIB_ALGO_IPV4=dir24_8 XFIB_ALGO_IPV6=auto XFIB_EVAL_CHANGES=100 \
		XFIB_EVAL_MS=30000 XFIBD_OPTS="--pin-dir $PIN" "$@" \
		nsenter --net="/run/netns/$RTR" "$root/usr/libexec/xfib/xfib-service" "$step"
}
XFIBCTL="$root/usr/sbin/xfibctl"
svc pre-start
svc run >>"$XFIBD_LOG" 2>&1 &
XFIB_PIDS+=("$!")
# The step runs in a subshell, which then execs down to xfibd: ask the
# maps which pid it is.
wait_until 10 status_is '.daemon.running and .daemon.synced' ||
	fail "the service's xfibd did not sync: $(tail -n 5 "$XFIBD_LOG")"
XFIBD_PID=$(rctl status -j | jq '.daemon.pid')
svc post-start
st=$(rctl status -j)
jqe '.interfaces | length == 2' <<<"$st" >/dev/null || fail "post-start did not attach both ports: $(jq -c .interfaces <<<"$st")"
[ "$(jq -r .ipv4.algorithm <<<"$st")" = dir24_8 ] || fail "algorithm policy not applied: $(jq -r .ipv4.algorithm <<<"$st")"
[ "$(jq -r .ipv4.forced <<<"$st")" = true ] || fail "ipv4 algorithm not forced"
resolve_neighbours
expect_xdp 4 "$SNK4"
expect_xdp 6 "$SNK6"
# A second post-start (service restart) leaves attached ports alone.
svc post-start || fail "post-start with the ports already attached failed"

# Stop, keeping the dataplane: still XDP-forwarded without xfibd.
kill -TERM "$XFIBD_PID"
wait 2>/dev/null || true
svc post-stop XFIB_ON_STOP=keep
snapshot
ping_all "$GEN" 4 "$SNK4" 10
deltas
((D_X4 >= 20 && D_K4 == 0)) || fail "XFIB_ON_STOP=keep: not XDP-forwarded after stop (xfib +$D_X4, kernel +$D_K4)"
# Stop with detach: the kernel forwards again, nothing stays attached.
svc post-stop XFIB_ON_STOP=detach
jqe '.interfaces | length == 0' <<<"$(rctl status -j)" >/dev/null || fail "post-stop detach left ports attached"
snapshot
ping_all "$GEN" 4 "$SNK4" 10
deltas
((D_X4 == 0 && D_K4 >= 20)) || fail "after detach the kernel does not forward (xfib +$D_X4, kernel +$D_K4)"

mk uninstall >/dev/null
for f in usr/sbin/xfibd usr/sbin/xfibctl usr/libexec/xfib/xfib-service \
	usr/lib/systemd/system/xfibd.service usr/share/bash-completion/completions/xfibctl; do
	[ ! -e "$root/$f" ] || fail "make uninstall left $f"
done
[ -e "$root/etc/xfib/xfibd.conf" ] || fail "make uninstall removed the configuration"
log "PASS: install, service start/stop (keep and detach), uninstall"
