#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Waits until xfib's dataplane has a valid neighbour for an address.

    neigh_poll.py PIN_DIR IFINDEX ADDR [TIMEOUT_S]

Reads the pinned maps directly with the bpf() system call, as the XDP
program does: xfib_neigh_hosts[(ifindex, family, addr)] -> index, then
xfib_neighs[index].state (include/xfib/maps.h). Prints the CLOCK_REALTIME
time at which the entry was first seen valid (seconds, with nanoseconds)
and exits 0; exits 1 on timeout, 2 if the entry was valid from the start,
77 where it cannot run. Before polling it prints "ready", so the caller
knows when to cause the change. Polls every
0.2 ms, so the time is precise to well under a millisecond, unlike a
bpftool loop.
"""
import ctypes
import ipaddress
import os
import platform
import struct
import sys
import time

SYS_BPF = {"x86_64": 321, "aarch64": 280, "riscv64": 280}.get(platform.machine())
BPF_MAP_LOOKUP_ELEM = 1
BPF_OBJ_GET = 7
NEIGH_SIZE = 40          # struct xfib_neigh
NEIGH_STATE_OFF = 6      # state byte
NEIGH_VALID = 1          # XFIB_NEIGH_VALID

libc = ctypes.CDLL(None, use_errno=True)


def bpf(cmd, attr):
    buf = ctypes.create_string_buffer(attr, 128)
    ret = libc.syscall(SYS_BPF, cmd, buf, 128)
    return ret, ctypes.get_errno()


def obj_get(path):
    p = ctypes.create_string_buffer(path.encode())
    fd, err = bpf(BPF_OBJ_GET, struct.pack("=QII", ctypes.addressof(p), 0, 0))
    if fd < 0:
        sys.exit(f"neigh_poll: {path}: {os.strerror(err)}")
    return fd


def lookup(fd, key, vsize):
    k = ctypes.create_string_buffer(key, len(key))
    v = ctypes.create_string_buffer(vsize)
    attr = struct.pack("=IIQQQ", fd, 0, ctypes.addressof(k), ctypes.addressof(v), 0)
    ret, _ = bpf(BPF_MAP_LOOKUP_ELEM, attr)
    return v.raw if ret == 0 else None


def main():
    if SYS_BPF is None:
        print(f"neigh_poll: no bpf() number for {platform.machine()}")
        sys.exit(77)
    pin, ifindex, addr = sys.argv[1], int(sys.argv[2]), ipaddress.ip_address(sys.argv[3])
    timeout = float(sys.argv[4]) if len(sys.argv) > 4 else 20.0
    hosts = obj_get(f"{pin}/xfib_neigh_hosts")
    neighs = obj_get(f"{pin}/xfib_neighs")
    key = struct.pack("<IB3x", ifindex, 10 if addr.version == 6 else 2) + addr.packed.ljust(16, b"\0")

    def valid():
        idx = lookup(hosts, key, 4)
        if idx is None:
            return False
        n = lookup(neighs, idx, NEIGH_SIZE)
        return n is not None and n[NEIGH_STATE_OFF] == NEIGH_VALID

    if valid():
        print("neigh_poll: already valid", file=sys.stderr)
        return 2
    print("ready", flush=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if valid():
            print(f"{time.time_ns() / 1e9:.6f}", flush=True)
            return 0
        time.sleep(0.0002)
    return 1


if __name__ == "__main__":
    sys.exit(main())
