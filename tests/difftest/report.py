# SPDX-License-Identifier: GPL-2.0-only
"""Human-readable descriptions of frames and of differences between runs."""
import collections
import ipaddress
import struct

import compare

PROTO = {1: 'ICMP', 6: 'TCP', 17: 'UDP', 58: 'ICMPv6'}


def _l4(proto, b, off):
    name = PROTO.get(proto, 'proto %d' % proto)
    if proto in (6, 17) and len(b) >= off + 4:
        sp, dp = struct.unpack_from('!HH', b, off)
        name += ' %d>%d' % (sp, dp)
        if proto == 6 and len(b) >= off + 14:
            name += ' flags %02x' % b[off + 13]
    elif proto in (1, 58) and len(b) >= off + 2:
        name += ' type %d code %d' % (b[off], b[off + 1])
    return name


def summary(frame):
    """One line: MACs, tags, network and transport header."""
    b = frame
    if len(b) < 14:
        return '%dB runt' % len(b)
    s = '%dB %s>%s' % (len(b), b[6:12].hex(':'), b[0:6].hex(':'))
    etype, l3 = compare._l3(b)
    if l3 > 14:
        s += ' tags ' + b[12:l3 - 2].hex()
    if etype == 0x0800 and len(b) >= l3 + 20:
        ihl = b[l3] & 15
        tot, ident, frag, ttl, proto = struct.unpack_from('!HHHBB', b, l3 + 2)
        s += ' IPv4 %s>%s ttl %d len %d id %d frag %04x ihl %d %s' % (
            ipaddress.ip_address(b[l3 + 12:l3 + 16]),
            ipaddress.ip_address(b[l3 + 16:l3 + 20]), ttl, tot, ident, frag,
            ihl, _l4(proto, b, l3 + ihl * 4))
    elif etype == 0x86dd and len(b) >= l3 + 40:
        plen, nh, hlim = struct.unpack_from('!HBB', b, l3 + 4)
        s += ' IPv6 %s>%s hlim %d plen %d %s' % (
            ipaddress.ip_address(b[l3 + 8:l3 + 24]),
            ipaddress.ip_address(b[l3 + 24:l3 + 40]), hlim, plen,
            _l4(nh, b, l3 + 40))
    else:
        s += ' type %04x' % etype
    return s


def hexdiff(a, b, rows=6):
    out, shown = [], 0
    for row in range(0, max(len(a), len(b)), 16):
        ra, rb = a[row:row + 16], b[row:row + 16]
        if ra == rb:
            continue
        shown += 1
        if shown > rows:
            out.append('        ...')
            break
        out.append('        %04x  %s' % (row, ra.hex(' ')))
        out.append('              %s' % rb.hex(' '))
    return out


def _outputs(name, outs, limit=12):
    lines = []
    if not outs:
        lines.append('    %-8s nothing' % name)
    items = sorted(outs.items())
    for (point, frame), n in items[:limit]:
        lines.append('    %-8s %-6s %s%s' % (name, point, summary(frame),
                                           ' (x%d)' % n if n > 1 else ''))
    if len(items) > limit:
        lines.append('    %-8s ... and %d more' % (name, len(items) - limit))
    return lines


def difference(key, desc, a, b, names):
    """Lines describing how key's outputs differ between runs a and b."""
    none = collections.Counter()
    oa, ob = a.get(key, none), b.get(key, none)
    head = 'untagged outputs' if key is None else \
        'frame %d: %s' % (key, desc.get(key, '?'))
    lines = [head]
    only_a, only_b = oa - ob, ob - oa
    lines += _outputs(names[0], only_a)
    lines += _outputs(names[1], only_b)
    if len(only_a) == 1 and len(only_b) == 1:
        (pa, fa), (pb, fb) = next(iter(only_a)), next(iter(only_b))
        lines += hexdiff(fa, fb)
    return lines


def kind(desc):
    """A coarse class of a frame description, to count differences by."""
    words = desc.split()
    drop = {'fam', 'dst', 'l4', 'size', 'iplen'}
    # The NAT run's frames (natcases.py): by flow kind and direction.
    nat = [w for w in words if w.startswith('nat=')]
    if nat:
        drop |= {'src', 'port', 'nat', 'fl', 'sport', 'dport'}
    keys = sorted({w.split('=')[0] for w in words[1:] if '=' in w} - drop)
    src = nat or [w for w in words if w.startswith('src=')]
    parts = [words[0]] + keys + src + (['mutated'] if 'mutated' in words
                                       else [])
    return ' '.join(parts)
