# SPDX-License-Identifier: GPL-2.0-only
"""Frame building blocks for the differential test.

Ethernet with 802.1Q/802.1ad tags, IPv4 with options, IPv6 with extension
headers, UDP, TCP, ICMP and ICMPv6. Checksums are correct unless the
caller asks otherwise; every length field can be overridden.

Every frame the generator makes carries a tag in its payload, right after
the transport header: MAGIC, the frame's index and a check word. Forwarded
frames carry it whole and ICMP errors quote it, so whatever comes out can
be matched to the frame that caused it.
"""
import array
import ipaddress
import struct
import sys

MAGIC = b'xfDT'
BARRIER = b'xfBR'
TAG_LEN = 12
_CHECK = 0x9e3779b9


def tag(idx, magic=MAGIC):
    return magic + struct.pack('!II', idx, idx ^ _CHECK)


def find_tag(b, magic=MAGIC):
    """Index in the first valid tag in b, or None."""
    pos = b.find(magic)
    while pos >= 0:
        if pos + TAG_LEN <= len(b):
            idx, chk = struct.unpack_from('!II', b, pos + 4)
            if chk == idx ^ _CHECK:
                return idx
        pos = b.find(magic, pos + 1)
    return None


def csum(data):
    """Internet checksum of data (the value to store, host int)."""
    if len(data) % 2:
        data = data + b'\0'
    s = sum(array.array('H', data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    s = ~s & 0xffff
    if sys.byteorder == 'little':
        s = ((s & 0xff) << 8) | (s >> 8)
    return s


def addr(a):
    return ipaddress.ip_address(a).packed


def mac(m):
    return bytes.fromhex(m.replace(':', ''))


# ---- layer 2 ---------------------------------------------------------------

def eth(dst, src, etype, tags=()):
    h = dst + src
    for tpid, tci in tags:
        h += struct.pack('!HH', tpid, tci)
    return h + struct.pack('!H', etype)


# ---- IPv4 ------------------------------------------------------------------

def ip4(src, dst, proto, payload, ttl=64, tos=0, ident=0, frag=0,
        options=b'', ihl=None, tot_len=None, check=None, version=4):
    """IPv4 header + payload. frag is the raw flags/offset word. check:
    None (correct over ihl*4 bytes), 'bad', or a number."""
    if ihl is None:
        ihl = 5 + (len(options) + 3) // 4
        options = options.ljust((ihl - 5) * 4, b'\0')
    if tot_len is None:
        tot_len = 20 + len(options) + len(payload)
    hdr = bytearray(struct.pack('!BBHHHBBH4s4s', (version << 4) | (ihl & 15),
                                tos, tot_len & 0xffff, ident & 0xffff,
                                frag & 0xffff, ttl & 0xff, proto, 0, src,
                                dst) + options)
    pkt = hdr + payload
    if check is None or check == 'bad':
        c = csum(bytes(pkt[:max(ihl, 5) * 4]))
        if check == 'bad':
            c ^= 0x5a5a
    else:
        c = check
    struct.pack_into('!H', pkt, 10, c)
    return bytes(pkt)


def opt_rr(slots=2):
    return bytes([7, 3 + 4 * slots, 4]) + bytes(4 * slots)


def opt_ts(slots=2, flag=0):
    step = 8 if flag else 4
    return bytes([68, 4 + step * slots, 5, flag]) + bytes(step * slots)


# ---- IPv6 ------------------------------------------------------------------

def ip6(src, dst, nh, payload, hlim=64, tc=0, flow=0, plen=None, version=6):
    if plen is None:
        plen = len(payload)
    return struct.pack('!IHBB16s16s',
                       (version << 28) | (tc << 20) | (flow & 0xfffff),
                       plen & 0xffff, nh, hlim, src, dst) + payload


def _opts_hdr(opts):
    """Body of a hop-by-hop or destination options header after the next
    header byte: length, options, PadN to a multiple of 8."""
    n = 2 + len(opts)
    pad = (-n) % 8
    if pad == 1:
        opts += b'\0'
    elif pad:
        opts += bytes([1, pad - 2]) + bytes(pad - 2)
    return bytes([(2 + len(opts)) // 8 - 1]) + opts


class Ext:
    """An IPv6 extension header: its type, a builder of next header ->
    bytes, and a name for descriptions."""
    def __init__(self, typ, build, name):
        self.typ, self.build, self.name = typ, build, name


def ext_opts(typ, opts, name):
    """Hop-by-hop (0) or destination options (60) header."""
    return Ext(typ, lambda nh: bytes([nh]) + _opts_hdr(opts), name)


def ext_routing(rtype, segleft, addrs, name):
    body = b''.join(addrs)
    return Ext(43, lambda nh: bytes([nh, 2 * len(addrs), rtype, segleft]) +
               bytes(4) + body, name)


def ext_frag(offset, more, ident, name):
    return Ext(44, lambda nh: struct.pack('!BBHI', nh, 0,
                                          (offset << 3) | more, ident), name)


def ext_ah(name='ah'):
    return Ext(51, lambda nh: struct.pack('!BBHII', nh, 2, 0, 0x100, 1) +
               bytes(4), name)


def ext_raw(typ, body, name):
    """A header of type typ whose bytes after the next header byte are
    body (mobility, HIP, shim6, experimental types)."""
    return Ext(typ, lambda nh: bytes([nh]) + body, name)


def chain(exts, proto):
    """(first next header, bytes of the headers, their lengths)."""
    nh, parts = proto, []
    for e in reversed(exts):
        parts.append(e.build(nh))
        nh = e.typ
    parts.reverse()
    return nh, b''.join(parts), [len(p) for p in parts]


# ---- transport -------------------------------------------------------------

def pseudo(src, dst, proto, length):
    if len(src) == 4:
        return src + dst + struct.pack('!BBH', 0, proto, length & 0xffff)
    return src + dst + struct.pack('!I3xB', length, proto)


def _l4csum(buf, off, src, dst, proto, mode):
    """mode: ok, zero (none), bad, or alt (a checksum that comes out 0
    written as 0xffff, its other form)."""
    if mode == 'zero':
        return buf
    c = csum(pseudo(src, dst, proto, len(buf)) + bytes(buf))
    if (proto == 17 or mode == 'alt') and c == 0:
        c = 0xffff
    if mode == 'bad':
        c ^= 0x00ff
    struct.pack_into('!H', buf, off, c)
    return buf


def udp(src, dst, sport, dport, data, length=None, check='ok'):
    ln = 8 + len(data) if length is None else length
    buf = bytearray(struct.pack('!HHHH', sport, dport, ln & 0xffff, 0) + data)
    return bytes(_l4csum(buf, 6, src, dst, 17, check))


def tcp(src, dst, sport, dport, data, seq=1000, ack=0, flags=0x18,
        win=512, doff=None, options=b'', check='ok'):
    options = options.ljust((len(options) + 3) // 4 * 4, b'\0')
    if doff is None:
        doff = 5 + len(options) // 4
    buf = bytearray(struct.pack('!HHIIBBHHH', sport, dport,
                                seq & 0xffffffff, ack & 0xffffffff,
                                (doff & 15) << 4, flags, win, 0, 0) +
                    options + data)
    return bytes(_l4csum(buf, 16, src, dst, 6, check))


def icmp4(typ, code, rest, data, check='ok'):
    buf = bytearray(struct.pack('!BBH', typ, code, 0) + rest + data)
    if check != 'zero':
        c = csum(bytes(buf))
        struct.pack_into('!H', buf, 2, c ^ (0x00ff if check == 'bad' else 0))
    return bytes(buf)


def icmp6(src, dst, typ, code, rest, data, check='ok'):
    buf = bytearray(struct.pack('!BBH', typ, code, 0) + rest + data)
    return bytes(_l4csum(buf, 2, src, dst, 58, check))
