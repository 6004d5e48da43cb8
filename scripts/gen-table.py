#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Write an `ip -batch` file with an Internet-shaped routing table.

The prefix-length mix follows public full-table statistics: IPv4 about 55%
/24, 4% longer than /24, 7% /16 or shorter, the rest /17-/23, with more
specifics nested inside aggregates; IPv6 about 46% /48, many /32, some
/29-/44, /64 and /128, mostly nested in /32 allocations. Nexthops are
spread over the gateways given (each "GW" or "GW@DEV"), the first ones
weighted more, as real tables concentrate on a few upstreams.

Prefixes avoid special-purpose space and the test ranges (198.18.0.0/15,
2001:db8::/32), so a test's own connected and static routes never collide
with generated ones. Traffic must still go only to test addresses: the
table exists to load the FIB, not to be a destination.

Deterministic for a given --seed.

  gen-table.py --v4 1000000 --v6 250000 \\
      --gw4 198.18.2.2@r-sink,198.18.3.2@r-sink2 \\
      --gw6 2001:db8:2::2@r-sink,2001:db8:3::2@r-sink2 > table.batch
  ip -batch table.batch
"""

import argparse
import ipaddress
import random
import socket
import sys

# IPv4 space never generated: this network, private, loopback, link-local,
# CGN, test ranges, multicast, reserved.
V4_EXCLUDE = [ipaddress.ip_network(n) for n in (
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8",
    "169.254.0.0/16", "172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24",
    "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24",
    "224.0.0.0/3")]
V6_EXCLUDE = [ipaddress.ip_network("2001:db8::/32")]

# (length, weight) for IPv4: aggregates first, then more specifics.
V4_LENGTHS = [(8, 0.02), (9, 0.02), (10, 0.05), (11, 0.1), (12, 0.3),
              (13, 0.6), (14, 1.1), (15, 1.8), (16, 3.0), (17, 1.6),
              (18, 2.6), (19, 4.8), (20, 5.5), (21, 5.7), (22, 9.5),
              (23, 9.2), (24, 55.0), (25, 0.9), (26, 0.8), (27, 0.6),
              (28, 0.5), (29, 0.5), (30, 0.3), (31, 0.1), (32, 0.3)]
V6_LENGTHS = [(29, 1.5), (30, 0.5), (31, 0.5), (32, 14.0), (33, 0.8),
              (34, 0.6), (35, 0.6), (36, 2.0), (37, 0.4), (38, 0.6),
              (39, 0.4), (40, 5.0), (41, 0.6), (42, 1.0), (43, 0.5),
              (44, 6.0), (45, 1.5), (46, 2.0), (47, 2.5), (48, 46.0),
              (52, 0.5), (56, 3.0), (60, 0.5), (64, 6.0), (128, 1.0)]


# Inside a /16 there are only 256 /24s: the test prefixes lean longer.
V4_TEST_LENGTHS = [(22, 1), (23, 2), (24, 15), (25, 10), (26, 12), (27, 12),
                   (28, 14), (29, 14), (30, 10), (32, 10)]

V6_TEST_LENGTHS = [(40, 5), (44, 6), (48, 46), (52, 2), (56, 8), (60, 2),
                   (64, 20), (128, 11)]


def intervals(nets):
    return [(int(n.network_address), int(n.broadcast_address)) for n in nets]


def pick_length(lengths, rnd):
    total = sum(w for _, w in lengths)
    x = rnd.random() * total
    for length, w in lengths:
        x -= w
        if x <= 0:
            return length
    return lengths[-1][0]


def generate(count, bits, lengths, base, base_len, exclude, nest, rnd):
    """count unique (address, length) pairs below base/base_len. A share
    `nest` of each length is placed inside an already generated shorter
    prefix."""
    seen = set()
    parents = {}      # length -> sample of addresses of that length
    out = []
    plan = sorted(pick_length(lengths, rnd) for _ in range(count))
    excl = intervals(exclude)
    shorter = []      # lengths generated so far, all shorter than the current
    cur = None
    tries = 0
    for length in plan:
        if length != cur:
            shorter = sorted(parents)
            cur = length
        host_bits = bits - length
        while True:
            tries += 1
            if tries > count * 50:
                sys.exit("gen-table: cannot place %d prefixes; lower the count" % count)
            if shorter and rnd.random() < nest:
                plen = rnd.choice(shorter)
                addr = rnd.choice(parents[plen])
                addr |= rnd.getrandbits(length - plen) << host_bits if length > plen else 0
            else:
                addr = base | (rnd.getrandbits(length - base_len) << host_bits)
            key = (addr, length)
            if key in seen:
                continue
            last = addr | ((1 << host_bits) - 1)
            if any(addr <= hi and last >= lo for lo, hi in excl):
                continue
            seen.add(key)
            # A bounded sample of parents per length: enough nesting,
            # constant memory.
            sample = parents.setdefault(length, [])
            if len(sample) < 50000:
                sample.append(addr)
            out.append(key)
            break
    rnd.shuffle(out)
    return out


def fmt4(addr, length):
    return "%s/%d" % (socket.inet_ntop(socket.AF_INET, addr.to_bytes(4, "big")), length)


def fmt6(addr, length):
    return "%s/%d" % (socket.inet_ntop(socket.AF_INET6, addr.to_bytes(16, "big")), length)


def gateways(spec):
    gws = []
    for item in spec.split(","):
        if not item:
            continue
        gw, _, dev = item.partition("@")
        ipaddress.ip_address(gw)
        gws.append((gw, dev))
    return gws


def zipf(n):
    # Upstream 1 carries most of the table, as on real routers.
    return [1.0 / (i + 1) for i in range(n)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--v4", type=int, default=0, help="IPv4 prefixes")
    ap.add_argument("--v6", type=int, default=0, help="IPv6 prefixes")
    ap.add_argument("--test4", type=int, default=0,
                    help="extra IPv4 prefixes inside 198.19.0.0/16")
    ap.add_argument("--test6", type=int, default=0,
                    help="extra IPv6 prefixes inside 2001:db8:8000::/33")
    ap.add_argument("--gw4", default="", help="IPv4 gateways: GW[@DEV],...")
    ap.add_argument("--gw6", default="", help="IPv6 gateways: GW[@DEV],...")
    ap.add_argument("--table", default="", help="routing table (default main)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    if (args.v4 or args.test4) and not args.gw4 or \
       (args.v6 or args.test6) and not args.gw6:
        ap.error("--gw4/--gw6 are needed for the prefixes asked for")

    rnd = random.Random(args.seed)
    table = " table %s" % args.table if args.table else ""
    v4 = generate(args.v4, 32, V4_LENGTHS, 0, 0, V4_EXCLUDE, 0.45, rnd)
    v4 += generate(args.test4, 32, V4_TEST_LENGTHS, 0xc6130000, 16, [], 0.6, rnd)
    # Global unicast, 2000::/3.
    v6 = generate(args.v6, 128, V6_LENGTHS, 0x2 << 124, 3, V6_EXCLUDE, 0.75, rnd)
    v6 += generate(args.test6, 128, V6_TEST_LENGTHS,
                   0x20010db8800000000000000000000000, 33, [], 0.6, rnd)
    w = sys.stdout.write
    for nets, spec, fmt in ((v4, args.gw4, fmt4), (v6, args.gw6, fmt6)):
        if not nets:
            continue
        gws = gateways(spec)
        weights = zipf(len(gws))
        for addr, length in nets:
            gw, dev = rnd.choices(gws, weights)[0]
            w("route add %s via %s%s%s\n" % (fmt(addr, length), gw,
                                             " dev " + dev if dev else "", table))


if __name__ == "__main__":
    main()
