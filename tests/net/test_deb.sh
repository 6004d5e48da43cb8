#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make deb, and the package on this machine:
#  - it builds with dpkg-buildpackage and debhelper, lintian reports no
#    error, and its Depends name the packages of the shared libraries the
#    binaries load;
#  - dpkg -i installs the binaries, man pages, unit, service helper,
#    bash completion and /etc/xfib/xfibd.conf as a conffile; the installed
#    xfibctl -h and xfibd -h run, the unit points at the installed files
#    and systemd accepts it, it is not enabled, bash-completion loads the
#    completion;
#  - a changed configuration survives a reinstall and dpkg --remove (which
#    leaves only the conffile), and dpkg --purge leaves nothing: every
#    file and directory the package brought is gone, no enablement link,
#    no dpkg state.
# The package is installed system-wide: runs of this test take turns (a
# lock), and the test skips rather than touch an xfib installed by other
# means (a package or files at the package's paths).
# run.sh: long
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init
for t in dpkg-buildpackage dh lintian; do
	command -v "$t" >/dev/null || "$XFIB_TOP/scripts/install-deps.sh" >/dev/null 2>&1 || true
	command -v "$t" >/dev/null || skip "$t not installed and cannot be (scripts/install-deps.sh)"
done

b="$XFIB_TMP/build"
t0=$SECONDS
make -s -C "$XFIB_TOP" --no-print-directory BUILD="$b" deb >"$XFIB_TMP/deb.log" 2>&1 ||
	fail "make deb: $(tail -n 30 "$XFIB_TMP/deb.log")"
deb=$(ls "$b"/xfib_*.deb)
log "make deb: $(basename "$deb") in $((SECONDS - t0)) s"
lint="$b/deb/lintian.txt"
[ -f "$lint" ] || fail "no lintian output"
! grep -q '^E:' "$lint" || fail "lintian errors: $(cat "$lint")"
log "lintian: $(grep -c . "$lint" || true) finding(s), none an error: $(tr '\n' ' ' <"$lint")"
pkg_files=$(dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|; s|/$||; /^$/d')

# Take turns with other runs; leave another xfib alone.
exec 9>/run/lock/xfib-test-deb.lock
flock -w 900 9 || fail "another test_deb holds /run/lock/xfib-test-deb.lock"
status() { dpkg-query -W -f='${Status}' xfib 2>/dev/null || true; }
case $(status) in
"" | *not-installed) ;;
*) skip "a package xfib is on this machine ($(status)): not touching it" ;;
esac
existed=()
while read -r f; do
	if [ -e "$f" ] || [ -L "$f" ]; then
		[ -d "$f" ] || skip "$f exists and is not the package's: not touching it"
		existed+=("$f")
	fi
done <<<"$pkg_files"
XFIB_EXIT_HOOKS+=("dpkg --purge xfib >/dev/null 2>&1")

# ---- installed ------------------------------------------------------------
dpkg -i "$deb" >"$XFIB_TMP/dpkg.log" 2>&1 || fail "dpkg -i: $(cat "$XFIB_TMP/dpkg.log")"
[ "$(status)" = "install ok installed" ] || fail "after dpkg -i: $(status)"
listed=$(dpkg -L xfib)
for f in /usr/sbin/xfibd /usr/sbin/xfibctl /usr/libexec/xfib/xfib-service \
	/lib/systemd/system/xfibd.service /etc/xfib/xfibd.conf \
	/usr/share/man/man8/xfibd.8.gz /usr/share/man/man8/xfibctl.8.gz \
	/usr/share/bash-completion/completions/xfibctl /usr/share/doc/xfib/copyright; do
	grep -qx "$f" <<<"$listed" || fail "dpkg -L xfib lacks $f"
	[ -f "$f" ] || fail "$f listed but not installed"
done
# The configuration is a conffile, with the checksum of what is installed.
conff=$(dpkg-query -W -f='${Conffiles}\n' xfib)
[ "$(awk '$1 == "/etc/xfib/xfibd.conf" { print $2 }' <<<"$conff")" = \
	"$(md5sum </etc/xfib/xfibd.conf | cut -d' ' -f1)" ] ||
	fail "conffiles: '$conff'"
[ "$(wc -l <<<"$conff")" -eq 1 ] || fail "conffiles other than xfibd.conf: $conff"
out=$(/usr/sbin/xfibctl -h) || fail "installed xfibctl -h: exit $?"
grep -q '^Usage: xfibctl' <<<"$out" || fail "installed xfibctl -h: $out"
out=$(/usr/sbin/xfibd -h) || fail "installed xfibd -h: exit $?"
grep -q 'xfibd' <<<"$out" || fail "installed xfibd -h: $out"
grep -qx 'ExecStart=/usr/libexec/xfib/xfib-service run' /lib/systemd/system/xfibd.service ||
	fail "unit: $(grep ExecStart= /lib/systemd/system/xfibd.service)"
grep -qx 'XFIBD=/usr/sbin/xfibd' /usr/libexec/xfib/xfib-service || fail "service helper paths"
grep -qx 'EnvironmentFile=-/etc/xfib/xfibd.conf' /lib/systemd/system/xfibd.service ||
	fail "unit does not read /etc/xfib/xfibd.conf"
out=$(systemd-analyze verify /lib/systemd/system/xfibd.service 2>&1 | grep -v "Command 'man " || true)
[ -z "$out" ] || fail "systemd rejects the installed unit: $out"
[ ! -e /etc/systemd/system/multi-user.target.wants/xfibd.service ] ||
	fail "the unit was enabled on install"
# Depends names the package of every shared library the binaries load
# directly (libc6's are in the base system, but named too).
deps=$(dpkg-deb -f "$deb" Depends)
for bin in /usr/sbin/xfibd /usr/sbin/xfibctl; do
	for lib in $(objdump -p "$bin" | awk '$1 == "NEEDED" { print $2 }'); do
		# (awk reads to the end: an early exit would be SIGPIPE for ldconfig.)
		path=$(ldconfig -p | awk -v l="$lib" '$1 == l && !p { print $NF; p = 1 }')
		[ -n "$path" ] || fail "$bin needs $lib, which is not installed"
		owner=$({ dpkg -S "$(readlink -f "$path")" || dpkg -S "$path"; } 2>/dev/null |
			cut -d: -f1 | head -n 1) || true
		[ -n "$owner" ] || fail "no package owns $path ($lib of $bin)"
		[[ $deps =~ (^|, )"$owner"( |,|$) ]] ||
			fail "$bin needs $lib of package $owner; Depends: $deps"
	done
done
log "Depends: $deps"
# bash-completion finds the completion where it is installed.
out=$(bash --norc -c '. /usr/share/bash-completion/bash_completion
	__load_completion xfibctl && complete -p xfibctl' 2>&1) || true
[ "$out" = "complete -F _xfibctl xfibctl" ] || fail "bash-completion does not load xfibctl's: $out"

# ---- the configuration is the operator's -----------------------------------
echo 'XFIB_INTERFACES="eth-test"  # changed by test_deb' >>/etc/xfib/xfibd.conf
dpkg -i "$deb" >"$XFIB_TMP/dpkg.log" 2>&1 || fail "reinstall: $(cat "$XFIB_TMP/dpkg.log")"
grep -q 'changed by test_deb' /etc/xfib/xfibd.conf || fail "reinstall replaced the changed configuration"
dpkg --remove xfib >"$XFIB_TMP/dpkg.log" 2>&1 || fail "dpkg --remove: $(cat "$XFIB_TMP/dpkg.log")"
[ "$(status)" = "deinstall ok config-files" ] || fail "after --remove: $(status)"
grep -q 'changed by test_deb' /etc/xfib/xfibd.conf || fail "dpkg --remove lost the configuration"
left=$(while read -r f; do [ -e "$f" ] && [ ! -d "$f" ] && echo "$f"; done <<<"$pkg_files" || true)
[ "$left" = /etc/xfib/xfibd.conf ] || fail "after --remove, left: $(tr '\n' ' ' <<<"$left")"

# ---- purged: nothing left --------------------------------------------------
dpkg --purge xfib >"$XFIB_TMP/dpkg.log" 2>&1 || fail "dpkg --purge: $(cat "$XFIB_TMP/dpkg.log")"
case $(status) in "" | *not-installed) ;; *) fail "after --purge: $(status)" ;; esac
left=""
while read -r f; do
	[[ " ${existed[*]} " == *" $f "* ]] && continue
	if [ -e "$f" ] || [ -L "$f" ]; then
		left="$left $f"
	fi
done <<<"$pkg_files"
[ -z "$left" ] || fail "dpkg --purge left:$left"
for f in /var/lib/dpkg/info/xfib.* /etc/systemd/system/*/xfibd.service \
	/var/lib/systemd/deb-systemd-helper-enabled/xfibd.service* \
	/var/lib/systemd/deb-systemd-helper-masked/xfibd.service; do
	[ ! -e "$f" ] || fail "dpkg --purge left $f"
done
log "PASS: make deb, lintian clean of errors, installed, conffile kept on remove, nothing left after purge"
