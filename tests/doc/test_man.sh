#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The man pages document what the programs accept: every option of
# `xfibd -h`, `xfibctl -h` and `xfibctl CMD -h` (long name and short
# letter), and every command listed by `xfibctl -h`, must appear in
# man/xfibd.8 or man/xfibctl.8 (a command as a heading of COMMANDS, its
# options inside its own entry). xfibctl's help is generated from its
# option tables, so this covers every option it parses; xfibd's help is
# written by hand, so its getopt table in ctl/xfibd/options.c is read too and
# every option there must be in the help and the page. Then each page
# must render without groff warnings, if groff or man is installed.
# Needs neither root nor namespaces. Exit 0 pass, 77 skip, else fail.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$top/build}
XFIBD=${XFIBD:-$build/xfibd}
XFIBCTL=${XFIBCTL:-$build/xfibctl}
MAN_XFIBD=$top/man/xfibd.8
MAN_XFIBCTL=$top/man/xfibctl.8

skip() {
	echo "SKIP: $*"
	exit 77
}

for b in "$XFIBD" "$XFIBCTL"; do
	[ -x "$b" ] || skip "$b not built (run make)"
done

missing=()
fail_missing() {
	echo "MISSING: $*"
	missing+=("$*")
}

# Long options (--name) in a help text, one per line.
long_opts() {
	grep -oE -- '--[a-z][a-z0-9-]*' | sort -u
}

# A man page as plain text, without rendering it: roff escapes for the
# hyphen, font changes and zero-width joins removed, comments dropped.
plain() {
	sed -e '/^\.\\"/d' -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' \
		-e 's/\\f(..//g' -e 's/\\&//g' -e 's/\\(..//g' "$1"
}

# has_opt TEXT OPT: OPT appears in TEXT as a whole option.
has_opt() {
	grep -qE -- "(^|[^a-zA-Z0-9-])$2([^a-zA-Z0-9-]|\$)" <<<"$1"
}

# Short options given with their long name ("-m, --mode"), as "-m --mode"
# lines: the page must name both.
short_long() {
	grep -oE -- '(^|[[:space:]])-[a-zA-Z], --[a-z][a-z0-9-]*' | tr -d ',' |
		sed 's/^[[:space:]]*//' | sort -u
}

# check_pairs TEXT WHERE HELP: each short option of HELP is in TEXT.
check_pairs() {
	local text=$1 where=$2 s l
	while read -r s l; do
		[ -n "$s" ] || continue
		has_opt "$text" "$s" || fail_missing "$where: short option $s ($l)"
	done < <(short_long <<<"$3")
}

# ---- xfibd ----------------------------------------------------------------
[ -f "$MAN_XFIBD" ] || fail_missing "man/xfibd.8"
xfibd_help=$("$XFIBD" -h)
xfibd_opts=$(long_opts <<<"$xfibd_help")
[ -n "$xfibd_opts" ] || { echo "FAIL: no long option in 'xfibd -h'"; exit 1; }
# xfibd's getopt table: { "name", ..._argument, NULL, 'c' } lines.
src_opts=$(sed -nE 's/^[[:space:]]*\{ "([a-z][a-z0-9-]*)", [a-z_]+_argument, NULL, .*/--\1/p' \
	"$top/ctl/xfibd/options.c" | sort -u)
[ -n "$src_opts" ] || { echo "FAIL: no option table found in ctl/xfibd/options.c"; exit 1; }
for o in $src_opts; do
	has_opt "$xfibd_help" "$o" || fail_missing "xfibd -h: option $o (getopt table in ctl/xfibd/options.c)"
done
if [ -f "$MAN_XFIBD" ]; then
	page=$(plain "$MAN_XFIBD")
	for o in $(printf "%s\n" $xfibd_opts $src_opts | sort -u); do
		has_opt "$page" "$o" || fail_missing "man/xfibd.8: option $o (xfibd)"
	done
	check_pairs "$page" man/xfibd.8 "$xfibd_help"
fi

# ---- xfibctl --------------------------------------------------------------
[ -f "$MAN_XFIBCTL" ] || fail_missing "man/xfibctl.8"
ctl_help=$("$XFIBCTL" -h)
# Commands: the first word of each line between "Commands:" and the next
# blank line.
cmds=$(awk '/^Commands:/ { on = 1; next } on && /^[[:space:]]*$/ { exit }
	    on { print $1 }' <<<"$ctl_help")
[ -n "$cmds" ] || { echo "FAIL: no command found in 'xfibctl -h'"; exit 1; }
# Global options: those of the "Options:" part.
global_opts=$(sed -n '/^Options:/,/^[[:space:]]*$/p' <<<"$ctl_help" | long_opts)
[ -n "$global_opts" ] || { echo "FAIL: no long option in 'xfibctl -h'"; exit 1; }

if [ -f "$MAN_XFIBCTL" ]; then
	page=$(plain "$MAN_XFIBCTL")
	for o in $global_opts; do
		has_opt "$page" "$o" || fail_missing "man/xfibctl.8: option $o (xfibctl -h)"
	done
	check_pairs "$page" man/xfibctl.8 "$(sed -n '/^Options:/,/^[[:space:]]*$/p' <<<"$ctl_help")"
	# The COMMANDS section split into entries: a .TP outside .RS/.RE starts
	# one, named by the first word of its heading line. Printed as
	# "@@ NAME" lines, each followed by the entry's text.
	entries=$(awk '
		/^\.SH/ { on = ($0 ~ /^\.SH +"?COMMANDS"?[[:space:]]*$/); next }
		!on { next }
		/^\.RS/ { depth++ }
		/^\.RE/ { if (depth) depth-- }
		/^\.TP/ && depth == 0 { head = 1; next }
		head {
			head = 0
			line = $0
			sub(/^\.[A-Z]+[[:space:]]+/, "", line)
			split(line, w, /[[:space:]]+/)
			print "@@ " w[1]
		}
		{ print }' <<<"$page")
	for c in $cmds; do
		entry=$(awk -v c="$c" '/^@@ / { on = ($2 == c); next } on' <<<"$entries")
		if ! grep -qx "@@ $c" <<<"$entries"; then
			fail_missing "man/xfibctl.8: command $c (xfibctl -h) has no entry in COMMANDS"
			continue
		fi
		help=$("$XFIBCTL" "$c" -h) || {
			echo "FAIL: 'xfibctl $c -h' exited non-zero"
			exit 1
		}
		# Every command takes -h; the page says so once, in DESCRIPTION.
		for o in $(long_opts <<<"$help" | grep -vx -- --help); do
			has_opt "$entry" "$o" ||
				fail_missing "man/xfibctl.8: option $o of command $c (xfibctl $c -h)"
		done
		check_pairs "$entry" "man/xfibctl.8 ($c)" "$(grep -v -- '--help' <<<"$help")"
	done
fi

# ---- rendering ------------------------------------------------------------
render_fail=()
for p in "$MAN_XFIBD" "$MAN_XFIBCTL"; do
	[ -f "$p" ] || continue
	if command -v groff >/dev/null; then
		how="groff -man -ww -z"
		warn=$(LC_ALL=C groff -man -ww -z "$p" 2>&1) || warn+=" (groff failed)"
	elif command -v man >/dev/null; then
		how="man --warnings -l"
		warn=$(LC_ALL=C MANPAGER=cat MANWIDTH=80 man --warnings -l "$p" 2>&1 >/dev/null) ||
			warn+=" (man failed)"
	else
		echo "note: neither groff nor man installed: rendering not checked"
		break
	fi
	if [ -n "$warn" ]; then
		echo "FAIL: $how ${p#"$top"/}:"
		while IFS= read -r line; do
			echo "    $line"
		done <<<"$warn"
		render_fail+=("${p#"$top"/}")
	else
		echo "ok: ${p#"$top"/} renders without warnings ($how)"
	fi
done

echo "checked: xfibd options: $(echo "$xfibd_opts" | tr '\n' ' ')"
echo "checked: xfibctl commands: $(echo "$cmds" | tr '\n' ' ')"
echo "checked: xfibctl options: $(echo "$global_opts" | tr '\n' ' ')"
if [ ${#missing[@]} -gt 0 ] || [ ${#render_fail[@]} -gt 0 ]; then
	[ ${#missing[@]} -gt 0 ] && printf 'missing from the man pages: %s\n' "${missing[@]}"
	[ ${#render_fail[@]} -gt 0 ] && echo "render warnings: ${render_fail[*]}"
	exit 1
fi
echo "PASS"
