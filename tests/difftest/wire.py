# SPDX-License-Identifier: GPL-2.0-only
"""Sends frames into the router and captures everything that comes out.

One AF_PACKET socket per host port (gen, sink, sink2, sink3) sends raw
frames into the router (the generator's port, unless a frame is given
another), and one per host port captures what the host receives. The
process stays on one CPU, so the router handles the frames in the order
they were sent, and the frames go in batches: after each batch a barrier
(one frame that surely reaches each capture point) is sent and waited
for, so no queue on the way can overflow and nothing of the batch is
still in flight when the batch is done. At the end the run also waits
until the router holds no fragment reassembly queue (their timeouts send
ICMP errors) and sends two more barriers.
"""
import ctypes
import os
import select
import socket
import struct
import time

import pkt

CLONE_NEWNET = 0x40000000
ETH_P_ALL = 3
SOL_PACKET = 263
PACKET_AUXDATA = 8
PACKET_STATISTICS = 6
PACKET_IGNORE_OUTGOING = 23
SO_RCVBUFFORCE = 33
TP_STATUS_VLAN_VALID = 0x10
TP_STATUS_VLAN_TPID_VALID = 0x40
BATCH = 64
BARRIER_TIMEOUT = 10.0

_libc = ctypes.CDLL(None, use_errno=True)


def setns(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        if _libc.setns(fd, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, 'setns %s: %s' % (path, os.strerror(err)))
    finally:
        os.close(fd)


class InNetns:
    """with InNetns(name): ... runs the block in network namespace name."""

    def __init__(self, name):
        self.path = '/run/netns/' + name

    def __enter__(self):
        self.home = os.open('/proc/self/ns/net', os.O_RDONLY)
        setns(self.path)

    def __exit__(self, *exc):
        try:
            if _libc.setns(self.home, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), 'setns back')
        finally:
            os.close(self.home)


def capture_socket(ns, ifname):
    with InNetns(ns):
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                          socket.htons(ETH_P_ALL))
        s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 32 << 20)
        s.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
        s.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
        s.bind((ifname, ETH_P_ALL))
    s.setblocking(False)
    return s


def send_socket(ns, ifname):
    with InNetns(ns):
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
        s.bind((ifname, 0))
    return s


def drops(s):
    """Frames the kernel dropped for this socket since the last call."""
    st = s.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8)
    return struct.unpack('II', st)[1]


def receive(s):
    """One frame from a capture socket, with a VLAN tag the kernel took
    off put back in place; None when there is none."""
    try:
        data, anc, _, _ = s.recvmsg(65536, socket.CMSG_SPACE(20))
    except BlockingIOError:
        return None
    for level, typ, val in anc:
        if level == SOL_PACKET and typ == PACKET_AUXDATA and len(val) >= 20:
            status, _, _, _, _, tci, tpid = struct.unpack('IIIHHHH', val[:20])
            if status & TP_STATUS_VLAN_VALID:
                if not status & TP_STATUS_VLAN_TPID_VALID:
                    tpid = 0x8100
                data = data[:12] + struct.pack('!HH', tpid, tci) + data[12:]
    return data


class Wire:
    def __init__(self, topo):
        cfg = topo.cfg
        self.topo = topo
        # One CPU: the frames are handled in the order they are sent.
        os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})
        self.points = {p: capture_socket(ns, ifn)
                       for p, (ns, ifn) in cfg['capture'].items()}
        self.txs = {p: send_socket(ns, ifn)
                    for p, (ns, ifn) in cfg['capture'].items()}
        self.tx = self.txs['gen']
        self.rtr = cfg['ns']['rtr']
        self.seq = 0
        self.outputs = []
        for s in self.points.values():
            drops(s)

    # ---- barriers ---------------------------------------------------------

    def _barrier_frames(self, seq):
        t = self.topo
        data = pkt.tag(seq, pkt.BARRIER)
        src = pkt.addr(t.src[4]['gen'])
        frames = []
        for point in self.points:
            if point == 'gen':
                dst = pkt.addr(t.dst[4]['local'])
                l4 = pkt.icmp4(8, 0, struct.pack('!HH', 0xb0, 1), data)
                proto = 1
            else:
                dst = pkt.addr(t.dst[4][point])
                l4 = pkt.udp(src, dst, 7, 9, data)
                proto = 17
            ip = pkt.ip4(src, dst, proto, l4)
            frames.append(pkt.eth(t.mac['r_gen'], t.mac['gen'], 0x0800) + ip)
        return frames

    def barrier(self):
        """Sends a barrier to every capture point and collects outputs
        until each one has seen it."""
        self.seq += 1
        seq = self.seq
        for f in self._barrier_frames(seq):
            self.tx.send(f)
        waiting = set(self.points)
        deadline = time.monotonic() + BARRIER_TIMEOUT
        socks = {s.fileno(): p for p, s in self.points.items()}
        while waiting:
            left = deadline - time.monotonic()
            if left <= 0:
                raise RuntimeError('barrier %d not seen at %s' %
                                   (seq, ', '.join(sorted(waiting))))
            ready, _, _ = select.select(list(socks), [], [], left)
            for fd in ready:
                point = socks[fd]
                while True:
                    f = receive(self.points[point])
                    if f is None:
                        break
                    b = pkt.find_tag(f, pkt.BARRIER)
                    if b is None:
                        self.outputs.append((point, f))
                    elif b == seq:
                        waiting.discard(point)

    # ---- a run ------------------------------------------------------------

    def frag_queues(self):
        n = 0
        with InNetns(self.rtr):
            for name in ('sockstat', 'sockstat6'):
                with open('/proc/self/net/' + name) as f:
                    for line in f:
                        if line.startswith(('FRAG:', 'FRAG6:')):
                            n += int(line.split()[2])
        return n

    def wait_reassembly(self, limit):
        deadline = time.monotonic() + limit
        while self.frag_queues():
            if time.monotonic() > deadline:
                raise RuntimeError('fragment queues still open after %d s'
                                   % limit)
            time.sleep(0.05)

    def run(self, frames, reasm_limit, ports=None, settle=0):
        """Sends frames (frame i by host port ports[i], default the
        generator's); returns (outputs, send errors by index). The run
        waits settle seconds after its last frame: what the router sends
        that long after a frame (ICMP errors of reassembly queues the run
        cannot count) is still the run's."""
        self.outputs = []
        self.barrier()
        self.outputs = []  # anything from before the run is not ours
        errors = {}
        for start in range(0, len(frames), BATCH):
            for i in range(start, min(start + BATCH, len(frames))):
                tx = self.txs[ports[i]] if ports else self.tx
                try:
                    tx.send(frames[i])
                except OSError as e:
                    errors[i] = e.strerror
            self.barrier()
        time.sleep(settle)
        self.wait_reassembly(reasm_limit)
        self.barrier()
        self.barrier()
        lost = {p: drops(s) for p, s in self.points.items()}
        if any(lost.values()):
            raise RuntimeError('capture sockets dropped frames: %s' % lost)
        return self.outputs, errors
