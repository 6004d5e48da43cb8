#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""UDP flows for the multipath tests.

  flows.py send DST NFLOWS PKTS [BASE_PORT]
      NFLOWS flows to DST port 9, flow i from source port BASE_PORT + i
      (default 20000), PKTS datagrams each, interleaved.
  flows.py count PCAP...
      Reads tcpdump -w captures (Ethernet) and prints one JSON object per
      file: {"frames": n, "ports": {sport: count}, "macs": ["src>dst"],
      "ttls": [ttl or hop limit]} for UDP datagrams to port 9.
  flows.py frames PCAP...
      The number of those datagrams in all the captures together.
"""
import json
import socket
import struct
import sys
import time


def send(dst, nflows, pkts, base):
    fam = socket.AF_INET6 if ':' in dst else socket.AF_INET
    socks = []
    for i in range(nflows):
        s = socket.socket(fam, socket.SOCK_DGRAM)
        s.bind(('', base + i))
        socks.append(s)
    for _ in range(pkts):
        for i, s in enumerate(socks):
            s.sendto(b'xfib flow test', (dst, 9))
            # Paced: a veth queues at most 256 redirected frames, and
            # the test counts every datagram.
            if i % 16 == 15:
                time.sleep(0.002)
    for s in socks:
        s.close()


def mac(b):
    return ':'.join('%02x' % x for x in b)


def count(path):
    ports, macs, ttls, frames = {}, set(), set(), 0
    with open(path, 'rb') as f:
        hdr = f.read(24)
        if len(hdr) < 24:
            return {'frames': 0, 'ports': {}, 'macs': [], 'ttls': []}
        endian = '<' if struct.unpack('<I', hdr[:4])[0] in (0xa1b2c3d4, 0xa1b23c4d) else '>'
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                break
            caplen = struct.unpack(endian + 'IIII', rec)[2]
            pkt = f.read(caplen)
            etype = struct.unpack('!H', pkt[12:14])[0]
            l3 = pkt[14:]
            if etype == 0x0800 and l3[9] == 17:
                ttl, l4 = l3[8], l3[(l3[0] & 15) * 4:]
            elif etype == 0x86dd and l3[6] == 17:
                ttl, l4 = l3[7], l3[40:]
            else:
                continue
            sport, dport = struct.unpack('!HH', l4[:4])
            if dport != 9:
                continue
            frames += 1
            ports[sport] = ports.get(sport, 0) + 1
            macs.add(mac(pkt[6:12]) + '>' + mac(pkt[0:6]))
            ttls.add(ttl)
    return {'frames': frames, 'ports': ports, 'macs': sorted(macs),
            'ttls': sorted(ttls)}


def main(argv):
    if len(argv) >= 4 and argv[1] == 'send':
        send(argv[2], int(argv[3]), int(argv[4]),
             int(argv[5]) if len(argv) > 5 else 20000)
    elif len(argv) >= 3 and argv[1] == 'count':
        for p in argv[2:]:
            print(json.dumps(count(p)))
    elif len(argv) >= 3 and argv[1] == 'frames':
        print(sum(count(p)['frames'] for p in argv[2:]))
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
