#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Raw IPv4 ICMP echo requests with any source address.

  rawsend.py IFNAME DST_MAC SRC DST COUNT

Sends COUNT echo requests from SRC to DST as Ethernet frames out of IFNAME
(from its MAC to DST_MAC) through an AF_PACKET socket, so the source need
not be one of the sender's addresses: spoofed sources for the
reverse-path filter tests. Run it inside the sender's namespace.
"""
import socket
import struct
import sys
import time


def csum(b):
    if len(b) % 2:
        b += b'\0'
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def frame(smac, dmac, src, dst, seq):
    icmp = struct.pack('!BBHHH', 8, 0, 0, 0x5846, seq) + b'xfib rp_filter test'
    icmp = icmp[:2] + struct.pack('!H', csum(icmp)) + icmp[4:]
    ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(icmp), seq, 0, 64, 1,
                     0, socket.inet_aton(src), socket.inet_aton(dst))
    ip = ip[:10] + struct.pack('!H', csum(ip)) + ip[12:]
    return dmac + smac + b'\x08\x00' + ip + icmp


def main():
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    ifname, dmac, src, dst, count = sys.argv[1:]
    with open('/sys/class/net/%s/address' % ifname) as f:
        smac = bytes.fromhex(f.read().strip().replace(':', ''))
    dmac = bytes.fromhex(dmac.replace(':', ''))
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
    s.bind((ifname, 0))
    for seq in range(int(count)):
        s.send(frame(smac, dmac, src, dst, seq + 1))
        # Paced: a veth queues a few hundred frames at most.
        time.sleep(0.001)


if __name__ == '__main__':
    main()
