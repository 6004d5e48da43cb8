#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Raw IPv4 ICMP echo requests with any source address.

  rawsend.py IFNAME DST_MAC SRC DST COUNT [MARK_SRC]

Sends COUNT echo requests from SRC to DST as Ethernet frames out of IFNAME
(from its MAC to DST_MAC) through an AF_PACKET socket, so the source need
not be one of the sender's addresses: spoofed sources for the
reverse-path filter tests. Run it inside the sender's namespace.

With MARK_SRC, two markers follow the requests, from MARK_SRC to DST: an
echo reply without IP options, then one with an IP option (four bytes:
three NOPs and an end of list). The receiver counts them as echo replies
(InEchoReps), apart from the requests (InEchos), and sends nothing back.
With markers the sender keeps to one CPU (the first it may run on), so
that every frame it sends takes the same per-CPU path (why:
tests/net/test_rp_filter.sh).
"""
import os
import socket
import struct
import sys
import time

ECHO_REQUEST, ECHO_REPLY = 8, 0
NO_OPTIONS = b''
# NOP, NOP, NOP, end of options list: a valid option field of 4 bytes.
NOP_OPTIONS = b'\x01\x01\x01\x00'


def csum(b):
    if len(b) % 2:
        b += b'\0'
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def frame(smac, dmac, src, dst, seq, icmp_type=ECHO_REQUEST,
          options=NO_OPTIONS, payload=b'xfib rp_filter test'):
    icmp = struct.pack('!BBHHH', icmp_type, 0, 0, 0x5846, seq) + payload
    icmp = icmp[:2] + struct.pack('!H', csum(icmp)) + icmp[4:]
    hlen = 20 + len(options)
    ip = struct.pack('!BBHHHBBH4s4s', 0x40 | hlen // 4, 0, hlen + len(icmp),
                     seq, 0, 64, 1, 0, socket.inet_aton(src),
                     socket.inet_aton(dst)) + options
    ip = ip[:10] + struct.pack('!H', csum(ip)) + ip[12:]
    return dmac + smac + b'\x08\x00' + ip + icmp


def main():
    if len(sys.argv) not in (6, 7):
        sys.exit(__doc__)
    ifname, dmac, src, dst, count = sys.argv[1:6]
    mark_src = sys.argv[6] if len(sys.argv) == 7 else None
    if mark_src:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    with open('/sys/class/net/%s/address' % ifname) as f:
        smac = bytes.fromhex(f.read().strip().replace(':', ''))
    dmac = bytes.fromhex(dmac.replace(':', ''))
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
    s.bind((ifname, 0))
    frames = [frame(smac, dmac, src, dst, seq + 1) for seq in range(int(count))]
    if mark_src:
        frames += [frame(smac, dmac, mark_src, dst, 1, ECHO_REPLY, opts,
                         b'xfib rp_filter mark')
                   for opts in (NO_OPTIONS, NOP_OPTIONS)]
    for f in frames:
        s.send(f)
        # Paced: a veth queues a few hundred frames at most.
        time.sleep(0.001)


if __name__ == '__main__':
    main()
