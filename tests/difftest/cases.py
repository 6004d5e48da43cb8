# SPDX-License-Identifier: GPL-2.0-only
"""The frames of a differential run.

Frame i < len(crafted(t)) is the i-th crafted case: every destination and
source class, every TTL corner, MTU boundaries, checksums, IPv4 options,
length fields, trailing bytes, fragments, IPv6 extension headers,
jumbograms, MACs, VLAN tags, EtherTypes and truncation at every header
boundary. Later frames are random: a random combination of the same
dimensions, then, for most, random changes to the header bytes. Frame i
depends only on (seed, i), so a run is reproducible and any frame can be
rebuilt on its own.
"""
import random

import build

L4 = ('udp', 'tcp', 'syn', 'icmp', 'icmperr', 'raw253')
DST_COMMON = ('sink', 'sink2', 'sink3', 'routed', 'routed3', 'mpath', 'mtu',
              'blackhole', 'unreach', 'prohibit', 'throw', 'unrouted',
              'local', 'local2', 'local3', 'hairpin', 'remote', 'noneigh',
              'noneigh_gen')
DST = {4: DST_COMMON + ('bcast', 'bcast_gen', 'netaddr', 'lbcast', 'mcast',
                        'mcast2', 'loop', 'zero', 'zeronet', 'classe', 'lla'),
       6: DST_COMMON + ('anycast', 'anycast_gen', 'mcast', 'mcast2',
                        'mcast_sol', 'loop', 'zero', 'v4mapped', 'v4compat',
                        'lla', 'ula', 'nat64', 'sitelocal', 'teredo',
                        'sixto4')}
SRC = {4: ('gen', 'remote', 'noneigh', 'zero', 'lbcast', 'mcast', 'loop',
           'local', 'local2', 'bcast', 'classe', 'lla', 'sink', 'unrouted',
           'zeronet'),
       6: ('gen', 'remote', 'noneigh', 'zero', 'mcast', 'loop', 'local',
           'local2', 'anycast', 'lla', 'v4mapped', 'sink', 'unrouted',
           'ula', 'sitelocal')}
# Destinations the main dimensions are crossed with.
KEY_DST = ('routed', 'sink', 'mpath', 'local', 'unrouted')
TTLS = (0, 1, 2, 3, 64, 254, 255)
TAGS = {
    'prio': [(0x8100, 0x0000)], 'prio-pcp5': [(0x8100, 0xa000)],
    'prio-dei': [(0x8100, 0x1000)], 'vid5': [(0x8100, 0x0005)],
    'vid4095': [(0x8100, 0x0fff)], 'qinq0': [(0x88a8, 0), (0x8100, 0)],
    'qinq': [(0x88a8, 10), (0x8100, 20)], 'dot1q2': [(0x8100, 0),
                                                     (0x8100, 0)],
    'dot1q2v': [(0x8100, 0), (0x8100, 7)], 'old9100': [(0x9100, 0)],
    'ad0': [(0x88a8, 0)],
}
OPTS4 = ('nop4', 'eol', 'rr', 'ts', 'tsaddr', 'ra', 'lsrr', 'ssrr', 'sec',
         'cipso', 'unknown', 'badlen0', 'badlen', 'rrfull', 'max',
         'ts_oflw')
EXTS6 = (['hbh-pad'], ['hbh-ra'], ['hbh-unk00'], ['hbh-unk01'],
         ['hbh-unk10'], ['hbh-unk11'], ['hbh-badlen'], ['hbh-big'],
         ['dst-pad'], ['dst-unk10'], ['rt0-sl0'], ['rt0-sl1'], ['rt2-sl1'],
         ['srh-sl1'], ['rt99-sl0'], ['rt99-sl1'], ['frag-first'],
         ['frag-mid'], ['frag-last'], ['frag-atomic'], ['ah'],
         ['hbh-pad', 'dst-pad', 'rt0-sl0', 'frag-atomic', 'ah', 'dst-pad'],
         ['dst-pad', 'hbh-pad'], ['frag-first', 'hbh-pad'],
         ['dst-pad', 'dst-pad', 'dst-pad'])
MACS = (('dmac', 'bcast'), ('dmac', 'mcast4'), ('dmac', 'mcast6'),
        ('dmac', 'other'), ('dmac', 'zero'), ('dmac', 'r_sink'),
        ('dmac', 'gen'), ('smac', 'mcastsrc'), ('smac', 'r_gen'),
        ('smac', 'zero'), ('smac', 'bcast'))
ETYPES = (0x0806, 0x88cc, 0x88b5, 0x8847, 0x0842, 0x0000, 0x05dc, 0xffff)


def _each(fams=(4, 6), dsts=KEY_DST, l4s=('udp',)):
    for fam in fams:
        for dst in dsts:
            for l4 in l4s:
                yield dict(fam=fam, dst=dst, l4=l4)


def c_dst_src():
    for fam in (4, 6):
        for dst in DST[fam]:
            for l4 in L4:
                for src in ('gen', 'remote'):
                    yield dict(fam=fam, dst=dst, l4=l4, src=src)
        for src in SRC[fam]:
            for dst in KEY_DST + ('sink3', 'blackhole', 'unreach'):
                for l4 in ('udp', 'icmp', 'syn'):
                    yield dict(fam=fam, dst=dst, l4=l4, src=src)


def c_ttl():
    for s in _each(dsts=KEY_DST + ('blackhole', 'unreach', 'sink3'),
                   l4s=('udp', 'icmp', 'tcp')):
        for ttl in TTLS:
            yield dict(s, ttl=ttl)


def c_sizes(t):
    mtus = (('sink', t.mtu['sink']), ('routed', t.mtu['sink']),
            ('routed3', t.mtu['sink3']), ('sink3', t.mtu['sink3']),
            ('mtu', t.mtu['route']), ('mpath', t.mtu['sink']))
    for fam in (4, 6):
        for dst, mtu in mtus:
            for n in (mtu - 1, mtu, mtu + 1, mtu + 8):
                for l4 in ('udp', 'icmp'):
                    for df in ((0, 1) if fam == 4 else (0,)):
                        for ttl in (64, 1):
                            yield dict(fam=fam, dst=dst, l4=l4, iplen=n,
                                       df=df, ttl=ttl)
        for n in (t.mtu['gen'] - 1, t.mtu['gen'], 28, 29, 40, 47, 48, 64):
            yield dict(fam=fam, dst='routed', iplen=n, df=1)
            yield dict(fam=fam, dst='local', l4='icmp', iplen=n, df=1)
        for size in (0, 1, 2, 3, 7):
            yield dict(fam=fam, dst='routed', size=size)


def c_checksums():
    for s in _each(dsts=KEY_DST + ('sink3',), l4s=('udp', 'tcp', 'icmp')):
        yield dict(s, l4csum='bad')
        yield dict(s, l4csum='zero')
        if s['fam'] == 4:
            yield dict(s, ipcsum='bad')
            yield dict(s, ipcsum='bad', ttl=1)
            for c in (0, 0xffff):
                yield dict(s, ipcsum=c)


def c_options():
    for s in _each(fams=(4,), dsts=KEY_DST + ('sink3',),
                   l4s=('udp', 'icmp')):
        for o in OPTS4:
            yield dict(s, opts=[o])
            if s['dst'] == 'routed':
                yield dict(s, opts=[o], ttl=1)
                yield dict(s, opts=[o], iplen=1501, df=1)
                yield dict(s, opts=[o], iplen=1501, df=0)
        yield dict(s, opts=['rr', 'ts'])


def c_lengths():
    for s in _each(dsts=('routed', 'local', 'mpath', 'sink3'),
                   l4s=('udp', 'tcp', 'icmp')):
        if s['fam'] == 4:
            for v in (0, 1, 19, 20, 21, 27, 28, 32, 40, 65535):
                yield dict(s, tot_len=v)
            for d in (-1, 1, 8, -8):
                yield dict(s, tot_len_d=d)
            for v in range(16):
                yield dict(s, ihl=v)
            for v in (0, 5, 6, 7, 15):
                yield dict(s, version=v)
        else:
            for v in (0, 1, 7, 8, 39, 65535):
                yield dict(s, plen=v)
            for d in (-1, 1, 8, -8):
                yield dict(s, plen_d=d)
            for v in (0, 4, 7, 15):
                yield dict(s, version=v)
        if s['l4'] == 'udp':
            for v in (0, 1, 7, 8, 9, 27, 28, 29, 65535):
                yield dict(s, udp_len=v)
        if s['l4'] == 'tcp':
            for v in (0, 1, 4, 5, 6, 15):
                yield dict(s, doff=v)


def c_trailing():
    for s in _each(dsts=('routed', 'sink', 'mpath', 'local', 'routed3',
                         'mtu', 'unrouted'), l4s=('udp', 'icmp', 'tcp')):
        for tags in ((), TAGS['prio']):
            t = dict(tags=tags) if tags else {}
            yield dict(s, size=0, pad60=1, **t)
            for n in (1, 4, 30, 100):
                yield dict(s, trail=n, **t)
                yield dict(s, junk=n, **t)
            yield dict(s, ttl=1, trail=30, **t)
            if s['fam'] == 4:
                yield dict(s, tot_len=20, trail=30, **t)
                yield dict(s, tot_len=28, pad60=1, **t)
            else:
                yield dict(s, plen=0, trail=30, **t)
                yield dict(s, plen=8, pad60=1, **t)
        # A short packet in a long frame, to each MTU.
        for n in (1200, 1379, 1460, 1500):
            yield dict(s, size=16, trail=n)
            yield dict(s, size=16, trail=n, df=1)


def c_fragments():
    offs = ((1, 0), (1, 1), (1, 185), (0, 185), (0, 8191), (1, 8191),
            (0, 1), (0, 0))
    for s in _each(fams=(4,), dsts=KEY_DST + ('sink3', 'blackhole'),
                   l4s=('udp', 'icmp')):
        for mf, off in offs:
            yield dict(s, frag=(mf << 13) | off)
            yield dict(s, frag=0x4000 | (mf << 13) | off)
            yield dict(s, frag=(mf << 13) | off, ttl=1)
    for fam in (4, 6):
        # An echo to the router in two fragments: both in order, both in
        # reverse order, only the first (reassembly times out with an
        # ICMP error), only the second (times out silently).
        e = dict(fam=fam, dst='local')
        yield dict(e, fragpart=0)
        yield dict(e, fragpart=1, base=1)
        yield dict(e, fragpart=1, base=-1)
        yield dict(e, fragpart=0)
        yield dict(e, fragpart=0)
        yield dict(e, fragpart=1)


def c_exts():
    for s in _each(fams=(6,), dsts=KEY_DST + ('sink3', 'blackhole'),
                   l4s=('udp', 'tcp', 'icmp')):
        for e in EXTS6:
            yield dict(s, exts=e)
            if s['dst'] == 'routed' and s['l4'] == 'udp':
                yield dict(s, exts=e, ttl=1)
                yield dict(s, exts=e, iplen=1501)
        for n in (0, 100, 65535, 65536, 70000):
            yield dict(s, exts=['hbh-jumbo'], jumbo=n, plen=0)
        for l4 in ('raw59', 'raw50', 'raw135', 'raw139', 'raw140',
                   'raw253', 'raw254', 'raw51', 'raw44', 'raw0'):
            yield dict(s, l4=l4)


def c_l2():
    for s in _each(dsts=('routed', 'local', 'sink', 'mpath'),
                   l4s=('udp', 'icmp')):
        for k, v in MACS:
            yield dict(s, **{k: v})
        for name, tags in TAGS.items():
            yield dict(s, tags=tags)
            yield dict(s, tags=tags, ttl=1)
        yield dict(s, etype=0x86dd if s['fam'] == 4 else 0x0800)
        for e in ETYPES:
            yield dict(s, etype=e)


def c_truncated():
    bases = [dict(fam=f, dst='routed', l4=l4) for f in (4, 6)
             for l4 in ('udp', 'tcp', 'icmp', 'icmperr')]
    bases += [dict(fam=4, dst='routed', tags=TAGS['prio']),
              dict(fam=6, dst='routed', tags=TAGS['prio']),
              dict(fam=4, dst='routed', tags=TAGS['qinq0']),
              dict(fam=4, dst='routed', opts=['rr']),
              dict(fam=6, dst='routed', exts=['hbh-pad']),
              dict(fam=6, dst='routed', exts=['dst-pad', 'frag-first']),
              dict(fam=4, dst='local', l4='icmp'),
              dict(fam=6, dst='local', l4='icmp')]
    for b in bases:
        yield dict(b, cut_at_bounds=1)


def crafted(t):
    """The crafted specs, in a fixed order."""
    out = []
    for gen in (c_dst_src(), c_ttl(), c_sizes(t), c_checksums(),
                c_options(), c_lengths(), c_trailing(), c_fragments(),
                c_exts(), c_l2(), c_truncated()):
        for s in gen:
            if s.pop('cut_at_bounds', 0):
                out.extend(_cuts(t, s))
            else:
                out.append(s)
    return out


def _cuts(t, s):
    frame, bounds, _ = build.build(t, 0, s)
    cuts = set()
    for b in bounds:
        cuts.update((b - 1, b, b + 1))
    return [dict(s, cut=c) for c in sorted(cuts) if 14 <= c < len(frame)]


# ---- random frames ----------------------------------------------------------

DST_WEIGHTS = {'routed': 8, 'sink': 4, 'mpath': 8, 'local': 4, 'sink3': 2,
               'routed3': 2, 'mtu': 2, 'unrouted': 2, 'sink2': 2}
INTERESTING = (0, 1, 0x7f, 0x80, 0xfe, 0xff)


def _pick_dst(rng, fam):
    if rng.random() < 0.25:
        return rng.choice(DST[fam])
    names = list(DST_WEIGHTS)
    return rng.choices(names, [DST_WEIGHTS[n] for n in names])[0]


def _size(t, rng, s):
    r = rng.random()
    if r < 0.7:
        s['size'] = rng.randint(0, 64)
    elif r < 0.9:
        s['size'] = rng.randint(64, 600)
    else:
        mtu = rng.choice(list(t.mtu.values()))
        s['iplen'] = mtu + rng.randint(-2, 2)
        if s['fam'] == 4 and rng.random() < 0.5:
            s['df'] = 1


def _modifiers(rng, s):
    fam = s['fam']
    if rng.random() < 0.2:
        s['src'] = rng.choice(SRC[fam])
    if rng.random() < 0.15:
        s['ttl'] = rng.choice(TTLS)
    if rng.random() < 0.05:
        s['tos'] = rng.randint(0, 255)
    if fam == 4 and rng.random() < 0.06:
        s['opts'] = [rng.choice(OPTS4)]
    if fam == 6 and rng.random() < 0.1:
        s['exts'] = rng.choice(EXTS6)
    if fam == 4 and rng.random() < 0.06:
        s['frag'] = rng.choice((0x2000, 0x20b9, 0x00b9, 0x4000, 0x1fff))
    if rng.random() < 0.08:
        if fam == 4:
            s['tot_len_d'] = rng.choice((-20, -8, -1, 1, 8))
        else:
            s['plen_d'] = rng.choice((-8, -1, 1, 8))
    if rng.random() < 0.05:
        s[rng.choice(('l4csum', 'ipcsum') if fam == 4 else
                     ('l4csum',))] = 'bad'
    if rng.random() < 0.08:
        s[rng.choice(('trail', 'junk'))] = rng.choice((1, 4, 18, 30, 200))
    if rng.random() < 0.05:
        s['tags'] = rng.choice(list(TAGS.values()))
    if rng.random() < 0.03:
        k, v = rng.choice(MACS)
        s[k] = v


def random_spec(t, rng):
    fam = rng.choice((4, 6))
    s = dict(fam=fam, dst=_pick_dst(rng, fam), l4=rng.choice(L4))
    _size(t, rng, s)
    _modifiers(rng, s)
    return s


def mutate(rng, frame, tag_at):
    """1 to 3 random changes, mostly in front of the tag; returns the new
    frame and a description of the changes."""
    b = bytearray(frame)
    ops = []
    for _ in range(rng.randint(1, 3)):
        end = tag_at if rng.random() < 0.9 and tag_at > 0 else len(b)
        pos = rng.randrange(max(1, min(end, len(b))))
        r = rng.random()
        if r < 0.5:
            x = rng.randint(1, 255)
            b[pos] ^= x
            ops.append('x%d^%02x' % (pos, x))
        elif r < 0.7:
            b[pos] = rng.choice(INTERESTING)
            ops.append('s%d=%02x' % (pos, b[pos]))
        elif r < 0.85 and pos + 1 < len(b):
            v = rng.choice((0, 1, 0xffff, len(b), len(b) - 14, len(b) - 34))
            b[pos:pos + 2] = (v & 0xffff).to_bytes(2, 'big')
            ops.append('w%d=%04x' % (pos, v & 0xffff))
        elif r < 0.95:
            n = rng.randint(14, len(b))
            del b[n:]
            ops.append('cut%d' % n)
        else:
            n = rng.randint(1, 40)
            b += bytes(rng.randrange(256) for _ in range(n))
            ops.append('add%d' % n)
    return bytes(b), ' '.join(ops)


def frame_at(t, crafted_specs, seed, idx):
    """(frame, description) of frame idx of a run with this seed."""
    if idx < len(crafted_specs):
        s = crafted_specs[idx]
        frame, _, _ = build.build(t, idx, s)
        return frame, 'crafted ' + build.describe(s)
    rng = random.Random('%d:%d' % (seed, idx))
    s = random_spec(t, rng)
    frame, _, tag_at = build.build(t, idx, s)
    desc = 'random ' + build.describe(s)
    if rng.random() < 0.6:
        frame, ops = mutate(rng, frame, tag_at)
        desc += ' mutated ' + ops
    return build.clamp(t, frame), desc
