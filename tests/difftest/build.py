# SPDX-License-Identifier: GPL-2.0-only
"""Builds one frame from a spec: a dict of what to put in it.

Keys (all optional but fam, dst):
  fam 4|6, dst, src      address names (Topo.dst / Topo.src) or literals;
                         the default source, remote, differs per frame
  port                   where the frame enters the router: gen (default),
                         sink, sink2, sink3 (the MACs' defaults follow)
  l4                     udp tcp syn icmp icmprep icmperr raw<N> (default
                         udp)
  sport, dport, flags    TCP/UDP ports and TCP flags; tcpopts: TCP options
  echo_id                an echo's identifier; icmp_tc: an error's (type,
                         code); inner: the packet it quotes (_inner)
  word                   the 16 bits after the tag (checksum corners)
  fragpart 0|1, base k   half of an echo to the router, in two fragments
                         (the echo of frame i - k)
  size | iplen           bytes after the tag | the IP packet's length
  ttl, tos, df, frag, ident, flow
  opts                   IPv4 option names (OPTS4), exts: IPv6 header names
  ihl, tot_len, tot_len_d, plen, plen_d, version, ipcsum ('bad' or a
  number), l4csum ('bad' or 'zero'), udp_len, doff
  dmac, smac, tags [(tpid, tci)], etype
  trail n | junk n | pad60    bytes after the packet
  cut n                  the frame cut to n bytes
  mut [(pos, xor)]       bytes changed after everything else
Returns the frame and the offsets where its headers end (for truncation)
and where the tag starts (mutations stay in front of it).
"""
import ipaddress
import struct

import pkt

FILL = bytes(range(256)) * 40

MACS = {
    'bcast': 'ff:ff:ff:ff:ff:ff', 'mcast4': '01:00:5e:00:00:01',
    'mcast6': '33:33:00:00:00:01', 'other': '02:00:5e:10:00:01',
    'zero': '00:00:00:00:00:00', 'mcastsrc': '01:00:5e:00:00:05',
}


class Topo:
    """Addresses of the test topology, from the JSON run.sh writes."""

    def __init__(self, cfg):
        self.cfg = cfg
        self.mac = {k: pkt.mac(v) for k, v in cfg['mac'].items()}
        self.mac.update({k: pkt.mac(v) for k, v in MACS.items()})
        self.mtu = cfg['mtu']
        self.net4, self.net6 = cfg['net4'], cfg['net6']
        self.router = {pkt.addr(a) for a in cfg['router_addrs']}
        # The NAT run (run.sh -N): what the router translates to is its
        # own too (compare.py).
        self.nat = cfg.get('nat')
        if self.nat:
            self.router |= {pkt.addr(a) for a in self.nat['snat_to']}
        self.mpath = [ipaddress.ip_network(p) for p in cfg['mpath']]
        self.unique4 = ipaddress.ip_network(cfg['unique_src']['4'])
        self.dst = {4: self._dst4(), 6: self._dst6()}
        self.src = {4: self._src4(), 6: self._src6()}

    def unique_src(self, fam, idx):
        net = ipaddress.ip_network(self.cfg['unique_src'][str(fam)])
        return str(net.network_address + 1 + idx % 65536)

    def h4(self, net, host):
        return '%s.%d' % (self.net4[net], host)

    def h6(self, net, host):
        return '%s::%x' % (self.net6[net], host) if host else \
            '%s::' % self.net6[net]

    def _common(self, h):
        d = {n: h(n, 9) for n in ('routed', 'routed3', 'mpath', 'mtu',
                                  'blackhole', 'unreach', 'prohibit',
                                  'throw', 'unrouted')}
        d.update(sink=h('sink', 2), sink2=h('sink2', 2), sink3=h('sink3', 2),
                 local=h('gen', 1), local2=h('sink', 1),
                 local3=h('sink3', 1), hairpin=h('gen', 2),
                 remote=h('remote', 9), noneigh=h('sink', 0x77),
                 noneigh_gen=h('gen', 0x77))
        return d

    def _dst4(self):
        d = self._common(self.h4)
        d['remote'] = str(self.unique4.broadcast_address - 1)
        d.update(bcast=self.h4('sink', 255), bcast_gen=self.h4('gen', 255),
                 netaddr=self.h4('sink', 0), lbcast='255.255.255.255',
                 mcast='224.0.0.1', mcast2='239.1.2.3', loop='127.0.0.1',
                 zero='0.0.0.0', zeronet='0.1.2.3', classe='240.0.0.1',
                 lla='169.254.1.1')
        return d

    def _dst6(self):
        d = self._common(self.h6)
        d.update(anycast=self.h6('sink', 0), anycast_gen=self.h6('gen', 0),
                 mcast='ff02::1', mcast2='ff0e::db8:1',
                 mcast_sol='ff02::1:ff00:1', loop='::1', zero='::',
                 v4mapped='::ffff:' + self.h4('sink', 2),
                 v4compat='::' + self.h4('sink', 2), lla='fe80::1',
                 ula='fd00::1', nat64='64:ff9b::c612:209',
                 sitelocal='fec0::1', teredo='2001::1', sixto4='2002::1')
        return d

    def _src4(self):
        return dict(gen=self.h4('gen', 2), noneigh=self.h4('gen', 0x77),
                    zero='0.0.0.0',
                    lbcast='255.255.255.255', mcast='224.0.0.5',
                    loop='127.0.0.1', local=self.h4('gen', 1),
                    local2=self.h4('sink', 1), bcast=self.h4('gen', 255),
                    classe='240.0.0.1', lla='169.254.1.1',
                    sink=self.h4('sink', 2), unrouted=self.h4('unrouted', 9),
                    zeronet='0.1.2.3')

    def _src6(self):
        return dict(gen=self.h6('gen', 2), noneigh=self.h6('gen', 0x77),
                    zero='::', mcast='ff02::1',
                    loop='::1', local=self.h6('gen', 1),
                    local2=self.h6('sink', 1), anycast=self.h6('gen', 0),
                    lla='fe80::1', v4mapped='::ffff:' + self.h4('gen', 2),
                    sink=self.h6('sink', 2), unrouted=self.h6('unrouted', 9),
                    ula='fd00::1', sitelocal='fec0::1')

    def addr(self, fam, table, name, idx):
        a = table[fam].get(name, name)
        if table is self.src and name == 'remote':
            # One source per frame (reused after 65536 frames): the
            # kernel limits the ICMP errors of unreachable and missing
            # routes per source address (net.ipv4.route.error_cost),
            # globally, so a source must not send two in a row.
            a = self.unique_src(fam, idx)
        elif name == 'mpath':
            # Many destinations, so both paths see traffic.
            a = self.h4('mpath', 1 + idx % 250) if fam == 4 else \
                self.h6('mpath', 1 + idx % 4000)
        return pkt.addr(a)


# ---- IPv4 options and IPv6 extension headers --------------------------------

def opts4(t):
    routed = pkt.addr(t.dst[4]['routed'])
    return {
        'nop4': b'\x01' * 4, 'eol': b'\x00' * 4,
        'rr': pkt.opt_rr(2) + b'\x01', 'ts': pkt.opt_ts(2),
        'tsaddr': pkt.opt_ts(2, 1), 'ra': b'\x94\x04\x00\x00',
        'lsrr': bytes([131, 7, 4]) + routed + b'\x01',
        'ssrr': bytes([137, 7, 4]) + routed + b'\x01',
        'sec': bytes([130, 11]) + bytes(9) + b'\x01',
        'cipso': bytes([134, 10, 0, 0, 0, 3, 1, 4, 0, 0]) + b'\x01\x01',
        'unknown': bytes([0x1f, 4, 0, 0]), 'badlen0': bytes([7, 0, 4, 0]),
        'badlen': bytes([7, 40, 4, 0]), 'rrfull': bytes([7, 7, 8]) +
        bytes(4) + b'\x01', 'max': b'\x01' * 40,
        'ts_oflw': bytes([68, 8, 9, 0xf0]) + bytes(4),
    }


def exts6(t, idx):
    sink = pkt.addr(t.dst[6]['sink'])
    e = pkt.ext_opts
    r = pkt.ext_routing
    f = pkt.ext_frag
    return {
        'hbh-pad': e(0, b'', 'hbh-pad'),
        'hbh-ra': e(0, b'\x05\x02\x00\x00', 'hbh-ra'),
        'hbh-unk00': e(0, b'\x1e\x02\x00\x00', 'hbh-unk00'),
        'hbh-unk01': e(0, b'\x5e\x02\x00\x00', 'hbh-unk01'),
        'hbh-unk10': e(0, b'\x9e\x02\x00\x00', 'hbh-unk10'),
        'hbh-unk11': e(0, b'\xde\x02\x00\x00', 'hbh-unk11'),
        'hbh-badlen': e(0, b'\x01\x09', 'hbh-badlen'),
        'hbh-big': e(0, b'\x01\x7c' + bytes(0x7c), 'hbh-big'),
        'dst-pad': e(60, b'', 'dst-pad'),
        'dst-unk10': e(60, b'\x9e\x02\x00\x00', 'dst-unk10'),
        'rt0-sl0': r(0, 0, [sink], 'rt0-sl0'),
        'rt0-sl1': r(0, 1, [sink], 'rt0-sl1'),
        'rt2-sl1': r(2, 1, [sink], 'rt2-sl1'),
        'srh-sl1': r(4, 1, [sink], 'srh-sl1'),
        'rt99-sl0': r(99, 0, [sink], 'rt99-sl0'),
        'rt99-sl1': r(99, 1, [sink], 'rt99-sl1'),
        'frag-first': f(0, 1, idx, 'frag-first'),
        'frag-mid': f(100, 1, idx, 'frag-mid'),
        'frag-last': f(100, 0, idx, 'frag-last'),
        'frag-atomic': f(0, 0, idx, 'frag-atomic'),
        'ah': pkt.ext_ah(),
    }


def jumbo_opt(n):
    return pkt.ext_opts(0, b'\xc2\x04' + struct.pack('!I', n), 'hbh-jumbo')


# ---- the frame --------------------------------------------------------------

def _inner(s, fam, src, dst, sport, idx):
    """The packet an ICMP error quotes: by default a UDP datagram this
    frame's destination sent to its source; 'inner' (proto, src, sport,
    dst, dport) names a TCP or UDP packet whose IP and transport headers
    are quoted (whole: NAT rewrites a quoted TCP header's checksum)."""
    if 'inner' not in s:
        if fam == 4:
            return pkt.ip4(dst, src, 17, pkt.udp(dst, src, 9, sport, b''),
                           ident=idx)
        return pkt.ip6(dst, src, 17, pkt.udp(dst, src, 9, sport, b''))
    proto, isrc, isport, idst, idport = s['inner']
    isrc, idst = pkt.addr(isrc), pkt.addr(idst)
    if proto == 6:
        l4 = pkt.tcp(isrc, idst, isport, idport, b'', seq=idx)
    else:
        l4 = pkt.udp(isrc, idst, isport, idport, b'')
    if fam == 4:
        return pkt.ip4(isrc, idst, proto, l4, ident=idx)
    return pkt.ip6(isrc, idst, proto, l4)


def _l4(s, fam, src, dst, idx, data):
    """(protocol, transport bytes, transport header length)."""
    l4 = s.get('l4', 'udp')
    ck = s.get('l4csum', 'ok')
    sport = s.get('sport', 1024 + idx % 60000)
    if l4 == 'udp':
        return 17, pkt.udp(src, dst, sport, s.get('dport', 9), data,
                           s.get('udp_len'), ck), 8
    if l4 in ('tcp', 'syn'):
        flags = s.get('flags', 0x02 if l4 == 'syn' else 0x18)
        opts = s.get('tcpopts', b'')
        b = pkt.tcp(src, dst, sport, s.get('dport', 80), data,
                    seq=idx * 7919 & 0xffffffff,
                    ack=0 if l4 == 'syn' else 1, flags=flags,
                    doff=s.get('doff'), options=opts, check=ck)
        return 6, b, 20 + (len(opts) + 3) // 4 * 4
    echo = struct.pack('!HH', s.get('echo_id', idx & 0xffff), 1)
    if l4 in ('icmp', 'icmprep') and fam == 4:
        return 1, pkt.icmp4(8 if l4 == 'icmp' else 0, 0, echo, data, ck), 8
    if l4 in ('icmp', 'icmprep'):
        return 58, pkt.icmp6(src, dst, 128 if l4 == 'icmp' else 129, 0, echo,
                             data, ck), 8
    if l4 == 'icmperr' and fam == 4:
        typ, code = s.get('icmp_tc', (3, 1))
        inner = _inner(s, fam, src, dst, sport, idx)
        return 1, pkt.icmp4(typ, code, bytes(4), inner + data, ck), 8
    if l4 == 'icmperr':
        typ, code = s.get('icmp_tc', (1, 4))
        inner = _inner(s, fam, src, dst, sport, idx)
        return 58, pkt.icmp6(src, dst, typ, code, bytes(4), inner + data,
                             ck), 8
    if l4.startswith('raw'):
        return int(l4[3:]), data, 0
    raise ValueError('l4 ' + l4)


def _l4_overhead(s):
    l4 = s.get('l4', 'udp')
    base = {'udp': 8, 'tcp': 20, 'syn': 20, 'icmp': 8,
            'icmprep': 8}.get(l4, 0)
    if l4 in ('tcp', 'syn'):
        base += (len(s.get('tcpopts', b'')) + 3) // 4 * 4
    if l4 == 'icmperr':
        base = 8 + (28 if s['fam'] == 4 else 48)
    return base + pkt.TAG_LEN


def build(t, idx, s):
    if 'fragpart' in s:
        return _fragpart(t, idx, s)
    fam = s['fam']
    src = t.addr(fam, t.src, s.get('src', 'remote'), idx)
    dst = t.addr(fam, t.dst, s['dst'], idx)
    if fam == 4:
        options = b''.join(opts4(t)[o] for o in s.get('opts', ()))
        exts = []
        ihdr = 20 + (len(options) + 3) // 4 * 4
    else:
        table = exts6(t, idx)
        exts = [jumbo_opt(s['jumbo']) if x == 'hbh-jumbo' else table[x]
                for x in s.get('exts', ())]
        ihdr = 40 + len(pkt.chain(exts, 0)[1])
    size = s.get('size', 16)
    if 'iplen' in s:
        size = max(0, s['iplen'] - ihdr - _l4_overhead(s))
    start = idx % 256
    data = pkt.tag(idx) + FILL[start:start + size]
    if 'word' in s and size >= 2:
        data = data[:pkt.TAG_LEN] + struct.pack('!H', s['word']) + \
            data[pkt.TAG_LEN + 2:]
    proto, l4b, l4h = _l4(s, fam, src, dst, idx, data)
    if fam == 4:
        ip = _ip4(s, src, dst, proto, l4b, options, idx)
    else:
        nh, extb, _ = pkt.chain(exts, proto)
        ip = _ip6(s, src, dst, nh, extb + l4b, idx)
    ntags = len(s.get('tags', ()))
    etype = s.get('etype', 0x0800 if fam == 4 else 0x86dd)
    port = s.get('port', 'gen')
    l2 = pkt.eth(t.mac[s.get('dmac', 'r_' + port)],
                 t.mac[s.get('smac', port)], etype, s.get('tags', ()))
    l3 = 14 + 4 * ntags
    tag_at = l3 + ihdr + len(l4b) - len(data)
    bounds = [l3 - 2, l3, l3 + (20 if fam == 4 else 40), l3 + ihdr,
              l3 + ihdr + l4h, tag_at + pkt.TAG_LEN]
    return _tail(s, t, l2 + ip), bounds, tag_at


def _fragpart(t, idx, s):
    """One of two fragments of an ICMP echo request (frame idx - base's)
    to the router: the first 48 bytes of the message, with the tag, or
    the rest."""
    fam, part, base = s['fam'], s['fragpart'], idx - s.get('base', 0)
    src = t.addr(fam, t.src, s.get('src', 'remote'), base)
    dst = t.addr(fam, t.dst, s['dst'], base)
    start = base % 256
    data = pkt.tag(base) + FILL[start:start + 64]
    _, msg, _ = _l4(dict(l4='icmp'), fam, src, dst, base, data)
    piece = msg[48:] if part else msg[:48]
    off, more = (6, 0) if part else (0, 1)
    if fam == 4:
        ip = pkt.ip4(src, dst, 1, piece, ident=base, frag=(more << 13) | off)
    else:
        fh = pkt.ext_frag(off, more, base, 'frag').build(58)
        ip = pkt.ip6(src, dst, 44, fh + piece, flow=base & 0xfffff)
    frame = pkt.eth(t.mac['r_gen'], t.mac['gen'],
                    0x0800 if fam == 4 else 0x86dd) + ip
    return _tail(s, t, frame), [14], len(frame)


def _ip4(s, src, dst, proto, l4b, options, idx):
    frag = s.get('frag', 0x4000 if s.get('df') else 0)
    tot = s.get('tot_len')
    if 'tot_len_d' in s:
        tot = 20 + (len(options) + 3) // 4 * 4 + len(l4b) + s['tot_len_d']
    return pkt.ip4(src, dst, proto, l4b, ttl=s.get('ttl', 64),
                   tos=s.get('tos', 0), ident=s.get('ident', idx), frag=frag,
                   options=options, ihl=s.get('ihl'), tot_len=tot,
                   check=s.get('ipcsum'), version=s.get('version', 4))


def _ip6(s, src, dst, nh, payload, idx):
    plen = s.get('plen')
    if 'plen_d' in s:
        plen = len(payload) + s['plen_d']
    return pkt.ip6(src, dst, nh, payload, hlim=s.get('ttl', 64),
                   tc=s.get('tos', 0), flow=s.get('flow', idx & 0xfffff),
                   plen=plen, version=s.get('version', 6))


def _tail(s, t, b):
    if 'trail' in s:
        b += bytes(s['trail'])
    if 'junk' in s:
        b += FILL[7:7 + s['junk']]
    if s.get('pad60') and len(b) < 60:
        b += bytes(60 - len(b))
    b = bytearray(b)
    for pos, x in s.get('mut', ()):
        if pos < len(b):
            b[pos] ^= x
    if 'cut' in s:
        del b[s['cut']:]
    return clamp(t, bytes(b), s.get('port', 'gen'))


def clamp(t, frame, port='gen'):
    """AF_PACKET sends at most the port's MTU, plus 4 bytes after an
    802.1Q EtherType (packet_extra_vlan_len_allowed())."""
    vlan = frame[12:14] == b'\x81\x00'
    return frame[:14 + port_mtu(t, port) + (4 if vlan else 0)]


def port_mtu(t, port):
    """The MTU of a host's port (sink2's is sink's)."""
    return t.mtu.get(port, t.mtu['sink'])


def _val(k, v):
    if k == 'tags':
        return ','.join('%04x:%04x' % tv for tv in v)
    if k in ('frag', 'etype'):
        return '0x%04x' % v
    if isinstance(v, (list, tuple)):
        return ','.join(map(str, v))
    return str(v)


def describe(s):
    return ' '.join('%s=%s' % (k, _val(k, v)) for k, v in s.items())
