#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The ranges a routing table compiles to, from `ip -j route show table N`.

tests/lib/tables_ref.py FAMILY < routes.json prints one line per range,
"START PLEN ANSWER", START the range's first address as an integer
(IPv4) or 32 hex digits (IPv6): what
xfibd's table slots (include/xfib/tables.h) must hold, computed here by
longest-prefix match over every elementary interval, not by the daemon's
code. ANSWER tells nexthops apart as xfib does (a gateway and device; a
device; unreachable and prohibit alike; blackhole; local types), and is
"none" where no prefix covers the address or a throw route answers.
Adjacent intervals of the same answer and prefix length are one range.
"""
import ipaddress
import json
import sys


def answer(r):
    t = r.get("type", "unicast")
    if t == "throw":
        return "none"
    if t in ("unreachable", "prohibit"):
        return "unreachable"
    if t in ("local", "broadcast", "anycast", "multicast"):
        return "local"
    if t == "blackhole":
        return "blackhole"
    if "nexthops" in r:
        return "group:" + ",".join(sorted(
            f"{n.get('gateway', '')}@{n.get('dev', '')}" for n in r["nexthops"]))
    return f"{r.get('gateway', '')}@{r.get('dev', '')}"


def main():
    fam = int(sys.argv[1])
    bits = 32 if fam == 4 else 128
    routes = json.load(sys.stdin)
    best = {}  # prefix -> (metric, answer): the lowest metric answers
    for r in routes:
        dst = r["dst"]
        if dst == "default":
            dst = "0.0.0.0/0" if fam == 4 else "::/0"
        net = ipaddress.ip_network(dst, strict=False)
        m = r.get("metric", 0)
        if net not in best or m < best[net][0]:
            best[net] = (m, answer(r))
    cuts = {0}
    for net in best:
        cuts.add(int(net.network_address))
        end = int(net.broadcast_address) + 1
        if end < 1 << bits:
            cuts.add(end)
    out = []
    for c in sorted(cuts):
        plen, ans = -1, "none"
        for net, (_, a) in best.items():
            if net.prefixlen > plen and \
               int(net.network_address) <= c <= int(net.broadcast_address):
                plen, ans = net.prefixlen, a
        plen = max(plen, 0)
        if out and out[-1][1] == plen and out[-1][2] == ans:
            continue
        out.append((c, plen, ans))
    for c, plen, ans in out:
        print(c if fam == 4 else "%032x" % c, plen, ans)


if __name__ == "__main__":
    main()
