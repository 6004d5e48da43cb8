#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Generate the benchmarks' nested and clustered tables as `ip -batch` lines.

  gen-bench-table.py nested4 --count N --gw GW@DEV,... [--seed S]
                     [--base 198.19.0.0/16] [--ndst N]
  gen-bench-table.py clustered6 --count N --gw GW@DEV,... [--seed S]
                     [--base 2000::/3 | 2001:db8:8000::/33] [--ndst N]

nested4: N prefixes inside BASE (a /16), /18 to /32, most of them long
(a /16 holds only 256 /24s), placed at random, so that they nest
densely: every address of the /16 is one of fwd.sh's destinations at
NDST=65536, and most prefixes are the longest match of some of them.

clustered6: N IPv6 prefixes shaped like a real table, sparse and
clustered: a few hundred allocations (/20 to /32 under 2000::/3; under a
longer BASE, 3 to 11 bits longer than BASE), each announced, with /32s
(or, under a /32 or longer allocation, prefixes 4 bits longer) under
some, many /48s in runs of neighbours under them, /56s, and /64s and
/128s next to each other under some /48s. Allocation sizes follow a
Zipf law: a few allocations hold most of the table. Under
2001:db8:8000::/33 (fwd.sh's IPv6 destinations: 2 per /48, at ::/64 and
:8000::/64 of each), the /64s and /128s sit on those destinations, so
that the destinations reach them.

The output depends only on the arguments (random.Random(SEED)). With
--ndst, the number of distinct prefixes that are the longest match of
fwd.sh's NDST destinations (spread evenly over BASE, as
tests/bench/gen.bpf.c sends them) is printed on stderr.
"""

import argparse
import ipaddress
import random
import sys


def gateways(spec):
    gws = []
    for item in spec.split(","):
        if item:
            gw, _, dev = item.partition("@")
            ipaddress.ip_address(gw)
            gws.append((gw, dev))
    if not gws:
        sys.exit("gen-bench-table: --gw names no gateway")
    return gws


# (length, weight) of nested4; counts are capped at 80% of what fits.
NESTED4 = [(18, 2), (20, 8), (22, 32), (23, 64), (24, 200), (25, 300),
           (26, 700), (27, 1500), (28, 3000), (29, 5000), (30, 5000),
           (31, 1000), (32, 3200)]


def nested4(count, base, rnd):
    bits = 32
    blen = base.prefixlen
    total = sum(w for _, w in NESTED4)
    plan = []
    for length, w in NESTED4:
        cap = int(0.8 * (1 << (length - blen)))
        plan.append([length, min(cap, count * w // total)])
    # The rest in /32s (capacity enough for any count a /16 can hold).
    plan[-1][1] += count - sum(n for _, n in plan)
    if plan[-1][1] > (1 << (bits - blen)) // 2:
        sys.exit("gen-bench-table: %d prefixes do not fit in %s" % (count, base))
    seen = set()
    out = []
    b = int(base.network_address)
    for length, n in plan:
        host = bits - length
        while n > 0:
            addr = b | (rnd.getrandbits(length - blen) << host)
            if (addr, length) in seen:
                continue
            seen.add((addr, length))
            out.append((addr, length))
            n -= 1
    rnd.shuffle(out)
    return out


def add(seen, out, addr, length, count):
    if len(out) >= count or (addr, length) in seen:
        return False
    seen.add((addr, length))
    out.append((addr, length))
    return True


def sub(parent, plen, length, index):
    """The index-th prefix of `length` inside parent/plen."""
    return parent | ((index % (1 << (length - plen))) << (128 - length))


def site(seen, out, count, s48, grid, rnd):
    """A /48's more specifics: /56s, /64s and /128s next to each other."""
    r = rnd.random()
    if r < 0.15:
        first = rnd.getrandbits(8)
        for i in range(rnd.randint(1, 4)):
            add(seen, out, sub(s48, 48, 56, first + i), 56, count)
    if r < (0.5 if grid else 0.8):
        return
    # /64s: neighbours (on the destinations under a grid base).
    k = rnd.randint(1, 4)
    first = 0 if grid else rnd.getrandbits(16)
    for i in range(k):
        idx = (i % 2) * 0x8000 if grid else first + i
        p64 = sub(s48, 48, 64, idx)
        add(seen, out, p64, 64, count)
        if rnd.random() < 0.4:
            # /128s: the first hosts of the /64 (the destination itself
            # under a grid base).
            for h in range(1 if grid else rnd.randint(1, 3)):
                add(seen, out, p64 | h, 128, count)


def clustered6(count, base, rnd):
    blen = base.prefixlen
    b = int(base.network_address)
    lo, hi = (20, 32) if blen < 20 else (blen + 3, blen + 11)
    grid = blen > 20
    nalloc = max(8, min(400, count // 60))
    allocs = []
    seen = set()
    out = []
    while len(allocs) < nalloc:
        length = rnd.randint(lo, hi)
        addr = b | (rnd.getrandbits(length - blen) << (128 - length))
        if add(seen, out, addr, length, count):
            allocs.append((addr, length))
    weights = [1.0 / (i + 1) for i in range(nalloc)]
    stall = 0
    while len(out) < count and stall < 1000:
        before = len(out)
        addr, alen = rnd.choices(allocs, weights)[0]
        # A /32 (or a prefix 4 bits longer) under the allocation, or the
        # allocation itself.
        mlen = 32 if alen < 32 else min(alen + 4, 47)
        mid = sub(addr, alen, mlen, rnd.getrandbits(mlen - alen))
        if rnd.random() < 0.3:
            add(seen, out, mid, mlen, count)
        else:
            mid, mlen = addr, alen
        # A run of neighbouring /48s.
        first = rnd.getrandbits(48 - mlen)
        for i in range(rnd.randint(1, 24)):
            s48 = sub(mid, mlen, 48, first + i)
            if add(seen, out, s48, 48, count) or (s48, 48) in seen:
                site(seen, out, count, s48, grid, rnd)
        stall = stall + 1 if len(out) == before else 0
    if len(out) < count:
        sys.exit("gen-bench-table: cannot place %d prefixes in %s" % (count, base))
    rnd.shuffle(out)
    return out


def distinct_matches(pfx, base, ndst):
    """Prefixes that are the longest match of fwd.sh's ndst destinations."""
    bits = base.max_prefixlen
    by_len = {}
    for addr, length in pfx:
        by_len.setdefault(length, set()).add(addr)
    lengths = sorted(by_len, reverse=True)
    b = int(base.network_address)
    if bits == 32:
        step = (1 << (32 - base.prefixlen)) // ndst
        dsts = [b + i * step for i in range(ndst)]
    else:
        # bits 32..63, as gen.bpf.c adds i * stride to that word.
        step = (1 << (64 - base.prefixlen)) // ndst
        dsts = [b + ((i * step) << 64) for i in range(ndst)]
    hit = set()
    for d in dsts:
        for length in lengths:
            a = d & ~((1 << (bits - length)) - 1)
            if a in by_len[length]:
                hit.add((a, length))
                break
    return len(hit)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kind", choices=("nested4", "clustered6"))
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--gw", required=True, help="GW@DEV,...")
    ap.add_argument("--base", default="")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ndst", type=int, default=0)
    args = ap.parse_args()
    rnd = random.Random(args.seed)
    if args.kind == "nested4":
        base = ipaddress.ip_network(args.base or "198.19.0.0/16")
        pfx = nested4(args.count, base, rnd)
    else:
        base = ipaddress.ip_network(args.base or "2000::/3")
        pfx = clustered6(args.count, base, rnd)
    gws = gateways(args.gw)
    w = sys.stdout.write
    net = ipaddress.ip_network
    for addr, length in pfx:
        gw, dev = rnd.choice(gws)
        p = net((addr, length))
        w("route add %s via %s%s\n" % (p, gw, " dev " + dev if dev else ""))
    if args.ndst:
        sys.stderr.write("%s: %d prefixes in %s; %d of them the longest match of %d destinations\n" % (
            args.kind, len(pfx), base, distinct_matches(pfx, base, args.ndst), args.ndst))


if __name__ == "__main__":
    main()
