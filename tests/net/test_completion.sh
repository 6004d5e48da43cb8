#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Bash completion of xfibctl (scripts/completion/xfibctl), with Debian's
# bash-completion, in a router namespace with xfibd running and one port
# attached. Each case completes a command line as bash would (the words,
# the cursor at the end) and compares the candidates with what they must
# be, taken from elsewhere than the completion: the commands and options
# from xfibctl's help (parsed here its own way), the interfaces from ip
# link, the attached port from status, the algorithm names from
# ctl/lib/algo_names.c. Cases: commands, a command prefix, global
# options, every command's long options, option values (native|generic,
# ipv4|ipv6, interfaces), attach's and detach's interfaces (detach: the
# attached ones, with the pin directory given on the line), algo's
# families and each family's algorithms, nothing for an address.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init
BASH_COMPLETION=${BASH_COMPLETION:-/usr/share/bash-completion/bash_completion}
if [ ! -r "$BASH_COMPLETION" ]; then
	"$XFIB_TOP/scripts/install-deps.sh" >/dev/null 2>&1 || true
	[ -r "$BASH_COMPLETION" ] || skip "bash-completion not installed and cannot be (scripts/install-deps.sh)"
fi
COMPLETION="$XFIB_TOP/scripts/completion/xfibctl"
bash -n "$COMPLETION" || fail "$COMPLETION: syntax"

topo_create 0
xfibd_start
rctl attach "$R_GEN" || fail "attach $R_GEN"

# The completion runs `xfibctl` as typed: the test's copy, first in PATH.
cat >"$XFIB_TMP/complete.bash" <<'EOF'
# complete LINE: the candidates bash-completion offers for LINE (the
# cursor at its end), sorted, on one line. Words are split at spaces, and
# at "=" after an option, as bash does.
. "$BASH_COMPLETION"
. "$COMPLETION"
complete_line() {
	local line=$1 w
	COMP_WORDS=()
	for w in $line; do
		if [[ $w == --*=* ]]; then
			COMP_WORDS+=("${w%%=*}" "=" "${w#*=}")
		else
			COMP_WORDS+=("$w")
		fi
	done
	# After "=" bash's current word is the "=" itself.
	[[ $line == *" " ]] && COMP_WORDS+=("")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMP_LINE=$line
	COMP_POINT=${#line}
	COMPREPLY=()
	_xfibctl xfibctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
	printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
	echo
}
while IFS= read -r line; do
	complete_line "$line"
done
EOF

# comp_lines LINE...: the candidates for each LINE, one line each.
comp_lines() {
	printf '%s\n' "$@" | in_ns "$RTR" env PATH="$XFIB_TMP/bin:$PATH" \
		BASH_COMPLETION="$BASH_COMPLETION" COMPLETION="$COMPLETION" \
		bash --norc --noprofile "$XFIB_TMP/complete.bash"
}

# expect LINE WANT: the candidates for LINE are exactly WANT (any order).
NCASES=0
expect() {
	local got want
	got=$(comp_lines "$1")
	want=$(tr ' ' '\n' <<<"$2" | sed '/^$/d' | sort | tr '\n' ' ' | sed 's/ $//')
	[ "$got" = "$want" ] || fail "completing '$1': got '$got', want '$want'"
	NCASES=$((NCASES + 1))
}

# What the candidates must be, from other sources.
help=$("$XFIBCTL" -h)
cmds=$(awk '/^Commands:/ { on = 1; next } on && /^[[:space:]]*$/ { exit } on { print $1 }' <<<"$help")
[ "$(wc -l <<<"$cmds")" -ge 5 ] || fail "xfibctl -h lists $(wc -l <<<"$cmds") commands"
# Options of a help text: "-x, --long" or "--long" at the start of a line.
opts_of() {
	sed -n '/^Options:/,/^[[:space:]]*$/p' <<<"$1" |
		grep -oE -- '^[[:space:]]+(-[a-zA-Z0-9], )?--[a-z][a-z0-9-]*' | tr -d ',' | tr -s ' \n' '\n' | sed '/^$/d'
}
ifaces=$(ip -n "$RTR" -j link show | jq -r '.[].ifname')
# ctl/lib/algo_names.c: { "name", XFIB_V4 } lines.
algos() {
	sed -nE "s/.*\\{ \"([a-z0-9_]+)\", XFIB_V$1 \\}.*/\\1/p" "$XFIB_TOP/ctl/lib/algo_names.c"
}
{ [ -n "$(algos 4)" ] && [ -n "$(algos 6)" ]; } || fail "no algorithm names in ctl/lib/algo_names.c"

expect "xfibctl " "$cmds"
expect "xfibctl at" "attach"
expect "xfibctl st" "$(grep '^st' <<<"$cmds")"
expect "xfibctl -" "$(opts_of "$help")"
expect "xfibctl --" "$(opts_of "$help" | grep -- '^--')"
expect "xfibctl -p $PIN -j st" "$(grep '^st' <<<"$cmds")"
for c in $cmds; do
	expect "xfibctl $c --" "$(opts_of "$("$XFIBCTL" "$c" -h)" | grep -- '^--')"
done
expect "xfibctl attach -" "$(opts_of "$("$XFIBCTL" attach -h)")"
expect "xfibctl attach " "$ifaces"
expect "xfibctl attach r-" "$(grep '^r-' <<<"$ifaces")"
expect "xfibctl attach $R_GEN " "$ifaces"
expect "xfibctl attach --mode " "native generic"
expect "xfibctl attach --mode=" "native generic"
expect "xfibctl attach -m g" "generic"
expect "xfibctl -p $PIN detach " "$R_GEN"
expect "xfibctl --pin-dir=$PIN detach " "$R_GEN"
# Without the pin directory xfibctl finds no dataplane here: every link.
expect "xfibctl detach " "$ifaces"
expect "xfibctl algo " "ipv4 ipv6"
expect "xfibctl algo ipv4 " "$(algos 4) auto"
expect "xfibctl -j algo ipv6 " "$(algos 6) auto"
expect "xfibctl algo ipv6 t" "$(algos 6 | grep '^t')"
expect "xfibctl algo ipv4 dir24_8 " ""
expect "xfibctl neigh -f " "ipv4 ipv6"
expect "xfibctl nexthops --dev " "$ifaces"
expect "xfibctl lookup -i " "$ifaces"
expect "xfibctl lookup " ""
expect "xfibctl stats -i " ""
# Digits are short options too.
expect "xfibctl rules -" "-4 --ipv4 -6 --ipv6 -j --json -h --help"
expect "xfibctl flows -" "-4 --ipv4 -6 --ipv6 -j --json -h --help"
log "PASS: $NCASES completions of xfibctl command lines"
