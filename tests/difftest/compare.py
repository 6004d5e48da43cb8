# SPDX-License-Identifier: GPL-2.0-only
"""Normalises captured frames and compares two runs.

Each output is keyed by the tag it carries (the frame that caused it;
ICMP errors quote it) or, without one, by nothing: untagged outputs are
compared as one multiset per run. Two runs are equal when every key has
the same multiset of (capture point, normalised frame) on both sides, so
arrival order and timing play no part.

What is normalised, and why:
- the router's own neighbour, MLD, IGMP and redirect traffic is dropped
  (timers, link events and rate limits the test cannot line up between
  runs; attaching an XDP program makes the router send MLD reports);
- ICMP errors for unreachable, prohibited and missing IPv4 routes sent to
  an address other than the per-frame sources: the kernel limits them per
  source address (net.ipv4.route.error_cost and error_burst, global, not
  per namespace), so how many of them come out depends on timing;
- in packets the router sends itself (source: one of its addresses, or,
  in the NAT run, an address it translates to), the IPv4 identification
  and header checksum and the IPv6 flow label; not in TCP and UDP packets
  it forwards with such a source (source NAT), which carry a tag (or are
  TCP segments without RST: the router's own are resets);
- in the NAT run, the identification of IPv6 fragments: conntrack
  reassembles fragments and the router fragments them again, each time
  with a new identification;
- IPv4 timestamp options carry the router's clock: their data bytes (in
  packets and in packets quoted by ICMP errors) and the checksums over
  them;
- multipath: a frame to a multipath destination may leave by either
  path; its capture point becomes "sink*" and its MACs a placeholder when
  they are the right pair for the port it left by.
"""
import collections
import ipaddress
import struct

import pkt

VOLATILE_ICMP6 = {130, 131, 132, 133, 134, 135, 136, 137, 143}


def _l3(b):
    """(EtherType, offset of the network header)."""
    off = 12
    etype = struct.unpack_from('!H', b, off)[0] if len(b) >= 14 else 0
    while etype in (0x8100, 0x88a8, 0x9100) and len(b) >= off + 6:
        off += 4
        etype = struct.unpack_from('!H', b, off)[0]
    return etype, off + 2


def _ts_options(b, l3, ihl):
    """Zeroes the data of IPv4 timestamp options; True if any."""
    i, end, hit = l3 + 20, min(l3 + ihl * 4, len(b)), False
    while i < end:
        t = b[i]
        if t == 0:
            break
        if t == 1:
            i += 1
            continue
        if i + 1 >= end or b[i + 1] < 2:
            break
        ln = b[i + 1]
        if t == 68 and ln >= 4:
            b[i + 4:min(i + ln, end)] = bytes(min(i + ln, end) - (i + 4))
            hit = True
        i += ln
    return hit


def _forwarded(b, proto, l4):
    """A TCP or UDP packet (its transport header at l4, or None if it is
    not in the packet) with one of the router's addresses as its source
    was forwarded with source NAT, not made by the router: it carries a
    tag, or it is a TCP segment other than a reset."""
    if proto not in (6, 17):
        return False
    if pkt.find_tag(bytes(b)) is not None:
        return True
    return proto == 6 and l4 is not None and len(b) > l4 + 13 and \
        not b[l4 + 13] & 0x04


def _norm4(t, b, l3):
    """Normalises the IPv4 packet at l3; False to drop the frame."""
    if len(b) < l3 + 20:
        return True
    ihl = b[l3] & 15
    src = bytes(b[l3 + 12:l3 + 16])
    proto = b[l3 + 9]
    own = src in t.router
    if ihl > 5 and _ts_options(b, l3, ihl):
        b[l3 + 10:l3 + 12] = b'\0\0'
    first = not struct.unpack_from('!H', b, l3 + 6)[0] & 0x1fff
    if not own or _forwarded(b, proto, l3 + ihl * 4 if first else None):
        return True
    if proto == 2:
        return False
    b[l3 + 4:l3 + 6] = b'\0\0'
    b[l3 + 10:l3 + 12] = b'\0\0'
    icmp = l3 + ihl * 4
    if proto != 1 or len(b) < icmp + 8:
        return True
    typ = b[icmp]
    if typ == 5:
        return False
    if typ == 3 and b[icmp + 1] in (0, 1, 13) and \
            ipaddress.ip_address(bytes(b[l3 + 16:l3 + 20])) not in t.unique4:
        return False
    if typ in (3, 4, 11, 12) and len(b) >= icmp + 28:
        inner = icmp + 8
        iihl = b[inner] & 15
        if iihl > 5 and _ts_options(b, inner, iihl):
            b[inner + 10:inner + 12] = b'\0\0'
            b[icmp + 2:icmp + 4] = b'\0\0'
    if typ == 14 and len(b) >= icmp + 20:
        b[icmp + 2:icmp + 4] = b'\0\0'
        b[icmp + 12:icmp + 20] = bytes(8)
    return True


def _frag6_ident(b, l3):
    """Zeroes the identification of an IPv6 fragment header."""
    nh, off = b[l3 + 6], l3 + 40
    while nh in (0, 43, 60) and len(b) > off + 1:
        nh, off = b[off], off + (b[off + 1] + 1) * 8
    if nh == 44 and len(b) >= off + 8:
        b[off + 4:off + 8] = bytes(4)


def _norm6(t, b, l3):
    if len(b) < l3 + 40:
        return True
    if t.nat:
        _frag6_ident(b, l3)
    src = bytes(b[l3 + 8:l3 + 24])
    if src not in t.router and not src.startswith(b'\xfe\x80'):
        return True
    nh, off = b[l3 + 6], l3 + 40
    if nh == 0 and len(b) > off + 1:
        nh, off = b[off], off + (b[off + 1] + 1) * 8
    if nh == 58 and len(b) > off and b[off] in VOLATILE_ICMP6:
        return False
    fwd = pkt.find_tag(bytes(b)) is not None if nh == 44 else \
        _forwarded(b, nh, off)
    if src in t.router and not fwd:
        b[l3 + 1] &= 0xf0
        b[l3 + 2:l3 + 4] = b'\0\0'
    return True


def _multipath(t, point, b, etype, l3):
    if point == 'gen':
        return point
    if etype == 0x0800 and len(b) >= l3 + 20:
        dst = ipaddress.ip_address(bytes(b[l3 + 16:l3 + 20]))
    elif etype == 0x86dd and len(b) >= l3 + 40:
        dst = ipaddress.ip_address(bytes(b[l3 + 24:l3 + 40]))
    else:
        return point
    if not any(dst in n for n in t.mpath):
        return point
    pair = (bytes(b[0:6]), bytes(b[6:12]))
    for p in ('sink', 'sink2'):
        if point == p and pair == (t.mac[p], t.mac['r_' + p]):
            b[0:12] = bytes(12)
            return 'sink*'
    return point


def normalise(t, point, frame):
    """(point, normalised frame), or None for traffic not compared."""
    b = bytearray(frame)
    etype, l3 = _l3(b)
    if etype == 0x0806:
        return None
    if etype == 0x0800 and len(b) > l3 and b[l3] >> 4 == 4:
        if not _norm4(t, b, l3):
            return None
    elif etype == 0x86dd and len(b) > l3 and b[l3] >> 4 == 6:
        if not _norm6(t, b, l3):
            return None
    point = _multipath(t, point, b, etype, l3)
    return point, bytes(b)


def index(t, outputs):
    """key -> Counter of (point, normalised frame); key is the frame
    index of the tag found, or None."""
    by = collections.defaultdict(collections.Counter)
    for point, frame in outputs:
        n = normalise(t, point, frame)
        if n is not None:
            by[pkt.find_tag(frame)][n] += 1
    return by


def differences(a, b):
    """Keys whose outputs differ between the indexed runs a and b."""
    return sorted((k for k in set(a) | set(b) if a.get(k) != b.get(k)),
                  key=lambda k: -1 if k is None else k)


def points(by):
    c = collections.Counter()
    for outs in by.values():
        for (p, _), n in outs.items():
            c[p] += n
    return dict(sorted(c.items()))
