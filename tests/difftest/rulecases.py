# SPDX-License-Identifier: GPL-2.0-only
"""The frames of the policy-routing run (run.sh -R).

The router has a rule set (run.sh dt_rules_router) with every selector
and action xfib walks, each rule deciding the frames to one destination
network of its own (or of its own sources, ports, TOS or ingress port):

  net  rule (IPv4 198.18.NET.0/24, IPv6 2001:db8:NET::/64, NET in hex)
  16   from SRC_IN lookup 100: to sink2
  17   from SRC_IN: table 100 throws, "from SRC_IN lookup 210" to gen
  18   to NET lookup 300: its first half to sink2, the rest on
  19   iif r-sink3 lookup 400 (to sink2), iif r-gen to NET lookup 410 (to
       sink3), iif r-sink2 (no frame comes from there)
  20   tos 0x10 lookup 500: to sink2
  21   ipproto udp dport 5000-5999 lookup 600 (sink2), ipproto tcp sport
       1000-1999 lookup 610 (gen)
  22   not from SRC_NOT to NET goto 720 (past lookup 710: to sink2, and a
       nop); rule 720: to its second half lookup 720 (gen)
  23   blackhole, 24 unreachable, 25 prohibit
  26   lookup main suppress_prefixlength 0, then lookup 910 (default to
       sink3), which throws NET back to main (its default, the sink)
  27   no route but the defaults: main's gives way (rule 900), table
       910's (sink3) answers
and main's own destinations (a route of table 100 too), a fwmark rule
(which matches nothing: no mark) first. Frames come from three source
networks (SRC_IN, SRC_NOT, SRC_OUT, in unique_src: routed back to gen)
and, into r-sink3, from the network behind sink3 (routed3). Each frame's
source differs from the previous ones' (the kernel limits the errors of
unreachable routes per source). Crafted frames cross the destinations
with the sources, ports and transports; random ones combine the same
with TOS, TTL, fragments, extension headers and, for some, random
changes to the header bytes.
"""
import ipaddress
import random

import build
import cases
import compare

NETS = {'from': 16, 'throw': 17, 'to': 18, 'iif': 19, 'tos': 20,
        'ports': 21, 'not': 22, 'bh': 23, 'unreach': 24, 'prohibit': 25,
        'suppress': 26, 'default': 27}
MAIN_DSTS = ('routed', 'routed3', 'sink', 'sink2', 'blackhole', 'unreach',
             'prohibit', 'throw', 'unrouted', 'local')
# Keep in step with run.sh (dt_rules_router).
SRC_NETS = {4: {'in': '198.19.16.0/20', 'not': '198.19.32.0/20',
                'out': '198.19.64.0/18', 'sink3': '198.18.6.0/24'},
            6: {'in': '2001:db8:e:0:1::/80', 'not': '2001:db8:e:0:2::/80',
                'out': '2001:db8:e:0:8::/80', 'sink3': '2001:db8:6::/64'}}
SRCS = ('in', 'not', 'out')
L4S = ('udp', 'tcp', 'syn', 'icmp')
UDP_DPORTS = (4999, 5000, 5500, 5999, 6000, 9)
TCP_SPORTS = (999, 1000, 1500, 1999, 2000, 40000)
TOS = (0, 0x10, 0x11, 0x12, 0x14, 0x18, 0x30, 0x90, 0xb8, 0x04, 0x08)


def dst_addr(fam, name, idx):
    """A destination of network NETS[name], its host varying with idx
    (both halves of a /25 split), or one of main's (build.Topo)."""
    if name not in NETS:
        return name
    host = 1 + idx * 37 % 254
    if fam == 4:
        return '198.18.%d.%d' % (NETS[name], host)
    # Both halves of a /65 split, too.
    return '2001:db8:%x:0:%x::%x' % (NETS[name], idx % 2 * 0x8000, host)


def src_addr(fam, pool, idx):
    net = ipaddress.ip_network(SRC_NETS[fam][pool])
    span = min(net.num_addresses - 2, 65000)
    # sink3's network holds the router and sink3 at .1 and .2.
    return str(net.network_address + 3 + idx % (span - 2))


def crafted():
    out = []
    dsts = tuple(NETS) + MAIN_DSTS
    for fam in (4, 6):
        for dst in dsts:
            for src in SRCS:
                for l4 in L4S:
                    out.append(dict(fam=fam, dst=dst, src=src, l4=l4))
            for l4 in ('udp', 'icmp'):
                out.append(dict(fam=fam, dst=dst, src='sink3', port='sink3',
                                l4=l4))
            out.append(dict(fam=fam, dst=dst, src='out', l4='udp', ttl=1))
            # More of them (both halves of a split network).
            for src in ('out', 'not') * 2:
                out.append(dict(fam=fam, dst=dst, src=src, l4='udp'))
        for src in SRCS:
            for d in UDP_DPORTS:
                out.append(dict(fam=fam, dst='ports', src=src, l4='udp',
                                dport=d))
                out.append(dict(fam=fam, dst='ports', src=src, l4='tcp',
                                dport=d, sport=40000))
            for p in TCP_SPORTS:
                for l4 in ('tcp', 'syn', 'udp'):
                    out.append(dict(fam=fam, dst='ports', src=src, l4=l4,
                                    sport=p))
        for tos in TOS:
            for dst in ('tos', 'from', 'routed', 'default'):
                out.append(dict(fam=fam, dst=dst, src='out', tos=tos))
            out.append(dict(fam=fam, dst='tos', src='sink3', port='sink3',
                            tos=tos))
        # Non-first fragments carry no ports: the port rules see none.
        frag = dict(frag=0x20b9) if fam == 4 else dict(exts=['frag-mid'])
        for p in (5000, 1000):
            out.append(dict(fam=fam, dst='ports', src='out', l4='udp',
                            sport=p, dport=p, **frag))
            out.append(dict(fam=fam, dst='ports', src='out', l4='tcp',
                            sport=p, dport=p, **frag))
    return out


def random_spec(rng):
    fam = rng.choice((4, 6))
    s = dict(fam=fam, dst=rng.choice(tuple(NETS) + MAIN_DSTS),
             l4=rng.choice(L4S + ('icmperr', 'raw253')))
    if rng.random() < 0.15:
        s.update(src='sink3', port='sink3')
    else:
        s['src'] = rng.choice(SRCS)
    if s['l4'] in ('udp', 'tcp', 'syn'):
        if rng.random() < 0.5:
            s['dport'] = rng.choice(UDP_DPORTS)
        if rng.random() < 0.5:
            s['sport'] = rng.choice(TCP_SPORTS)
    if rng.random() < 0.3:
        s['tos'] = rng.choice(TOS)
    if rng.random() < 0.1:
        s['ttl'] = rng.choice((0, 1, 2))
    if fam == 4 and rng.random() < 0.08:
        s['frag'] = rng.choice((0x2000, 0x20b9, 0x00b9, 0x4000))
    if fam == 6 and rng.random() < 0.08:
        s['exts'] = rng.choice(cases.EXTS6)
    s['size'] = rng.randint(0, 200)
    return s


def _frame(t, idx, s):
    """The spec with its addresses filled in, and its frame."""
    s = dict(s)
    fam = s['fam']
    s['dst'] = dst_addr(fam, s['dst'], idx)
    s['src'] = src_addr(fam, s['src'], idx)
    frame, _, tag_at = build.build(t, idx, s)
    return frame, tag_at


def frame_at(t, crafted_specs, seed, idx):
    """(frame, description, the port it enters by) of frame idx."""
    if idx < len(crafted_specs):
        s = crafted_specs[idx]
        frame, _ = _frame(t, idx, s)
        return frame, 'crafted ' + build.describe(s), s.get('port', 'gen')
    rng = random.Random('rules:%d:%d' % (seed, idx))
    s = random_spec(rng)
    frame, tag_at = _frame(t, idx, s)
    desc = 'random ' + build.describe(s)
    if rng.random() < 0.3:
        frame, ops = cases.mutate(rng, frame, tag_at)
        desc += ' mutated ' + ops
    port = s.get('port', 'gen')
    return build.clamp(t, frame, port), desc, port


# ---- which rule decided: the kernel's run checked ----------------------------

def _second_half(fam, idx):
    """Whether dst_addr(fam, NET, idx) is in the second half of NET's
    /25 (IPv4) or /65 (IPv6)."""
    return 1 + idx * 37 % 254 >= 128 if fam == 4 else idx % 2 == 1


def _plain(s, dst, src='out', port='gen'):
    """A UDP frame to dst from src into port, with nothing else set."""
    return s.get('l4') == 'udp' and s['dst'] == dst and \
        s['src'] == src and s.get('port', 'gen') == port and \
        set(s) <= {'fam', 'dst', 'src', 'l4', 'port'}


# What each rule does to the crafted frames it decides, and to those it
# does not: (what, test(spec, index), outcome). An outcome is the host a
# frame leaves for, 'none' (dropped) or 'icmp' (an ICMP error the router
# sends back to gen, of the code in ICMP_CODE).
CHECKS = (
    ('from: a source inside', lambda s, i: _plain(s, 'from', 'in'), 'sink2'),
    ('from: a source outside', lambda s, i: _plain(s, 'from'), 'sink3'),
    ('throw: on to the next rule', lambda s, i: _plain(s, 'throw', 'in'),
     'gen'),
    ('throw: the rule not reached', lambda s, i: _plain(s, 'throw'), 'sink3'),
    ('to: the routed half', lambda s, i: _plain(s, 'to') and
     not _second_half(s['fam'], i), 'sink2'),
    ('to: the other half, no route', lambda s, i: _plain(s, 'to') and
     _second_half(s['fam'], i), 'sink3'),
    ('iif: the ingress port', lambda s, i: _plain(s, 'iif'), 'sink3'),
    ('iif: another port', lambda s, i: _plain(s, 'iif', 'sink3', 'sink3'),
     'sink2'),
    ('tos: matching', lambda s, i: s['dst'] == 'tos' and
     s.get('tos') == 0x10 and s.get('port') is None, 'sink2'),
    ('tos: not matching', lambda s, i: s['dst'] == 'tos' and
     s.get('tos') in (0, 0x08) and s.get('port') is None, 'sink3'),
    ('dport: inside', lambda s, i: s['dst'] == 'ports' and
     s.get('l4') == 'udp' and s.get('dport') in (5000, 5999) and
     'exts' not in s and 'frag' not in s, 'sink2'),
    ('dport: outside', lambda s, i: s['dst'] == 'ports' and
     s.get('l4') == 'udp' and s.get('dport') in (4999, 6000), 'sink3'),
    ('dport: not UDP', lambda s, i: s['dst'] == 'ports' and
     s.get('l4') == 'tcp' and s.get('dport') == 5000 and
     'exts' not in s and 'frag' not in s, 'sink3'),
    ('sport: inside', lambda s, i: s['dst'] == 'ports' and
     s.get('l4') in ('tcp', 'syn') and s.get('sport') in (1000, 1999) and
     'exts' not in s and 'frag' not in s, 'gen'),
    ('sport: outside', lambda s, i: s['dst'] == 'ports' and
     s.get('l4') in ('tcp', 'syn') and s.get('sport') in (999, 2000),
     'sink3'),
    ('not: the excepted source', lambda s, i: _plain(s, 'not', 'not'),
     'sink2'),
    ('not: goto, second half', lambda s, i: _plain(s, 'not') and
     _second_half(s['fam'], i), 'gen'),
    ('not: goto, first half', lambda s, i: _plain(s, 'not') and
     not _second_half(s['fam'], i), 'sink3'),
    ('blackhole', lambda s, i: _plain(s, 'bh'), 'none'),
    ('unreachable', lambda s, i: _plain(s, 'unreach'), 'icmp unreachable'),
    ('prohibit', lambda s, i: _plain(s, 'prohibit'), 'icmp prohibit'),
    ('suppress: main\'s default given way', lambda s, i:
     _plain(s, 'default'), 'sink3'),
    ('suppress: thrown back to main\'s default', lambda s, i:
     _plain(s, 'suppress'), 'sink'),
    ('suppress: main\'s route kept', lambda s, i: _plain(s, 'routed'),
     'sink'),
    ('table 100\'s route over main\'s', lambda s, i:
     _plain(s, 'routed', 'in'), 'sink3'),
)
ICMP_CODE = {4: {'icmp unreachable': (3, 0), 'icmp prohibit': (3, 13)},
             6: {'icmp unreachable': (1, 0), 'icmp prohibit': (1, 1)}}


def outcome(t, fam, outs):
    """What came out of one frame (compare.index's entry)."""
    got = []
    for (point, b), n in (outs or {}).items():
        etype, l3 = compare._l3(b)
        if fam == 4 and etype == 0x0800:
            src, l4, proto = b[l3 + 12:l3 + 16], l3 + (b[l3] & 15) * 4, \
                b[l3 + 9]
        elif fam == 6 and etype == 0x86dd:
            src, l4, proto = b[l3 + 8:l3 + 24], l3 + 40, b[l3 + 6]
        else:
            got += ['%s ?' % point] * n
            continue
        if bytes(src) in t.router and proto in (1, 58):
            got += ['%s icmp %d/%d' % (point, b[l4], b[l4 + 1])] * n
        else:
            got += [point] * n
    return sorted(got)


def want(fam, expect):
    if expect == 'none':
        return []
    if expect.startswith('icmp'):
        return ['gen icmp %d/%d' % ICMP_CODE[fam][expect]]
    return [expect]


def check(t, specs, indices, ia):
    """Each check's frames (of those sent) came out as it says; returns
    the problems."""
    problems = []
    for what, test, expect in CHECKS:
        n, bad = 0, []
        for i in indices:
            if i >= len(specs) or not test(specs[i], i):
                continue
            fam = specs[i]['fam']
            n += 1
            got = outcome(t, fam, ia.get(i))
            if got != want(fam, expect):
                bad.append('%d (IPv%d): %s' % (i, fam, got))
        print('difftest: rules: %-40s %3d frames, %s%s' %
              (what, n, expect, ', %d not' % len(bad) if bad else ''))
        if not n:
            problems.append('%s: no frame' % what)
        elif bad:
            problems.append('%s: %s' % (what, '; '.join(bad[:3])))
    return problems


