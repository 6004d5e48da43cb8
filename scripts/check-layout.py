#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Checks the layout of ctl/: scripts/check-layout.py [TOP [BUILD]]

xfibd is built of rooms, one folder each under ctl/xfibd/, and the main
loop at the top (ctl/xfibd/*.c). A room is entered by one header, its
door; its other headers are its own. Calls go one way, and so may
includes:

    ctl/xfibd (main)  ->  any room, by its door
    kernel/           ->  rib/          (netlink messages become RIB changes)
    fib/              ->  rib/          (tables are built from the RIB)
    rib/, nf/, xfrm/  ->  no other room

Every room may use ctl/lib and include/; ctl/lib uses neither program's
folder, and xfibctl does not reach into xfibd. Fails (exit 1) on an
include that breaks these rules, on a room the table below does not
know, and on a function body over MAX_FN_LINES lines anywhere in ctl/.
With BUILD (the build directory, where make put ctl/xfibd/*/*.o), the
calls themselves are checked too (nm): a function an object of one room
calls from another must be of a room it may use and declared by that
room's door, so a declaration written out by hand cannot get around it;
and the files of one room call each other one way, but for TWO_WAY.
"""
import os
import re
import subprocess
import sys

# room -> its door
DOORS = {
    "kernel": "netlink.h",
    "rib": "rib.h",
    "fib": "fib.h",
    "nf": "nfgate.h",
    "xfrm": "xfrm.h",
}
# room -> the rooms it may include (by their door) and call
MAY_USE = {
    "kernel": {"rib"},
    "fib": {"rib"},
    "rib": set(),
    "nf": set(),
    "xfrm": set(),
}
# Inside a room (or the top) the files call each other one way too; the
# one pair that calls both ways: a route's variant uses a nexthop object,
# and an object changed or deleted updates or removes the variants that
# use it (rib/rib_priv.h).
TWO_WAY = {frozenset({"rib/rib_route.o", "rib/rib_nhobj.o"})}
MAX_FN_LINES = 80

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def place(top, path):
    """(program, room) of a file under ctl/: room None at a program's top."""
    parts = os.path.relpath(path, os.path.join(top, "ctl")).split(os.sep)
    if parts[0] == "..":
        return None, None
    room = parts[1] if len(parts) > 2 else None
    return parts[0], room


def resolve(top, src, name):
    """Where the compiler finds a quoted include of src (ctl/'s -I order)."""
    prog = os.path.relpath(src, os.path.join(top, "ctl")).split(os.sep)[0]
    for d in (os.path.dirname(src), os.path.join(top, "include"),
              os.path.join(top, "ctl", "lib"), os.path.join(top, "ctl", prog)):
        p = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(p):
            return p
    return None  # generated (a skeleton) or a system header


def include_errors(top, src):
    errs = []
    prog, room = place(top, src)
    text = open(src, encoding="utf-8").read()
    for name in INCLUDE.findall(text):
        dst = resolve(top, src, name)
        if not dst:
            continue
        dprog, droom = place(top, dst)
        where = f"{os.path.relpath(src, top)}: #include \"{name}\""
        if dprog is None or dprog == prog and droom == room:
            continue
        if dprog != prog:
            if dprog != "lib":
                errs.append(f"{where}: ctl/{prog} may not use ctl/{dprog}")
            continue
        if prog != "xfibd" or droom is None:
            errs.append(f"{where}: a room may not include the top of ctl/{prog}")
            continue
        if os.path.basename(dst) != DOORS.get(droom):
            errs.append(f"{where}: {droom}/{os.path.basename(dst)} is private "
                        f"to {droom}/ (its door is {droom}/{DOORS.get(droom)})")
        elif room is not None and droom not in MAY_USE.get(room, set()):
            errs.append(f"{where}: {room}/ may not call {droom}/ (calls go "
                        f"one way: see scripts/check-layout.py)")
    return errs


def long_functions(path):
    """Functions whose body (closed by a brace at column 0) is too long."""
    lines = open(path, encoding="utf-8").read().split("\n")
    errs = []
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        # A body opens with "{" alone at column 0 (kernel style), or at
        # the end of a signature at column 0 ("int f(void) {").
        if line != "{" and not re.match(r"^[A-Za-z_][^=;]*\)\s*\{$", line):
            i += 1
            continue
        j = i - 1 if line == "{" else i  # back to the signature's start
        while j > 0 and lines[j][:1] in (" ", "\t"):
            j -= 1
        m = re.search(r"(\w+)\s*\(", lines[j]) if j >= 0 else None
        k = i + 1
        while k < len(lines) and not lines[k].startswith("}"):
            k += 1
        body = k - i - 1
        if body > MAX_FN_LINES:
            errs.append(f"{path}:{j + 1}: {m.group(1) if m else '?'}() is "
                        f"{body} lines (at most {MAX_FN_LINES}): split it "
                        f"into named steps")
        i = k + 1
    return errs


def symbols(objs):
    """{object: (defined, undefined)} global symbols, from one nm run."""
    out = subprocess.run(["nm", "-A", "-g", *objs], check=True,
                         capture_output=True, text=True).stdout
    syms = {o: (set(), set()) for o in objs}
    for line in out.splitlines():
        obj, _, rest = line.partition(": ")
        if not rest:
            obj, _, rest = line.partition(":")
        fields = rest.split()
        if obj in syms and len(fields) >= 2:
            syms[obj][fields[-2] == "U"].add(fields[-1])
    return syms


def door_text(room_dir, door, seen=None):
    """A door and the room's headers it includes: what it declares."""
    seen = seen if seen is not None else set()
    seen.add(door)
    text = open(os.path.join(room_dir, door), encoding="utf-8").read()
    for name in INCLUDE.findall(text):
        if name not in seen and os.path.isfile(os.path.join(room_dir, name)):
            text += door_text(room_dir, name, seen)
    return text


def call_errors(top, build):
    """Calls between rooms, from the objects' symbols."""
    doors = {room: door_text(os.path.join(top, "ctl", "xfibd", room), door)
             for room, door in DOORS.items()}
    base = os.path.join(build, "ctl", "xfibd")
    objs = {}  # object -> room (None: the top)
    for dirpath, _, files in os.walk(base):
        rel = os.path.relpath(dirpath, base)
        for f in files:
            # Only objects of sources that exist: not those a source
            # moved or deleted since left behind.
            src = os.path.join(top, "ctl", "xfibd", rel, f[:-2] + ".c")
            if f.endswith(".o") and os.path.isfile(src):
                objs[os.path.join(dirpath, f)] = None if rel == "." else rel
    syms = symbols(sorted(objs))
    owner = {}  # symbol -> its object
    for o in objs:
        for s in syms[o][0]:
            owner[s] = o
    errs = circle_errors(build, objs, owner, syms)
    for o, room in sorted(objs.items(), key=lambda x: x[0]):
        if room is None:
            continue
        for s in sorted(syms[o][1]):
            if s not in owner or objs[owner[s]] == room:
                continue
            dst = objs[owner[s]]
            to = dst or "the top of ctl/xfibd"
            if dst not in MAY_USE.get(room, set()):
                errs.append(f"{os.path.relpath(o, build)}: calls {s}() of "
                            f"{to}: {room}/ may not call it")
            elif not re.search(r"\b%s\b" % re.escape(s), doors[dst]):
                errs.append(f"{os.path.relpath(o, build)}: calls {s}(), "
                            f"which {dst}/{DOORS[dst]} does not "
                            f"declare: private to {dst}/")
    return errs


def circle_errors(build, objs, owner, syms):
    """Files of one room (or of the top) that call each other in a circle."""
    base = os.path.join(build, "ctl", "xfibd")
    calls = {o: set() for o in objs}
    for o, room in objs.items():
        for s in syms[o][1]:
            if s in owner and owner[s] != o and objs[owner[s]] == room:
                calls[o].add(owner[s])
    errs = []
    for comp in strongly_connected(calls):
        names = sorted(os.path.relpath(o, base) for o in comp)
        if len(comp) > 1 and frozenset(names) not in TWO_WAY:
            errs.append(f"ctl/xfibd: {', '.join(names)} call each other in "
                        f"a circle: move what they share into a lower file")
    return errs


def strongly_connected(graph):
    """Tarjan's strongly connected components of {node: {node}}."""
    index, low, stack, on, comps = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            comps.append(comp)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return comps


def main():
    top = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                          os.path.join(os.path.dirname(__file__), ".."))
    errs = []
    if len(sys.argv) > 2:
        errs += call_errors(top, os.path.abspath(sys.argv[2]))
    xfibd = os.path.join(top, "ctl", "xfibd")
    for d in sorted(os.listdir(xfibd)):
        if os.path.isdir(os.path.join(xfibd, d)) and d not in DOORS:
            errs.append(f"ctl/xfibd/{d}/: a room check-layout.py does not "
                        f"know: name its door and what it may use")
    for room, door in DOORS.items():
        if not os.path.isfile(os.path.join(xfibd, room, door)):
            errs.append(f"ctl/xfibd/{room}/{door}: the room's door is missing")
    for dirpath, _, files in os.walk(os.path.join(top, "ctl")):
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                p = os.path.join(dirpath, f)
                errs += include_errors(top, p)
                errs += [os.path.relpath(e, top) if e.startswith(top) else e
                         for e in long_functions(p)]
    for e in errs:
        print(e)
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
