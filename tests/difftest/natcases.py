# SPDX-License-Identifier: GPL-2.0-only
"""The frames of the NAT run (run.sh -N) and the conntrack entries of
their flows.

The router runs a home router's stateful ruleset (run.sh writes it and
the 'nat' part of the configuration): LAN ports r-gen and r-sink3, WAN
port r-sink with masquerade out of it (the LAN network behind gen,
unique_src, is source-NATed to a fixed address instead), a port forward
of the router's WAN address, port public_port, to a server on sink2, port
server_port, and sink2 also reached without NAT. Before each run the
entries of the frames' flows are created (dt_ct.c): replied, assured, TCP
ESTABLISHED and liberal, with their NAT. A frame enters the router where
its sender is: the original direction where the flow's source is, the
reply where its destination is.

Flows (Flow), by kind:
  masq   gen's host to a WAN host, masqueraded (every other one with a
         new port)
  snat   a host of gen's LAN network to a WAN host, to the fixed address
  masq3  a host behind sink3 (MTU 1280) to a WAN host, masqueraded: its
         replies take the route, and the MTU, of the translated
         destination
  dnat   a WAN client to the router's WAN address, port forwarded
  plain  gen's host to the server, without NAT
  echo   ICMP echo, masqueraded or source-NATed (the kernel's, in XDP too)
Flows without an entry ('none' frames) are what the ruleset sees new.

What frames leave in conntrack must not make two runs differ: the
kernel sees the segments XDP forwards in one run and not in the other
(its window tracking data), and a later RST or FIN could be judged by
them. So each frame with SYN, FIN or RST has a flow of its own, as has
each random frame; the crafted frames that share a flow change nothing
in its entry that matters to another (ACK segments of a liberal flow,
datagrams). Frames that open new flows (no entry) use ports no other
frame uses. TCP without an entry and without SYN is invalid
(nf_conntrack_tcp_loose=0): it creates nothing.

Flow k's ports: LAN side 40000 + k, WAN side 10000 + k, a new masquerade
port 30000 + k, a port forward's client port 50000 + k; so no two flows
share a tuple, before or after NAT, and a single changed byte of a port
does not make one flow's frame another's.
"""
import random
import struct

import build
import cases
import pkt

KINDS = ('masq', 'snat', 'masq3', 'dnat', 'plain')
# TCP flags: what XDP may forward, what conntrack calls invalid, and what
# changes the flow's state (each on a flow of its own).
VALID = (0x10, 0x18, 0x30, 0x38, 0x50, 0x90, 0xd8)
INVALID = (0x00, 0x08, 0x20, 0x40, 0x28, 0x03, 0x07, 0x29, 0x01)
STATE = (0x02, 0x12, 0x11, 0x19, 0x04, 0x14, 0x06, 0x03, 0x01)
RANDOM_BASE = 1000
RANDOM_FLOWS = 9000
TS_OPT = b'\x01\x01\x08\x0a' + bytes(8)


class Nat:
    """The NAT run's addresses, from the configuration's 'nat' part."""

    def __init__(self, t):
        c = t.cfg['nat']
        self.t = t
        self.public = {4: c['public'][0], 6: c['public'][1]}
        self.public_port = c['public_port']
        self.server = {4: c['server'][0], 6: c['server'][1]}
        self.server_port = c['server_port']
        self.snat_to = {4: c['snat_to'][0], 6: c['snat_to'][1]}
        self.wan = c['wan']

    def lan(self, fam):
        return self.t.h4('gen', 2) if fam == 4 else self.t.h6('gen', 2)

    def lan_net(self, fam, k):
        return self.t.unique_src(fam, k)

    def lan3(self, fam, k):
        """sink3's host for an even k, else a host routed behind it."""
        if k % 2 == 0:
            return self.t.h4('sink3', 2) if fam == 4 else \
                self.t.h6('sink3', 2)
        return self.t.h4('routed3', 1 + k % 250) if fam == 4 else \
            self.t.h6('routed3', 1 + k)

    def wan_host(self, fam, k):
        return self.t.h4('routed', 1 + k % 250) if fam == 4 else \
            self.t.h6('routed', 1 + k)


class Flow:
    """One flow: its original tuple, its NAT (snat, dnat: (address, port),
    port 0 keeping the port), the host ports its two directions enter by,
    and whether it has an entry. Source NAT keeps the port of every other
    crafted flow, and of no random one: a random change to a frame's
    source address (IPv6 has no header checksum) makes a new flow that the
    kernel masquerades, to a random port if the flow's entry has its
    port."""

    def __init__(self, n, k, kind, fam, proto, entry=True):
        self.k, self.kind, self.fam, self.proto = k, kind, fam, proto
        self.entry = entry
        self.snat = self.dnat = None
        sport, dport = 40000 + k, 10000 + k
        wan = n.wan_host(fam, k)
        newport = 30000 + k if k % 2 or k >= RANDOM_BASE else 0
        if kind == 'masq':
            src, dst, self.ports = n.lan(fam), wan, ('gen', n.wan)
            self.snat = (n.public[fam], newport)
        elif kind == 'snat':
            src, dst, self.ports = n.lan_net(fam, k), wan, ('gen', n.wan)
            self.snat = (n.snat_to[fam], newport)
        elif kind == 'masq3':
            src, dst, self.ports = n.lan3(fam, k), wan, ('sink3', n.wan)
            self.snat = (n.public[fam], newport)
        elif kind == 'dnat':
            src, dst, self.ports = wan, n.public[fam], (n.wan, 'sink2')
            sport, dport = 50000 + k, n.public_port
            self.dnat = (n.server[fam], n.server_port)
        else:
            src, dst, self.ports = n.lan(fam), n.server[fam], \
                ('gen', 'sink2')
        if proto == 'icmp':
            dport = 0
        self.orig = (src, sport, dst, dport)

    def arrive(self, d):
        """(src, sport, dst, dport) of a packet of direction d ('o' or
        'r') as it enters the router (ICMP: the echo identifier)."""
        src, sport, dst, dport = self.orig
        if d == 'o':
            return self.orig
        rsrc, rsport = self.dnat if self.dnat else (dst, dport)
        rdst, rdport = self.snat if self.snat else (src, sport)
        if self.proto == 'icmp':
            return rsrc, rdport or sport, rdst, 0
        return rsrc, rsport, rdst, rdport or sport

    def leave(self, d):
        """The same as it leaves: the other direction's, reversed."""
        src, sport, dst, dport = self.arrive('r' if d == 'o' else 'o')
        if self.proto == 'icmp':
            return dst, sport, src, 0
        return dst, dport, src, sport

    def in_port(self, d):
        return self.ports[0 if d == 'o' else 1]

    def out_port(self, d):
        return self.ports[1 if d == 'o' else 0]

    def line(self):
        """Its entry, as dt_ct reads it."""
        src, sport, dst, dport = self.orig
        w = [self.proto, src, str(sport), dst, str(dport)]
        if self.snat:
            w += ['snat', self.snat[0], str(self.snat[1])]
        if self.dnat:
            w += ['dnat', self.dnat[0], str(self.dnat[1])]
        return ' '.join(w)

    def spec(self, d, **m):
        """A build spec of a frame of direction d, with m."""
        src, sport, dst, dport = self.arrive(d)
        s = dict(fam=self.fam, src=src, dst=dst, port=self.in_port(d),
                 nat='%s-%s-%s%s' % (self.kind, self.proto, d,
                                     '' if self.entry else '-none'),
                 fl=self.k)
        if self.proto == 'icmp':
            s.update(l4='icmp' if d == 'o' else 'icmprep', echo_id=sport)
        else:
            s.update(l4=self.proto, sport=sport, dport=dport)
        s.update(m)
        return s


# ---- frames of one flow -----------------------------------------------------

def _mtu_sizes(t, fl, d):
    """IP lengths at the egress MTU of direction d that the ingress port
    can send."""
    out, inp = build.port_mtu(t, fl.out_port(d)), build.port_mtu(
        t, fl.in_port(d))
    return [n for n in (out - 1, out, out + 1, out + 8) if n <= inp] or [inp]


def variants(t, fl, d):
    """The crafted frames of a flow that has other frames too: what XDP
    forwards and, for each thing the kernel treats specially, a frame
    that has it."""
    fam, tcp = fl.fam, fl.proto == 'tcp'
    v = [{}, dict(size=0), dict(size=1), dict(size=200), dict(size=1000)]
    v += [dict(tos=0x03), dict(tos=0xb8), dict(ttl=255)]
    if tcp:
        v += [dict(flags=f) for f in VALID + INVALID if f not in STATE]
        v += [dict(flags=0x10, size=0), dict(tcpopts=TS_OPT),
              dict(tcpopts=TS_OPT, flags=0x10)]
        v += [dict(doff=x) for x in (0, 4, 6, 8, 15)]
    else:
        n = 8 + pkt.TAG_LEN + 16
        v += [dict(udp_len=x) for x in (0, 7, 8, 9, n - 1, n + 1, 65535)]
        v += [dict(l4csum='zero'), dict(l4csum='zero', size=0)]
    v += [dict(ttl=x) for x in (0, 1, 2)] + [dict(ttl=2, size=0),
                                              dict(ttl=1, size=300)]
    v += [dict(l4csum='bad'), dict(l4csum='bad', ttl=1)]
    v += [dict(corner=c) for c in ('l4x', 'l4o') +
          (('l4alt',) if tcp else ()) +
          (('ipx', 'ipo', 'ipalt') if fam == 4 else ())]
    v += [dict(trail=4), dict(trail=30), dict(size=0, pad60=1),
          dict(tags=cases.TAGS['prio']), dict(tags=cases.TAGS['prio'], ttl=1),
          dict(tags=cases.TAGS['prio'], trail=8),
          dict(tags=cases.TAGS['vid5'])]
    for n in _mtu_sizes(t, fl, d):
        v.append(dict(iplen=n))
        if fam == 4:
            v.append(dict(iplen=n, df=1))
    if fam == 4:
        v += [dict(opts=[o]) for o in ('nop4', 'rr', 'ts', 'ra', 'sec',
                                       'unknown')]
        v += [dict(opts=['rr'], ttl=1), dict(ipcsum='bad'),
              dict(ipcsum='bad', ttl=1), dict(ipcsum=0), dict(ipcsum=0xffff)]
        v += [dict(tot_len_d=x) for x in (-1, 1, -8, 8)]
        v += [dict(frag=0x2000 | 0x4000), dict(frag=0x4000), dict(frag=1),
              dict(frag=0x2000, size=0)]
        v += [dict(ihl=6), dict(version=6)]
    else:
        v += [dict(plen_d=x) for x in (-1, 1, -8, 8)]
        v += [dict(exts=[e]) for e in ('hbh-pad', 'dst-pad', 'rt0-sl0',
                                       'frag-atomic')]
        v += [dict(version=4), dict(flow=0xfffff)]
    return v


# ---- the crafted frames -----------------------------------------------------

def _icmp_errors(n, fl):
    """ICMP errors about a flow's packets, as the hosts that got them
    would send them: to the sender of the packet as it left the router."""
    out = []
    for d in ('o', 'r'):
        src, sport, dst, dport = fl.leave(d)
        back = 'r' if d == 'o' else 'o'
        inner = (6 if fl.proto == 'tcp' else 17, src, sport, dst, dport)
        tcs = ((3, 3), (11, 0), (3, 4)) if fl.fam == 4 else \
            ((1, 4), (3, 0), (2, 0))
        for tc in tcs:
            # From the packet's destination, whose address the flow's
            # reply direction has as its source.
            s = fl.spec(back, l4='icmperr', icmp_tc=tc, inner=inner)
            for k in ('sport', 'dport'):
                s.pop(k)
            s['nat'] += '-icmperr'
            out.append(s)
    return out


class Crafted:
    """The crafted frames' specs, in a fixed order, and their flows."""

    def __init__(self, t):
        self.n = n = Nat(t)
        self.flows = {}
        self.specs = []
        k = 0

        def flow(kind, fam, proto, entry=True):
            nonlocal k
            fl = Flow(n, k, kind, fam, proto, entry)
            self.flows[k] = fl
            k += 1
            return fl

        # Fragments that never complete (IPv6's conntrack reassembly
        # sends its time exceeded error a second later: run.sh waits).
        for fam in (4, 6):
            for kind in ('masq', 'dnat'):
                fl = flow(kind, fam, 'udp')
                for d in ('o', 'r'):
                    self.specs.append(fl.spec(d, fragpart=0))
                    self.specs.append(fl.spec(d, fragpart=1))
        for fam in (4, 6):
            for kind in KINDS:
                for proto in ('tcp', 'udp'):
                    fl = flow(kind, fam, proto)
                    for d in ('o', 'r'):
                        self.specs += [fl.spec(d, **m)
                                       for m in variants(t, fl, d)]
                        # Two fragments of one datagram, in order and
                        # reversed.
                        self.specs += [fl.spec(d, fragpart=0),
                                       fl.spec(d, fragpart=1, base=1),
                                       fl.spec(d, fragpart=1),
                                       fl.spec(d, fragpart=0, base=1)]
                    self.specs += _icmp_errors(n, fl)
            for kind in ('masq', 'snat'):
                fl = flow(kind, fam, 'icmp')
                for d in ('o', 'r', 'o', 'r'):
                    self.specs.append(fl.spec(d))
                self.specs += [fl.spec('o', ttl=1), fl.spec('o', size=300)]
        # SYN, FIN, RST: a flow each, then an ACK the same way and one the
        # other way.
        for fam in (4, 6):
            for kind in ('masq', 'dnat', 'plain', 'masq3'):
                for d in ('o', 'r'):
                    for f in STATE:
                        fl = flow(kind, fam, 'tcp')
                        other = 'r' if d == 'o' else 'o'
                        self.specs += [fl.spec(d, flags=f),
                                       fl.spec(d, flags=0x18),
                                       fl.spec(other, flags=0x10)]
        # No entry: new flows from the LAN (masqueraded by the kernel) and
        # to the port forward, unsolicited ones from the WAN, and TCP
        # without SYN, which is invalid.
        for fam in (4, 6):
            for kind in KINDS:
                for proto in ('tcp', 'udp'):
                    for d in ('o', 'r'):
                        ms = [{}] if proto == 'udp' else \
                            [dict(flags=0x02), dict(flags=0x18)]
                        for m in ms:
                            fl = flow(kind, fam, proto, entry=False)
                            self.specs.append(fl.spec(d, **m))
                            if d == 'o' and proto == 'udp':
                                fl = flow(kind, fam, proto, entry=False)
                                self.specs.append(fl.spec(d, ttl=1))
        assert k <= RANDOM_BASE, 'crafted flows overlap the random ones'


# ---- building ---------------------------------------------------------------

def _fragment(t, idx, s):
    """Part s['fragpart'] (0: the first 48 bytes of the transport header
    and data, 1: the rest) of a datagram of frame idx - base's flow, in
    two fragments; each part carries a tag, so every fragment the router
    sends on is matched to a frame."""
    fam, part, b = s['fam'], s['fragpart'], idx - s.get('base', 0)
    src, dst = pkt.addr(s['src']), pkt.addr(s['dst'])
    hl = 20 if s['l4'] == 'tcp' else 8
    data = bytearray(pkt.tag(b) + build.FILL[b % 256:b % 256 + 68])
    data[48 - hl:48 - hl + pkt.TAG_LEN] = pkt.tag(b + 1)
    if s['l4'] == 'tcp':
        proto, l4 = 6, pkt.tcp(src, dst, s['sport'], s['dport'], bytes(data),
                               seq=b * 7919, ack=1, flags=0x18)
    else:
        proto, l4 = 17, pkt.udp(src, dst, s['sport'], s['dport'],
                                bytes(data))
    piece = l4[48:] if part else l4[:48]
    off, more = (6, 0) if part else (0, 1)
    if fam == 4:
        ip = pkt.ip4(src, dst, proto, piece, ident=b, frag=(more << 13) | off,
                     ttl=s.get('ttl', 64))
    else:
        fh = pkt.ext_frag(off, more, b, 'frag').build(proto)
        ip = pkt.ip6(src, dst, 44, fh + piece, flow=b & 0xfffff,
                     hlim=s.get('ttl', 64))
    port = s['port']
    return pkt.eth(t.mac['r_' + port], t.mac[port],
                   0x0800 if fam == 4 else 0x86dd) + ip


def _l4_at(frame):
    """(offset of the transport header, its end, protocol) of a frame
    without tags and IPv6 extension headers."""
    if frame[12:14] == b'\x08\x00':
        ihl = (frame[14] & 15) * 4
        tot = struct.unpack_from('!H', frame, 16)[0]
        return 14 + ihl, 14 + tot, frame[23]
    plen = struct.unpack_from('!H', frame, 18)[0]
    return 54, 54 + plen, frame[20]


def _corner(t, idx, s, fl, d):
    """The spec with the word after the tag (l4*) or the IPv4
    identification (ip*) chosen so that a checksum comes out 0: l4x the
    transport checksum of the packet as NAT leaves it, l4o and l4alt the
    packet's own (l4alt: TCP's written 0xffff), ipx the IPv4 header's
    after NAT and the TTL's decrement, ipo and ipalt the header's own
    (ipalt: written 0xffff)."""
    c = s.pop('corner')
    if c.startswith('l4'):
        frame, _, _ = build.build(t, idx, dict(s, word=0))
        off, end, proto = _l4_at(frame)
        l4 = bytearray(frame[off:end])
        ck = 16 if proto == 6 else 6
        l4[ck:ck + 2] = b'\0\0'
        src, sport, dst, dport = fl.arrive(d)
        if c == 'l4x':
            src, sport, dst, dport = fl.leave(d)
            struct.pack_into('!HH', l4, 0, sport, dport)
        s['word'] = pkt.csum(pkt.pseudo(pkt.addr(src), pkt.addr(dst), proto,
                                        len(l4)) + bytes(l4))
        if c == 'l4alt':
            s['l4csum'] = 'alt'
        return s
    frame, _, _ = build.build(t, idx, dict(s, ident=0))
    hdr = bytearray(frame[14:34])
    hdr[10:12] = b'\0\0'
    if c == 'ipx':
        src, _, dst, _ = fl.leave(d)
        hdr[8] = (hdr[8] - 1) & 0xff
        hdr[12:20] = pkt.addr(src) + pkt.addr(dst)
    s['ident'] = pkt.csum(bytes(hdr))
    if c == 'ipalt':
        s['ipcsum'] = 0xffff
    return s


def build_frame(t, idx, s, fl):
    """The frame of spec s, frame idx, of flow fl."""
    if 'fragpart' in s:
        return _fragment(t, idx, s)
    if 'corner' in s:
        s = _corner(t, idx, dict(s), fl, s['nat'].split('-')[2])
    frame, _, _ = build.build(t, idx, s)
    return frame


# ---- random frames ----------------------------------------------------------

def _random_mods(t, rng, fl, d):
    fam, m = fl.fam, {}
    r = rng.random()
    if r < 0.6:
        m['size'] = rng.randint(0, 64)
    elif r < 0.85:
        m['size'] = rng.randint(64, 600)
    else:
        m['iplen'] = rng.choice(_mtu_sizes(t, fl, d)) + rng.randint(-2, 0)
        if fam == 4 and rng.random() < 0.5:
            m['df'] = 1
    if fl.proto == 'tcp':
        r = rng.random()
        if r < 0.15:
            m['flags'] = rng.choice(STATE + INVALID)
        elif r < 0.4:
            m['flags'] = rng.choice(VALID)
        if rng.random() < 0.03:
            m['doff'] = rng.choice((0, 4, 6, 15))
    elif rng.random() < 0.05:
        m['udp_len'] = rng.choice((0, 7, 8, 9, 100, 65535))
    elif rng.random() < 0.05:
        m['l4csum'] = 'zero'
    if rng.random() < 0.15:
        m['ttl'] = rng.choice((0, 1, 2, 3, 255))
    if rng.random() < 0.05:
        m['tos'] = rng.randint(0, 255)
    if fam == 4 and rng.random() < 0.05:
        m['opts'] = [rng.choice(cases.OPTS4)]
    if fam == 6 and rng.random() < 0.05:
        m['exts'] = rng.choice(cases.EXTS6)
    if fam == 4 and rng.random() < 0.05:
        m['frag'] = rng.choice((0x2000, 0x20b9, 0x00b9, 0x4000, 0x1fff))
    if rng.random() < 0.05:
        if fam == 4:
            m['tot_len_d'] = rng.choice((-20, -8, -1, 1, 8))
        else:
            m['plen_d'] = rng.choice((-8, -1, 1, 8))
    if rng.random() < 0.05:
        m[rng.choice(('l4csum', 'ipcsum') if fam == 4 else
                     ('l4csum',))] = 'bad'
    if rng.random() < 0.06:
        m[rng.choice(('trail', 'junk'))] = rng.choice((1, 4, 18, 30, 200))
    if rng.random() < 0.04:
        m['tags'] = rng.choice((cases.TAGS['prio'], cases.TAGS['prio-pcp5'],
                                cases.TAGS['vid5']))
    plain = not {'tags', 'opts', 'exts', 'iplen', 'doff', 'frag', 'tot_len_d',
                 'plen_d'} & set(m)
    if rng.random() < 0.03 and plain and m.get('size', 16) >= 2:
        m['corner'] = rng.choice(('l4x', 'l4o') +
                                 (('ipx', 'ipo') if fam == 4 else ()))
    return m


def random_frame(t, n, rng, idx, k):
    """(flow, spec) of random frame idx, on flow k of its own."""
    fam = rng.choice((4, 6))
    kind = rng.choice(KINDS)
    proto = rng.choice(('tcp', 'udp'))
    fl = Flow(n, k, kind, fam, proto, entry=rng.random() >= 0.05)
    d = rng.choice('or')
    return fl, fl.spec(d, **_random_mods(t, rng, fl, d))


# ---- frame i ----------------------------------------------------------------

def frame_at(t, crafted, seed, idx):
    """(frame, description, the port it enters by, its flow) of frame idx
    of a NAT run with this seed."""
    if idx < len(crafted.specs):
        s = crafted.specs[idx]
        fl = crafted.flows[s['fl']]
        frame = build_frame(t, idx, s, fl)
        return frame, 'crafted ' + build.describe(s), s['port'], fl
    rng = random.Random('nat:%d:%d' % (seed, idx))
    k = RANDOM_BASE + (idx - len(crafted.specs)) % RANDOM_FLOWS
    fl, s = random_frame(t, crafted.n, rng, idx, k)
    frame = build_frame(t, idx, s, fl)
    desc = 'random ' + build.describe(s)
    if rng.random() < 0.5:
        tag_at = frame.find(pkt.tag(idx))
        frame, ops = cases.mutate(rng, frame, tag_at)
        desc += ' mutated ' + ops
    return build.clamp(t, frame, s['port']), desc, s['port'], fl
