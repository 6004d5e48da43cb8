#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Differential packet test: the router with and without xfib.

  difftest.py gen --config C --seed S --first I --count N [--only I,...]
                  [--nat | --rules] OUT
      the frames of a run: crafted cases, then random and mutated ones;
      --nat: the NAT run's (natcases.py), with their conntrack entries;
      --rules: the policy-routing run's (rulecases.py)
  difftest.py run --config C --frames F [--reasm-limit S] [--settle S] OUT
      sends them through the router, captures what comes out anywhere
  difftest.py ctlines --config C --frames F
      the conntrack entries of the frames' flows, as dt_ct.c reads them
  difftest.py ctcheck --config C --frames F < `conntrack -L`
      conntrack holds each of those entries as created
  difftest.py rulecheck --config C --frames F RUN
      the policy-routing run's frames (--rules) came out of a run as
      the rules they reach say (rulecases.CHECKS): each rule decides some
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
import ipaddress
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
import natcases  # noqa: E402
import pkt  # noqa: E402
import report  # noqa: E402
import rulecases  # noqa: E402
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
    if a.nat:
        crafted = natcases.Crafted(t)
        ncrafted = len(crafted.specs)
    elif a.rules:
        crafted = rulecases.crafted()
        ncrafted = len(crafted)
    else:
        crafted = cases.crafted(t)
        ncrafted = len(crafted)
    if a.only:
        indices = [int(x) for x in a.only.split(',')]
    else:
        indices = list(range(a.first, a.first + a.count))
    frames, desc, ports, ct, flows = [], {}, [], [], {}
    for i in indices:
        if a.nat:
            f, d, port, fl = natcases.frame_at(t, crafted, a.seed, i)
            ports.append(port)
            if fl.entry and fl.k not in flows:
                flows[fl.k] = fl.line()
                ct.append(flows[fl.k])
            elif fl.entry and flows[fl.k] != fl.line():
                raise RuntimeError('frame %d: flow %d is two flows (more '
                                   'random frames than flows)' % (i, fl.k))
        elif a.rules:
            f, d, port = rulecases.frame_at(t, crafted, a.seed, i)
            ports.append(port)
        else:
            f, d = cases.frame_at(t, crafted, a.seed, i)
        frames.append(f)
        desc[i] = d
    save(a.out, dict(indices=indices, frames=frames, desc=desc,
                     crafted=ncrafted, seed=a.seed, ports=ports or None,
                     ct=ct))
    ncraft = sum(1 for i in indices if i < ncrafted)
    print('difftest: %d frames (%d crafted of %d, %d random), seed %d%s' %
          (len(frames), ncraft, ncrafted, len(frames) - ncraft, a.seed,
           ', %d conntrack entries' % len(ct) if a.nat else ''))
    return 0


def cmd_ctlines(t, a):
    for line in load(a.frames)['ct']:
        print(line)
    return 0


def _ct_listed(text):
    """conntrack -L's entries: (proto, src, sport, dst, dport) of the
    original tuple -> (reply tuple, words without '=')."""
    got = {}
    for line in text.splitlines():
        w = line.split()
        if len(w) < 3 or w[0] not in ('tcp', 'udp', 'icmp', 'icmpv6'):
            continue
        kv = [x.split('=', 1) for x in w if '=' in x]
        tup, cur = [], {}
        for k, v in kv:
            if k in cur:
                tup.append(cur)
                cur = {}
            cur[k] = v
        tup.append(cur)
        if len(tup) < 2:
            continue

        def key(x):
            port = x.get('sport', x.get('id'))
            return (ipaddress.ip_address(x['src']), port,
                    ipaddress.ip_address(x['dst']), x.get('dport', '0'))
        proto = 'icmp' if w[0].startswith('icmp') else w[0]
        got[(proto,) + key(tup[0])] = (key(tup[1]),
                                      {x for x in w if '=' not in x})
    return got


def cmd_ctcheck(t, a):
    """Every entry of the frames' flows is in conntrack -L (standard
    input) as created: its reply tuple, the NAT's, replied and assured,
    TCP ESTABLISHED."""
    got = _ct_listed(sys.stdin.read())
    bad = []
    want = load(a.frames)['ct']
    for line in want:
        w = line.split()
        proto, src, sport, dst, dport = w[:5]
        nat = {w[i]: (w[i + 1], w[i + 2]) for i in range(5, len(w), 3)}
        rsrc, rsport = nat.get('dnat', (dst, dport))
        rdst, rdport = nat.get('snat', (src, '0'))
        if rdport == '0':
            rdport = sport
        ip = ipaddress.ip_address
        if proto == 'icmp':
            reply = (ip(rsrc), rdport, ip(rdst), '0')
        else:
            reply = (ip(rsrc), rsport, ip(rdst), rdport)
        e = got.get((proto, ip(src), sport, ip(dst), dport))
        if e is None:
            bad.append('%s: not listed' % line)
        elif e[0] != reply:
            bad.append('%s: reply %s' % (line, e[0]))
        elif '[ASSURED]' not in e[1] or '[UNREPLIED]' in e[1] or \
                (proto == 'tcp' and 'ESTABLISHED' not in e[1]):
            bad.append('%s: %s' % (line, ' '.join(sorted(e[1]))))
    for b in bad[:10]:
        print('difftest: ctcheck: %s' % b)
    print('difftest: conntrack lists %d entries, %d of the %d created as '
          'expected' % (len(got), len(want) - len(bad), len(want)))
    return 1 if bad else 0


def cmd_run(t, a):
    fr = load(a.frames)
    w = wire.Wire(t)
    t0 = time.monotonic()
    outputs, errors = w.run(fr['frames'], a.reasm_limit, fr.get('ports'),
                            a.settle)
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
    if fr.get('ports'):
        # The planting program sees the generator's port only.
        frames = {k: f if p == 'gen' else b''
                  for (k, f), p in zip(frames.items(), fr['ports'])}
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


def cmd_rulecheck(t, a):
    fr = load(a.frames)
    ia = compare.index(t, load(a.run)['outputs'])
    problems = rulecases.check(t, rulecases.crafted(), fr['indices'], ia)
    for p in problems:
        print('difftest: rulecheck: %s' % p)
    return 1 if problems else 0


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
    kind = g.add_mutually_exclusive_group()
    kind.add_argument('--nat', action='store_true')
    kind.add_argument('--rules', action='store_true')
    g.add_argument('out')
    r = sub.add_parser('run')
    r.add_argument('--frames', required=True)
    r.add_argument('--reasm-limit', type=float, default=10)
    r.add_argument('--settle', type=float, default=0)
    r.add_argument('out')
    for name in ('ctlines', 'ctcheck'):
        sub.add_parser(name).add_argument('--frames', required=True)
    rc = sub.add_parser('rulecheck')
    rc.add_argument('--frames', required=True)
    rc.add_argument('run')
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
        return {'gen': cmd_gen, 'run': cmd_run, 'compare': cmd_compare,
                'ctlines': cmd_ctlines, 'ctcheck': cmd_ctcheck,
                'rulecheck': cmd_rulecheck}[a.cmd](t, a)
    except (OSError, RuntimeError) as e:
        print('difftest: %s: %s' % (a.cmd, e), file=sys.stderr)
        return 2


if __name__ == '__main__':
    sys.exit(main())
