#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# prog-insns.sh [-j] [--max N] PROG...: the instructions the verifier
# processed for loaded BPF programs (bpf_prog_info's verified_insns, Linux
# >= 5.16, read by build/prog-insns from tests/lib/prog_insns.c: bpftool
# 7.1 does not print it), with the margin to the verifier's limit of
# 1,000,000. Kernels, and builds of one kernel, differ in how many they
# process for the same program: report it where a program is loaded, so
# that the margin is seen before it is gone.
#
# PROG: `id ID`, `pinned PATH`, `name NAME` (every loaded program of that
# name, through bpftool), or `xdp NETNS DEV`, the XDP program on DEV in
# network namespace NETNS ("" for the current one).
#
# Prints "NAME ID INSNS LIMIT MARGIN" per program (-j: a JSON array of
# {name, id, verified_insns, limit, margin}). Exit 1 if a program is not
# found or the kernel does not report the count, 3 if a count is above
# --max N. PROG_INSNS: the binary (default build/prog-insns, which make test and make bench build).
# C programs that load their own: tests/lib/prog_insns.h.
set -euo pipefail

LIMIT=1000000
top=$(cd "$(dirname "$0")/.." && pwd)
PROG_INSNS=${PROG_INSNS:-${BUILD:-$top/build}/prog-insns}
[ -x "$PROG_INSNS" ] || { echo "prog-insns.sh: $PROG_INSNS not built (make build/prog-insns)" >&2; exit 1; }
json=0
max=""
usage() {
	echo "usage: prog-insns.sh [-j] [--max N] {id ID | pinned PATH | name NAME | xdp NETNS DEV}..." >&2
	exit 2
}

# xdp_prog_id NETNS DEV: the id of the XDP program attached to DEV.
xdp_prog_id() {
	local ns=() id
	[ -z "$1" ] || ns=(-n "$1")
	id=$(ip "${ns[@]}" -d -j link show dev "$2" |
		jq -r '.[0].xdp | (.prog.id // .attached[0].prog.id // empty)' 2>/dev/null) || true
	[ -n "$id" ] || { echo "prog-insns.sh: no XDP program on $2${1:+ in $1}" >&2; exit 1; }
	echo "$id"
}

progs=()
while (($#)); do
	case $1 in
	-j) json=1; shift ;;
	--max) [ $# -ge 2 ] || usage; max=$2; shift 2 ;;
	id | pinned)
		[ $# -ge 2 ] || usage
		progs+=("$2")
		shift 2
		;;
	name)
		[ $# -ge 2 ] || usage
		ids=$(bpftool -j prog show name "$2" 2>/dev/null | jq -r 'if type == "array" then .[] else . end | .id') || true
		[ -n "$ids" ] || { echo "prog-insns.sh: no loaded program named $2" >&2; exit 1; }
		mapfile -t -O "${#progs[@]}" progs <<<"$ids"
		shift 2
		;;
	xdp)
		[ $# -ge 3 ] || usage
		id=$(xdp_prog_id "$2" "$3")
		progs+=("$id")
		shift 3
		;;
	*) usage ;;
	esac
done
((${#progs[@]})) || usage
[ -z "$max" ] || [[ $max =~ ^[0-9]+$ ]] || usage

lines=$("$PROG_INSNS" "${progs[@]}") || exit 1
out=$(jq -s -c --argjson limit "$LIMIT" 'map(. + {limit: $limit,
	margin: (if .verified_insns > 0 then $limit - .verified_insns else null end)})' <<<"$lines")
if [ "$json" = 1 ]; then
	jq -c . <<<"$out"
else
	jq -r '.[] | "\(.name) \(.id) \(.verified_insns // "?") \(.limit) \(.margin // "?")"' <<<"$out"
fi
if jq -e 'any(.[]; .verified_insns == null or .verified_insns == 0)' <<<"$out" >/dev/null; then
	echo "prog-insns.sh: this kernel does not report verified_insns (Linux < 5.16)" >&2
	exit 1
fi
if [ -n "$max" ] && jq -e --argjson max "$max" 'any(.[]; .verified_insns > $max)' <<<"$out" >/dev/null; then
	echo "prog-insns.sh: above $max instructions: $(jq -c --argjson max "$max" \
		'[.[] | select(.verified_insns > $max) | {name, id, verified_insns}]' <<<"$out")" >&2
	exit 3
fi
