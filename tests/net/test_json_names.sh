#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Interface names are arbitrary bytes to the kernel, but xfibctl's JSON and
# Prometheus output must be valid UTF-8: a name that is not is written with
# each offending byte replaced by U+FFFD, and quotes and backslashes are
# escaped. Two router ports get such names (0xff beside a quote and a
# backslash; a valid "é" and a truncated sequence), carry a route, a
# neighbour and the XDP program, and every output naming an interface is
# decoded as strict UTF-8 and parsed by python3 (jq would repair bad bytes
# silently), then checked for the repaired names (flows, with conntrack
# installed to make an entry). Text output keeps the names' bytes as they
# are, as iproute2 does.
set -euo pipefail
# shellcheck source=tests/lib/netns.sh
. "$(dirname "$0")/../lib/netns.sh"
xfib_init
command -v python3 >/dev/null || skip "missing tool: python3 (scripts/install-deps.sh)"

ODD1=$'x\xffy"\\'       # written as x\ufffdy"\  (JSON: "x\ufffdy\"\\")
ODD2=$'\xc3\xa9\xe2\x82' # written as é\ufffd\ufffd
NET1=198.18.200 NET2=198.18.202 DST=198.18.201

topo_create
# ODD1 and ODD2 on the router, their peers in the sink namespace.
ip -n "$RTR" link add "$ODD1" type veth peer name odd1-peer netns "$SNK"
ip -n "$RTR" link add "$ODD2" type veth peer name odd2-peer netns "$SNK"
for p in "$ODD1" "$ODD2"; do
	router_sysctls "$RTR" "$p"
	ip -n "$RTR" link set "$p" up
done
ip -n "$SNK" link set odd1-peer up
ip -n "$SNK" link set odd2-peer up
ip -n "$RTR" addr add "$NET1.1/24" dev "$ODD1"
ip -n "$SNK" addr add "$NET1.2/24" dev odd1-peer
ip -n "$RTR" addr add "$NET2.1/24" dev "$ODD2"
ip -n "$SNK" addr add "$NET2.2/24" dev odd2-peer
ip -n "$RTR" route add "$DST.0/24" via "$NET1.2"
# The gateway's neighbour entry, resolved by the kernel.
ip -n "$RTR" neigh replace "$NET1.2" lladdr "$(mac_of "$SNK" odd1-peer)" dev "$ODD1" nud permanent
xfibd_start
attach_all
rctl attach "$ODD1" "$ODD2" || fail "attach the oddly named ports"

# strict ARGS...: the output of xfibctl ARGS, checked to be UTF-8 and, for
# -j, one JSON document; on stdout, as python3 decoded it.
strict() {
	local out rc=0
	out=$(rctl "$@" | python3 -c '
import json, sys
raw = sys.stdin.buffer.read()
try:
    text = raw.decode("utf-8")
except UnicodeDecodeError as e:
    sys.exit("not UTF-8: %s: %r" % (e, raw[max(e.start - 20, 0):e.end + 20]))
if "-j" in sys.argv[1:]:
    json.loads(text)
sys.stdout.write(text)' "$@") || rc=$?
	((rc == 0)) || fail "xfibctl $*: output not valid UTF-8 or not JSON"
	printf '%s' "$out"
}

# expect NAME PYEXPR ARGS...: PYEXPR holds on d, the JSON of xfibctl ARGS -j;
# o1 and o2 are ODD1 and ODD2 as JSON must write them.
expect() {
	local name=$1 expr=$2 doc
	shift 2
	doc=$(strict "$@" -j)
	python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
o1, o2 = "x\ufffdy\"\\", "\u00e9\ufffd\ufffd"
sys.exit(0 if eval("(" + sys.argv[1] + ")") else 1)' "$expr" <<<"$doc" ||
		fail "$name: not ($expr): $doc"
	log "$name: ok"
}

expect "status" 'sorted(i["name"] for i in d["interfaces"]) == sorted(["r-gen", "r-sink", o1, o2])' status
expect "neighbours" 'any(n["dev"] == o1 and n["address"] == "'"$NET1.2"'" for n in d)' neighbours
expect "nexthops" 'any(n["kind"] == "gateway" and n["dev"] == o1 for n in d) and
	any(n["kind"] == "connected" and n["dev"] == o2 for n in d)' nexthops
expect "nexthops --dev" 'len(d) > 0 and all(n["dev"] == o1 for n in d)' nexthops --dev "$ODD1"
expect "lookup" 'd["egress"]["name"] == o1 and d["kernel"]["dev"] == o1 and
	d["kernel_fib"]["dev"] == o1 and d["iif"] == o2 and d["verdict"] == "match"' \
	lookup "$DST.1" --iif "$ODD2"
expect "verify" 'd["iif"] == o1 and d["mismatches"] == []' verify --iif "$ODD1"
# A conntrack entry from ODD2's net to DST: flows names both egress ports.
if command -v conntrack >/dev/null; then
	ip netns exec "$RTR" conntrack -I -p tcp -s "$NET2.2" -d "$DST.1" --sport 1000 \
		--dport 80 --state ESTABLISHED -u SEEN_REPLY,ASSURED -t 120 >/dev/null 2>&1 ||
		fail "conntrack -I in $RTR"
	expect "flows" 'any(f["original"]["egress"]["name"] == o1 and
		f["reply"]["egress"]["name"] == o2 for f in d)' flows
else
	log "flows: not checked (conntrack not installed: scripts/install-deps.sh)"
fi

# Prometheus labels: UTF-8, with " and \ escaped.
prom=$(strict stats --prometheus)
for want in 'xfib_attached{interface="x'$'\xef\xbf\xbd''y\"\\",mode="native"} 1' \
	'xfib_attached{interface="'$'\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd''",mode="native"} 1'; do
	grep -qxF "$want" <<<"$prom" || fail "stats --prometheus has no line $want: $(grep attached <<<"$prom")"
done
log "stats --prometheus: ok"

# Text output: the names' own bytes.
status=$(rctl status)
grep -qF "$ODD1 (native)" <<<"$status" || fail "status text does not name $ODD1 as it is: $status"
grep -qF "$ODD2 (native)" <<<"$status" || fail "status text does not name $ODD2 as it is: $status"

log "PASS: JSON and Prometheus output are valid UTF-8 for any interface name"
