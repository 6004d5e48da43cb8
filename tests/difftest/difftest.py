#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Differential packet test: the router with and without xfib.

  difftest.py gen --config C --seed S --first I --count N [--only I,...] OUT
      the frames of a run: crafted cases, then random and mutated ones
  difftest.py run --config C --frames F [--reasm-limit S] OUT
      sends them through the router, captures what comes out anywhere
  difftest.py compare --config C --frames F --expect same|plant
                      --names A,B [--max N] RUN_A RUN_B
      compares two captures; 'plant' expects differences exactly on the
      frames the planting program changes (tests/difftest/dt_plant.bpf.c)

The configuration (C) is the JSON tests/difftest/run.sh writes: the
namespaces, ports, MACs, networks and router addresses of the topology.
Files are pickles. Exit status: 0 as expected, 1 not, 2 harness error.
"""
import argparse
import collections
import json
import os
import pickle
import struct
import sys
import time

# The modules next to this file, without writing .pyc files into the tree.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import build  # noqa: E402
import cases  # noqa: E402
import compare  # noqa: E402
import pkt  # noqa: E402
import report  # noqa: E402
import wire  # noqa: E402

PLANT_EVERY = 97


def load(path):
    with open(path, 'rb') as f:
        return pickle.load(f)


def save(path, obj):
    with open(path + '.tmp', 'wb') as f:
        pickle.dump(obj, f, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(path + '.tmp', path)


def cmd_gen(t, a):
    crafted = cases.crafted(t)
    if a.only:
        indices = [int(x) for x in a.only.split(',')]
    else:
        indices = list(range(a.first, a.first + a.count))
    frames, desc = [], {}
    for i in indices:
        f, d = cases.frame_at(t, crafted, a.seed, i)
        frames.append(f)
        desc[i] = d
    save(a.out, dict(indices=indices, frames=frames, desc=desc,
                     crafted=len(crafted), seed=a.seed))
    ncraft = sum(1 for i in indices if i < len(crafted))
    print('difftest: %d frames (%d crafted of %d, %d random), seed %d' %
          (len(frames), ncraft, len(crafted), len(frames) - ncraft, a.seed))
    return 0


def cmd_run(t, a):
    fr = load(a.frames)
    w = wire.Wire(t)
    t0 = time.monotonic()
    outputs, errors = w.run(fr['frames'], a.reasm_limit)
    secs = time.monotonic() - t0
    errors = {fr['indices'][i]: e for i, e in errors.items()}
    save(a.out, dict(outputs=outputs, errors=errors, secs=secs))
    by = collections.Counter(p for p, _ in outputs)
    print('difftest: sent %d frames in %.1f s (%d not accepted by the '
          'socket), %d frames out: %s' %
          (len(fr['frames']), secs, len(errors), len(outputs),
           ', '.join('%s %d' % kv for kv in sorted(by.items()))))
    return 0


def planted(frame):
    """True if dt_plant.bpf.c changes this frame (keep the two in step)."""
    if len(frame) < 14 + 20 + 8 + pkt.TAG_LEN + 1:
        return False
    if frame[12:14] != b'\x08\x00' or frame[14] != 0x45 or frame[23] != 17:
        return False
    # The changed byte (54) must be part of the IP packet.
    if struct.unpack_from('!H', frame, 16)[0] < 54 - 14 + 1:
        return False
    if frame[42:46] != pkt.MAGIC:
        return False
    return struct.unpack_from('!I', frame, 46)[0] % PLANT_EVERY == 0


def _expect_plant(fr, ia, diffs):
    """Differences exactly on planted frames; every planted frame the
    first run saw an output of differs. Returns the problems."""
    frames = dict(zip(fr['indices'], fr['frames']))
    bad = [k for k in diffs if k is None or not planted(frames[k])]
    want = {k for k, f in frames.items() if planted(f) and k in ia}
    missed = sorted(want - set(diffs))
    problems = []
    if not diffs:
        problems.append('the planted difference was not found')
    if bad:
        problems.append('%d differences on frames not planted' % len(bad))
    if missed:
        problems.append('%d planted frames not found, e.g. %s' %
                        (len(missed), missed[:10]))
    return problems, bad, len(want)


def cmd_compare(t, a):
    fr = load(a.frames)
    ra, rb = load(a.run_a), load(a.run_b)
    names = a.names.split(',')
    ia, ib = compare.index(t, ra['outputs']), compare.index(t, rb['outputs'])
    diffs = compare.differences(ia, ib)
    print('difftest: %s: %s %s, %s %s' % (
        a.label, names[0], compare.points(ia), names[1], compare.points(ib)))
    shown = diffs
    if a.expect == 'plant':
        problems, shown, nplant = _expect_plant(fr, ia, diffs)
        print('difftest: %s: %d differences, %d planted frames had an '
              'output' % (a.label, len(diffs), nplant))
    else:
        problems = ['%d frames differ' % len(diffs)] if diffs else []
    if ra['errors'] != rb['errors']:
        problems.append('the socket refused different frames')
    kinds = collections.Counter(
        report.kind(fr['desc'].get(k, 'untagged')) for k in shown)
    for k, n in kinds.most_common(40):
        print('difftest:   %6d  %s' % (n, k))
    for k in shown[:a.max]:
        print('\n'.join(report.difference(k, fr['desc'], ia, ib, names)))
    if problems:
        print('difftest: %s: FAIL: %s' % (a.label, '; '.join(problems)))
        return 1
    print('difftest: %s: as expected (%d frames, %d differences)' %
          (a.label, len(fr['frames']), len(diffs)))
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--config', required=True)
    sub = p.add_subparsers(dest='cmd', required=True)
    g = sub.add_parser('gen')
    g.add_argument('--seed', type=int, default=1)
    g.add_argument('--first', type=int, default=0)
    g.add_argument('--count', type=int, default=20000)
    g.add_argument('--only')
    g.add_argument('out')
    r = sub.add_parser('run')
    r.add_argument('--frames', required=True)
    r.add_argument('--reasm-limit', type=float, default=10)
    r.add_argument('out')
    c = sub.add_parser('compare')
    c.add_argument('--frames', required=True)
    c.add_argument('--expect', choices=('same', 'plant'), default='same')
    c.add_argument('--names', default='a,b')
    c.add_argument('--label', default='compare')
    c.add_argument('--max', type=int, default=20)
    c.add_argument('run_a')
    c.add_argument('run_b')
    a = p.parse_args()
    with open(a.config) as f:
        t = build.Topo(json.load(f))
    try:
        return {'gen': cmd_gen, 'run': cmd_run, 'compare': cmd_compare}[
            a.cmd](t, a)
    except (OSError, RuntimeError) as e:
        print('difftest: %s: %s' % (a.cmd, e), file=sys.stderr)
        return 2


if __name__ == '__main__':
    sys.exit(main())
