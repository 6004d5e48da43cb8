#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Merge the benchmarks' records into results.json, report.md and plots.

  report.py [--dir build/bench]

Reads DIR/lookup.json, DIR/fwd.json and DIR/ctl.json (those present),
written by tests/bench/{lookup,fwd,ctl}.sh in one `make bench` run, and
writes in DIR:

  results.json  one record per measurement: bench, family, algorithm (or
                baseline), routes, metric, value, unit, repetitions, and
                "speedup": how many times faster than each baseline of
                the same run (value / baseline for rates, baseline / value
                for times)
  report.md     tables, and the targets of issue 5, each met or missed
                with the gap (a forwarding rate whose path was not
                verified meets none: such rows are counted); the
                verifier's processed instructions per program and their
                margin to its limit
  lookup.png    M lookups/s against table size, per algorithm and
                baseline, random and hot keys (clustered IPv6 table:
                separate markers)
  lookup-latency.png  the same in latency mode (ns per dependent lookup)
  memory.png    bytes per prefix of every structure against table size
                (generated and clustered tables), and xfibd's resident
                memory per route
  fwd.png       forwarding Mpps per path, at 10 routes and full table
  router-cost.png  the router's own ns per packet (each path's time per
                packet minus the lookup-free forwarder's), median and range

Plots need matplotlib (python3-matplotlib); without it they are skipped
and the report says so. Numbers are reported, never judged fatal.
"""

import argparse
import json
import os
import sys

LOOKUP_BASELINES = ("lpm_trie", "fib_lookup")
FWD_BASELINES = ("kernel", "fibfwd")


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        return None


def rnd(v, n=4):
    return None if v is None else round(v, n)


def tbl(r):
    """The lookup table a record was measured on (older records: generated)."""
    return r.get("table") or "generated"


def same_set(rows, r):
    """The rows measured on the same table, family, size and keys as r."""
    return [x for x in rows if x["family"] == r["family"] and
            x["routes"] == r["routes"] and x["keys"] == r["keys"] and
            tbl(x) == tbl(r)]


# ---- records ---------------------------------------------------------------

def lookup_records(lk):
    """Per (table, family, routes, keys): every algorithm's BPF figure, its
    native twin, and the baselines, in throughput and latency mode;
    speedups against lpm_trie, fib_lookup and the native loop of the same
    mode. Then the memory of each instance, and xfibd's resident set."""
    out = []
    rows = lk["summary"]
    for r in rows:
        same = same_set(rows, r)
        common = {"bench": "lookup", "family": r["family"],
                  "algorithm": r["algorithm"],
                  "baseline": bool(r.get("baseline")), "table": tbl(r),
                  "routes": r["routes"], "keys": r["keys"],
                  "repetitions": r["repetitions"]}
        for mode, pre in (("throughput", ""), ("latency", "lat_")):
            ns = r.get(pre + "bpf_ns_median")
            if not ns:
                continue
            base = {b["algorithm"]: b[pre + "bpf_ns_median"] for b in same
                    if b.get("baseline") and b.get(pre + "bpf_ns_median")}
            metric = "ns_per_lookup" if not pre else "latency_ns_per_lookup"
            sp = {k: rnd(v / ns) for k, v in base.items()}
            nn = r.get(pre + "native_ns_median")
            if nn:
                sp["native"] = rnd(nn / ns)
            c = dict(common, mode=mode)
            out.append(dict(c, path="bpf", metric=metric, value=rnd(ns),
                            unit="ns", speedup=sp))
            if not pre:
                out.append(dict(c, path="bpf", metric="mlookups_per_s",
                                value=rnd(1000 / ns), unit="Mlookups/s",
                                speedup=sp))
            if nn:
                nsp = {k: rnd(v / nn) for k, v in base.items()}
                nsp["native"] = 1.0
                out.append(dict(c, path="native", metric=metric,
                                value=rnd(nn), unit="ns", speedup=nsp))
                if not pre:
                    out.append(dict(c, path="native", metric="mlookups_per_s",
                                    value=rnd(1000 / nn), unit="Mlookups/s",
                                    speedup=nsp))
        if r.get("reads_per_lookup") is not None:
            c = dict(common, path="native", speedup={})
            out.append(dict(c, metric="reads_per_lookup",
                            value=rnd(r["reads_per_lookup"]), unit="reads",
                            max=r["reads_max"]))
            out.append(dict(c, metric="lines_per_lookup",
                            value=rnd(r["lines_per_lookup"]),
                            unit="64-byte lines"))
            out.append(dict(c, metric="working_set_bytes",
                            value=r["working_set_bytes"], unit="bytes"))
        if r.get("bytes_per_prefix") is not None and r["keys"] == "random":
            for m, v in (("instance_bytes", r["memory"]),
                         ("bytes_per_prefix", rnd(r["bytes_per_prefix"])),
                         ("bytes_per_route", rnd(r["bytes_per_route"]))):
                out.append(dict(common, keys=None, metric=m, value=v,
                                unit="bytes", speedup={}))
    for st in lk.get("steps", []):
        if st.get("xfibd_rss") is None:
            continue
        c = {"bench": "lookup", "family": st["family"], "algorithm": "xfibd",
             "baseline": False, "table": tbl(st), "routes": st["routes"],
             "unit": "bytes", "speedup": {}}
        out.append(dict(c, metric="xfibd_rss_bytes", value=st["xfibd_rss"]))
        out.append(dict(c, metric="xfibd_rss_bytes_per_route",
                        value=rnd(st["xfibd_rss"] / max(1, st.get("routes_all", st["routes_total"]))),
                        note="VmRSS / routes held, both families"))
    return out


def fwd_verified(fw, table_, family, path, algo):
    """Whether the router's counters showed that path doing the forwarding
    (fwd.json summary); None if the summary has no such row."""
    for x in fw["summary"]:
        if (x["table"], "ipv%d" % x["family"], x["path"]) == (table_, family, path) \
           and (path not in ("xfib", "xfib_ct", "xfib_nat") and not path.startswith("xfib-")
                or x["algorithm"] == algo):
            return x["verified"]
    return None


def fwd_records(fw):
    out = []
    for r in fw["records"]:
        rec = {k: r.get(k) for k in ("bench", "family", "algorithm", "path",
                                     "table", "routes", "metric", "value",
                                     "unit", "repetitions")}
        rec["baseline"] = r["path"] in FWD_BASELINES
        if r["metric"] != "path_verified":
            algo = r["algorithm"].split("/")[-1].replace("+ct_gate", "")
            rec["path_verified"] = fwd_verified(fw, r["table"], r["family"],
                                                r["path"], algo)
        rec["speedup"] = {}
        if r["metric"] == "rx_mpps":
            rec["speedup"] = {"kernel": r.get("ratio_to_kernel"),
                              "fibfwd": r.get("ratio_to_fibfwd")}
        if r["metric"] == "router_ns_per_packet":
            for k in ("min", "max", "samples", "note"):
                rec[k] = r.get(k)
            for k, f in (("kernel", "ratio_kernel_to_this"),
                         ("fibfwd", "ratio_fibfwd_to_this")):
                if r.get(f):
                    rec["speedup"][k] = r[f]["median"]
                    rec["speedup"][k + "_range"] = [r[f]["min"], r[f]["max"]]
        out.append(rec)
    return out


def ctl_records(ct):
    out = []
    kern = next((r["value"] for r in ct["records"]
                 if r["metric"] == "kernel_install_routes_per_s"), None)
    for r in ct["records"]:
        rec = dict(r)
        rec.setdefault("routes", None)
        rec["baseline"] = r["metric"].startswith("kernel_")
        rec["speedup"] = {}
        if r["metric"] in ("updates_per_s", "updates_per_cpu_s") and kern:
            rec["speedup"] = {"kernel_install": rnd(r["value"] / kern)}
        out.append(rec)
    return out


def verifier_rows(lk, fw):
    """(program, loaded by, processed instructions, limit, loaded) of every
    program whose verifier count a benchmark recorded."""
    rows = []
    for doc, by in ((lk, "lookupbench --verifier (lookup.bpf.c)"),
                    (fw, "xfibctl attach")):
        v = (doc or {}).get("verifier") or {}
        for p in v.get("programs", []):
            rows.append((p["program"], by,
                         p["verified_insns"], v.get("verifier_limit", 1000000),
                         p.get("loaded", True)))
    return rows


def verifier_records(lk, fw):
    out = []
    for prog, by, n, limit, loaded in verifier_rows(lk, fw):
        out.append({"bench": "fwd" if by == "xfibctl attach" else "lookup",
                    "family": "all", "algorithm": prog, "routes": None,
                    "metric": "verifier_processed_insns", "value": n,
                    "unit": "instructions", "repetitions": 1,
                    "limit": limit, "margin": limit - n, "loaded": loaded,
                    "loaded_by": by, "baseline": False, "speedup": {}})
    return out


def verifier_section(lk, fw):
    rows = [(prog, by, n, limit - n, "%.1f%%" % (100.0 * n / limit),
             "yes" if loaded else "NO")
            for prog, by, n, limit, loaded in verifier_rows(lk, fw)]
    if not rows:
        return None
    return table(["program", "loaded by", "instructions processed",
                  "margin to 1,000,000", "of the limit", "loaded"], rows)


# ---- report ----------------------------------------------------------------

def fmt(v, d=2):
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return "{:,}".format(v)
    if isinstance(v, float):
        return ("{:.%df}" % d).format(v)
    return str(v)


def table(head, rows):
    s = ["| " + " | ".join(head) + " |",
         "|" + "|".join("---" for _ in head) + "|"]
    s += ["| " + " | ".join(fmt(c) for c in r) + " |" for r in rows]
    return "\n".join(s)


def auto_algo(lk, family, routes):
    """The algorithm automatic selection ran at the lookup step closest to
    routes (xfibd chooses by table scale)."""
    if not lk:
        return None
    steps = [s for s in lk.get("steps", []) if s["family"] == family]
    if not steps:
        return None
    return min(steps, key=lambda s: abs(s["routes"] - routes))["auto"]


def flt(v):
    return None if v is None else float(v)


def size(b):
    return "%s MiB" % fmt(b / 1048576, 1) if b >= 1048576 else \
        "%s KiB" % fmt(b / 1024, 1)


def caches(lk):
    """The CPU's L2 and L3 sizes the lookup run recorded, as a clause."""
    c = lk.get("cache_bytes") or {}
    if not c.get("l2") and not c.get("l3"):
        return ""
    return "; this CPU's L2 is %s, its L3 %s (cpu0, sysfs)" % (
        size(c.get("l2") or 0), size(c.get("l3") or 0))


def lookup_section(lk):
    rows = []
    for r in lk["summary"]:
        same = same_set(lk["summary"], r)
        base = {b["algorithm"]: b for b in same if b.get("baseline")}
        ns, lat = r["bpf_ns_median"], r.get("lat_bpf_ns_median")
        nat, nlat = r.get("native_ns_median"), r.get("lat_native_ns_median")

        def x(b, pre, v):
            return base[b][pre + "bpf_ns_median"] / v \
                if b in base and v and base[b].get(pre + "bpf_ns_median") else None
        rows.append((r["family"], tbl(r), r["routes"], r["keys"],
                     r["algorithm"], ns, lat, nat, nlat,
                     ns / nat if nat else None,
                     x("lpm_trie", "", ns), x("lpm_trie", "lat_", lat),
                     x("fib_lookup", "", ns), x("fib_lookup", "lat_", lat),
                     r.get("bytes_per_prefix"), flt(r.get("reads_per_lookup")),
                     r.get("reads_max"), flt(r.get("lines_per_lookup")),
                     r["working_set_bytes"] / 1024
                     if r.get("working_set_bytes") is not None else None,
                     r["hit_pct"]))
    rows.sort(key=lambda x: (x[0], x[1] != "generated", x[2], x[3] != "random",
                             x[4] in LOOKUP_BASELINES, x[4]))
    return table(["family", "table", "routes", "keys", "algorithm",
                  "BPF ns (tput)", "BPF ns (lat)", "native ns (tput)",
                  "native ns (lat)", "BPF/native (tput)", "x LPM_TRIE (tput)",
                  "x LPM_TRIE (lat)", "x fib_lookup (tput)",
                  "x fib_lookup (lat)", "B/prefix", "reads/lookup",
                  "max reads", "lines/lookup", "working set KiB",
                  "hits %"], rows)


def memory_section(lk, ct):
    """Every structure's memory at each size and table, and xfibd's."""
    rows = []
    for r in lk["summary"] if lk else []:
        if r.get("bytes_per_prefix") is None or r["keys"] != "random":
            continue
        rows.append((r["family"], tbl(r), r["routes"], r["algorithm"],
                     r["memory"], r["bytes_per_prefix"], r["bytes_per_route"]))
    rows.sort(key=lambda x: (x[0], x[1] != "generated", x[2], x[3]))
    out = [table(["family", "table", "prefixes", "structure", "bytes",
                  "B/prefix", "B/route"], rows), ""]
    rss = [(s["family"], tbl(s), s["routes"], s.get("routes_all"), s["xfibd_rss"],
            s["xfibd_rss"] / max(1, s.get("routes_all") or s["routes_total"]))
           for s in (lk or {}).get("steps", []) if s.get("xfibd_rss")]
    if rss:
        out += ["xfibd's resident memory (VmRSS) after each family's step "
                "of the lookup benchmark (B/route = VmRSS / routes held, "
                "both families, the router's own included):", "",
                table(["after family", "table", "prefixes", "routes held",
                       "VmRSS bytes", "B/route"], rss), ""]
    if ct:
        c = {r["metric"]: r["value"] for r in ct["records"]
             if r["family"] == "all"}
        if c.get("xfibd_rss_bytes"):
            out += ["Control-plane benchmark (full-table install): xfibd "
                    "VmRSS %s bytes, %s B/route (tests/bench/ctl.sh)."
                    % (fmt(c["xfibd_rss_bytes"]),
                       fmt(c.get("xfibd_bytes_per_route"))), ""]
        if c.get("xfibd_cold_private_bytes"):
            out += ["After its cold start: xfibd's private memory (RssAnon) "
                    "%s bytes, %s B/route; the dataplane's maps mapped into "
                    "it (RssFile + RssShmem) %s bytes."
                    % (fmt(c["xfibd_cold_private_bytes"]),
                       fmt(c.get("xfibd_cold_private_bytes_per_route")),
                       fmt(c.get("xfibd_cold_mapped_bytes"))), ""]
    return out


def shape_section(lk):
    """The measured programs after the verifier, at the largest size with
    random keys: what a lookup costs in instructions and calls."""
    rows = []
    for r in lk["summary"]:
        if r["keys"] != "random" or "xlated_insns" not in r:
            continue
        top = max(x["routes"] for x in lk["summary"] if x["family"] == r["family"])
        if r["routes"] != top:
            continue
        rows.append((r["family"], r["routes"], r["algorithm"],
                     r["xlated_insns"], r["jited_bytes"], r["helper_calls"],
                     r["subprog_calls"]))
    if not rows:
        return None
    return table(["family", "routes", "program", "xlated insns", "JITed bytes",
                  "helper call sites", "BPF-to-BPF call sites"], rows)


def profiles(d):
    """Flat profiles written with PERF=1 (ctl-perf.txt, fwd-perf-*.txt):
    the top lines of each."""
    out = []
    for name in sorted(os.listdir(d)):
        if not (name.startswith("ctl-perf") or name.startswith("fwd-perf")) \
           or not name.endswith(".txt"):
            continue
        with open(os.path.join(d, name)) as f:
            lines = [l.rstrip() for l in f if l.strip()][:12]
        out += ["`%s`:" % name, "", "```"] + lines + ["```", ""]
    return out


def fwd_section(fw):
    rows = []
    for r in fw["summary"]:
        path = r["path"] + ("/" + r["algorithm"] if r["path"] in ("xfib", "xfib_ct", "xfib_nat") else "")
        rows.append((r["table"], r["routes"], "ipv%d" % r["family"], path,
                     r["rx"], r["rx_min"], r["rx_max"], r["loss"],
                     r.get("ratio_kernel"), r.get("ratio_fibfwd"),
                     r["verified"]))
    rows.sort(key=lambda x: (x[0] != "10", x[2], x[3]))
    bad = [r for r in rows if not r[-1]]
    return table(["table", "routes", "family", "path", "Mpps (median)",
                  "min", "max", "loss %", "x kernel", "x fibfwd",
                  "path verified"], rows) + (
        "\n\nPath verified in %d of %d rows%s." % (
            len(rows) - len(bad), len(rows),
            "" if not bad else "; not verified (their rates are another "
            "path's, left out of the targets): " + ", ".join(
                "%s %s %s" % (r[0], r[2], r[3]) for r in bad)))


def cost_section(fw):
    """The router's own cost per packet (fwd.json router_cost)."""
    def name(r):
        if r["path"] in ("xfib", "xfib_ct", "xfib_nat"):
            return r["path"] + "/" + r["algorithm"]
        if r["path"].startswith("xfib-"):
            return r["path"] + "/" + r["algorithm"]
        return r["path"]

    def rng(v):
        return "-" if not v else "%.2fx [%.2f-%.2f]" % (v["median"], v["min"], v["max"])
    rows = []
    for r in fw.get("router_cost", []):
        rows.append((r["table"], "ipv%d" % r["family"], name(r), r["n"],
                     r["ns"]["median"], "%.1f-%.1f" % (r["ns"]["min"], r["ns"]["max"]),
                     rng(r.get("vs_kernel")), rng(r.get("vs_fibfwd"))))
    rows.sort(key=lambda x: (x[0] != "10", x[1], x[2]))
    return table(["table", "family", "path", "reps", "own ns/packet (median)",
                  "range", "kernel / xfib", "fibfwd / xfib"], rows)


def ctl_section(ct):
    rows = []
    for r in ct["records"]:
        what = r.get("map") or r.get("instance") or r.get("note") or ""
        if r["metric"].startswith("change_latency_") and "timeouts" in r:
            what += " (%d of %d changes timed out%s)" % (
                r["timeouts"], r["changes"],
                ": a lower bound" if r.get("lower_bound") else "")
        rows.append((r["metric"], r["family"], r["value"], r["unit"], what))
    return table(["metric", "family", "value", "unit", "detail"], rows)


def targets(lk, fw, ct):
    """The targets of issues 5 and 11: (target, measured, met, gap)."""
    t = []

    def lk_row(fam, algo, keys="random", table_="generated"):
        rows = [r for r in lk["summary"] if r["family"] == fam and
                r["algorithm"] == algo and r["keys"] == keys and
                tbl(r) == table_]
        return max(rows, key=lambda r: r["routes"]) if rows else None

    def lk_base(row, base):
        b = [r for r in same_set(lk["summary"], row) if r["algorithm"] == base]
        return b[0]["bpf_ns_median"] if b else None

    def add(name, value, want, higher=True, unit="x", d=2):
        if value is None:
            t.append((name, "not measured", "-", "-"))
            return
        met = value >= want if higher else value <= want
        gap = "-" if met else (("%.*f%s short" % (d, want - value, unit))
                               if higher else ("%.*f%s over" % (d, value - want, unit)))
        t.append((name, ("%.*f" % (d, value)) + unit, "met" if met else "missed", gap))

    if lk:
        d = lk_row("ipv4", "dir24_8")
        if d:
            n = d["routes"]
            add("lookup: dir24_8 at %d routes, random keys, within 1.2x of native" % n,
                d["bpf_ns_median"] / d["native_ns_median"], 1.2, higher=False)
            b = lk_base(d, "lpm_trie")
            add("lookup: dir24_8 at %d routes >= 100x LPM_TRIE" % n,
                b / d["bpf_ns_median"] if b else None, 100, d=1)
            b = lk_base(d, "fib_lookup")
            add("lookup: dir24_8 at %d routes >= 50x bpf_fib_lookup" % n,
                b / d["bpf_ns_median"] if b else None, 50, d=1)
        # The large-table IPv6 structure (issue 11: replaces trie6).
        d = lk_row("ipv6", "poptrie6")
        if d:
            n = d["routes"]
            b = lk_base(d, "lpm_trie")
            add("lookup: poptrie6 at %d routes >= 20x LPM_TRIE" % n,
                b / d["bpf_ns_median"] if b else None, 20, d=1)
            add("lookup: poptrie6 at %d routes, random keys, within 1.5x of native" % n,
                d["bpf_ns_median"] / d["native_ns_median"], 1.5, higher=False)
            for name, r in (("generated", d),
                            ("clustered", lk_row("ipv6", "poptrie6",
                                                 table_="clustered"))):
                if r and r.get("bytes_per_prefix") is not None:
                    add("memory: poptrie6 at %d routes (%s) <= 100 B/prefix"
                        % (r["routes"], name), r["bytes_per_prefix"], 100,
                        higher=False, unit=" B", d=0)
        d = lk_row("ipv4", "dxr")
        if d and d.get("bytes_per_prefix") is not None:
            add("memory: dxr at %d routes <= 10 B/prefix" % d["routes"],
                d["bytes_per_prefix"], 10, higher=False, unit=" B", d=1)
    if fw:
        s = fw["summary"]
        unverified = []

        def rx(table_, fam, path, algo=""):
            r = [x for x in s if x["table"] == table_ and x["family"] == fam
                 and x["path"] == path and (not algo or x["algorithm"] == algo)]
            if not r:
                return None
            if not r[0]["verified"]:
                # A rate of another path than the one named: no target
                # is met with it.
                unverified.append("%s %s ipv%d" % (table_, path + ("/" + algo if algo else ""), fam))
                return None
            return r[0]["rx"]

        for fam in (4, 6):
            fn = "ipv%d" % fam
            full = [x for x in s if x["table"] == "full" and x["family"] == fam]
            small = [x for x in s if x["table"] == "10" and x["family"] == fam]
            a_full = auto_algo(lk, fn, full[0]["routes"] if full else 1e9)
            a_small = auto_algo(lk, fn, 10)
            xf = rx("full", fam, "xfib", a_full) if a_full else None
            xs = rx("10", fam, "xfib", a_small) if a_small else None
            k, f = rx("full", fam, "kernel"), rx("full", fam, "fibfwd")
            if full:
                add("forwarding %s, full table: xfib (%s) >= 5x kernel stack" % (fn, a_full),
                    xf / k if xf and k else None, 5)
                add("forwarding %s, full table: xfib (%s) >= 3x bpf_fib_lookup forwarder" % (fn, a_full),
                    xf / f if xf and f else None, 3)
            f10 = rx("10", fam, "fibfwd")
            if small:
                add("forwarding %s, 10 routes: xfib (%s) >= 1.0x bpf_fib_lookup forwarder" % (fn, a_small),
                    xs / f10 if xs and f10 else None, 1.0)
            if full and small:
                add("forwarding %s: xfib at full table (%s) >= 80%% of xfib at 10 routes (%s)" % (fn, a_full, a_small),
                    100 * xf / xs if xf and xs else None, 80, unit="%", d=0)
        if unverified:
            t.append(("forwarding rows left out of the targets above: path not verified",
                      "%d: %s" % (len(set(unverified)), ", ".join(sorted(set(unverified)))),
                      "missed", "-"))
    if ct:
        def cv(metric, fam="all"):
            r = [x for x in ct["records"] if x["metric"] == metric and x["family"] == fam]
            return r[0]["value"] if r else None
        add("control plane: cold start on the full table <= 3 s",
            (cv("cold_start_ms") or 0) / 1000 if cv("cold_start_ms") is not None else None,
            3, higher=False, unit=" s", d=1)
        add("control plane: xfibd's private memory after a cold start <= 200 B/route",
            cv("xfibd_cold_private_bytes_per_route"), 200, higher=False,
            unit=" B", d=0)
        for fam in ("ipv4", "ipv6"):
            add("control plane: single change to dataplane p99 <= 50 ms (%s)" % fam,
                cv("change_latency_p99_ms", fam), 50, higher=False, unit=" ms", d=1)
        v = cv("mirror_lag_ms")
        add("control plane: mirror lag after a full-table install <= 1 s",
            v / 1000 if v is not None else None, 1, higher=False, unit=" s", d=1)
    return t


def machine_of(*docs):
    for d in docs:
        if d and d.get("machine"):
            return d["machine"]
    for d in docs:
        if d and d.get("kernel"):
            return {"kernel": d["kernel"], "cpus": d.get("cpus"),
                    "cpu_model": d.get("cpu_model", "")}
    return {}


# ---- plots -----------------------------------------------------------------

def plot_lookup(plt, lk, outdir, pre, fname):
    """Lookups against table size; pre "" (throughput) or "lat_"."""
    fig, axes = plt.subplots(2, 2, figsize=(12, 9))
    for i, fam in enumerate(("ipv4", "ipv6")):
        for j, keys in enumerate(("random", "hot")):
            ax = axes[i][j]
            rows = [r for r in lk["summary"] if r["family"] == fam and
                    r["keys"] == keys and r.get(pre + "bpf_ns_median")]
            for t, mk in (("generated", "o"), ("clustered", "x")):
                trows = [r for r in rows if tbl(r) == t]
                suffix = "" if t == "generated" else ", clustered"
                for algo in sorted({r["algorithm"] for r in trows}):
                    val = (lambda v: 1000 / v) if not pre else (lambda v: v)
                    pts = sorted((r["routes"], val(r[pre + "bpf_ns_median"]))
                                 for r in trows if r["algorithm"] == algo)
                    style = "--" if algo in LOOKUP_BASELINES else "-"
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], style,
                            marker=mk, label=algo + suffix + (" (kernel baseline)" if style == "--" else " (BPF)"))
                    nat = sorted((r["routes"], val(r[pre + "native_ns_median"]))
                                 for r in trows if r["algorithm"] == algo and
                                 r.get(pre + "native_ns_median"))
                    if nat:
                        ax.plot([p[0] for p in nat], [p[1] for p in nat], ":",
                                marker=".", label=algo + suffix + " (native C)")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("prefixes in the table")
            ax.set_ylabel("M lookups/s (one CPU)" if not pre else
                          "ns per dependent lookup (one CPU)")
            ax.set_title("%s, %s keys, %s mode" % (fam, keys, "latency" if pre else "throughput"))
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, fname), dpi=100)
    plt.close(fig)


def plot_memory(plt, lk, outdir):
    fig, axes = plt.subplots(1, 3, figsize=(15, 5))
    for i, fam in enumerate(("ipv4", "ipv6")):
        ax = axes[i]
        rows = [r for r in lk["summary"] if r["family"] == fam and
                r["keys"] == "random" and r.get("bytes_per_prefix")]
        for t, mk in (("generated", "o-"), ("clustered", "x")):
            for algo in sorted({r["algorithm"] for r in rows if tbl(r) == t}):
                pts = sorted((r["routes"], r["bytes_per_prefix"]) for r in rows
                             if r["algorithm"] == algo and tbl(r) == t)
                ax.plot([p[0] for p in pts], [p[1] for p in pts], mk,
                        label=algo + ("" if t == "generated" else " (clustered)"))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("prefixes in the table")
        ax.set_ylabel("bytes per prefix")
        ax.set_title("%s: memory of each structure" % fam)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    ax = axes[2]
    steps = [s for s in lk.get("steps", []) if s.get("xfibd_rss")]
    for fam in ("ipv4", "ipv6"):
        pts = sorted((s.get("routes_all") or s["routes_total"],
                      s["xfibd_rss"] / max(1, s.get("routes_all") or s["routes_total"]))
                     for s in steps if s["family"] == fam and tbl(s) == "generated")
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-",
                    label="after the %s step" % fam)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("routes held (both families)")
    ax.set_ylabel("xfibd VmRSS / routes (bytes)")
    ax.set_title("xfibd resident memory per route")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, "memory.png"), dpi=100)
    plt.close(fig)


def plot_fwd(plt, fw, outdir):
    s = fw["summary"]
    groups = sorted({(r["table"], r["family"]) for r in s},
                    key=lambda g: (g[0] != "10", g[1]))
    fig, ax = plt.subplots(figsize=(12, 5))
    x = 0
    ticks, labels = [], []
    colours = {"kernel": "tab:gray", "fibfwd": "tab:orange",
               "nolookup": "tab:green"}
    for g in groups:
        rows = sorted([r for r in s if (r["table"], r["family"]) == g],
                      key=lambda r: (r["path"] != "nolookup", r["path"] != "kernel",
                                     r["path"] != "fibfwd", r["path"], r["algorithm"]))
        start = x
        for r in rows:
            name = r["path"] if r["path"] not in ("xfib", "xfib_ct", "xfib_nat") else \
                r["path"] + "/" + r["algorithm"]
            ax.bar(x, r["rx"], color=colours.get(r["path"], "tab:blue"),
                   yerr=[[r["rx"] - r["rx_min"]], [r["rx_max"] - r["rx"]]],
                   capsize=3)
            ax.text(x, 0.05, name, rotation=90, ha="center", va="bottom",
                    fontsize=7, color="white")
            x += 1
        ticks.append((start + x - 1) / 2)
        labels.append("ipv%d, %s" % (g[1], "10 routes" if g[0] == "10" else "full table"))
        x += 1
    ax.set_xticks(ticks)
    ax.set_xticklabels(labels)
    ax.set_ylabel("Mpps at the sinks (median, min-max)")
    ax.set_title("Forwarding, 64-byte UDP over veth (kernel stack, "
                 "bpf_fib_lookup forwarder, lookup-free forwarder, xfib per algorithm)")
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, "fwd.png"), dpi=100)
    plt.close(fig)


def plot_cost(plt, fw, outdir):
    rows = [r for r in fw["router_cost"] if r["path"] in ("kernel", "fibfwd", "xfib")]
    groups = sorted({(r["table"], r["family"]) for r in rows},
                    key=lambda g: (g[0] != "10", g[1]))
    fig, ax = plt.subplots(figsize=(12, 5))
    colours = {"kernel": "tab:gray", "fibfwd": "tab:orange"}
    x = 0
    ticks, labels = [], []
    for g in groups:
        grp = sorted([r for r in rows if (r["table"], r["family"]) == g],
                     key=lambda r: (r["path"] != "kernel", r["path"] != "fibfwd", r["algorithm"]))
        start = x
        for r in grp:
            v = r["ns"]
            ax.bar(x, v["median"], color=colours.get(r["path"], "tab:blue"),
                   yerr=[[v["median"] - v["min"]], [v["max"] - v["median"]]],
                   capsize=3)
            ax.text(x, 1, r["path"] + ("/" + r["algorithm"] if r["path"] == "xfib" else ""),
                    rotation=90, ha="center", va="bottom", fontsize=7)
            x += 1
        ticks.append((start + x - 1) / 2)
        labels.append("ipv%d, %s" % (g[1], "10 routes" if g[0] == "10" else "full table"))
        x += 1
    ax.set_xticks(ticks)
    ax.set_xticklabels(labels)
    ax.set_ylabel("ns per packet over the lookup-free forwarder\n(median, min-max over repetitions)")
    ax.set_title("The router's own cost per packet")
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, "router-cost.png"), dpi=100)
    plt.close(fig)


def plots(lk, fw, outdir):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    made = []
    if lk:
        plot_lookup(plt, lk, outdir, "", "lookup.png")
        made.append("lookup.png")
        if any(r.get("lat_bpf_ns_median") for r in lk["summary"]):
            plot_lookup(plt, lk, outdir, "lat_", "lookup-latency.png")
            made.append("lookup-latency.png")
        if any(r.get("bytes_per_prefix") for r in lk["summary"]):
            plot_memory(plt, lk, outdir)
            made.append("memory.png")
    if fw:
        plot_fwd(plt, fw, outdir)
        made.append("fwd.png")
        if fw.get("router_cost"):
            plot_cost(plt, fw, outdir)
            made.append("router-cost.png")
    return made


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", default="build/bench")
    args = ap.parse_args()
    d = args.dir
    lk = load(os.path.join(d, "lookup.json"))
    fw = load(os.path.join(d, "fwd.json"))
    ct = load(os.path.join(d, "ctl.json"))
    if not (lk or fw or ct):
        sys.exit("report.py: no lookup.json, fwd.json or ctl.json in %s" % d)

    records = []
    if lk:
        records += lookup_records(lk)
    if fw:
        records += fwd_records(fw)
    if ct:
        records += ctl_records(ct)
    records += verifier_records(lk, fw)
    m = machine_of(fw, ct, lk)
    scales = sorted({x["scale"] for x in (lk, fw, ct) if x})
    with open(os.path.join(d, "results.json"), "w") as f:
        json.dump({"machine": m, "scale": "/".join(scales),
                   "dates": {x["benchmark"]: x["date"] for x in (lk, fw, ct) if x},
                   "records": records}, f, indent=1)

    made = plots(lk, fw, d)
    md = ["# xfib benchmark report", ""]
    md.append("Machine: %s CPUs, %s, kernel %s. Scale: %s. Generated by "
              "`make bench` (tests/bench/report.py) from %s." % (
                  m.get("cpus", "?"), m.get("cpu_model", "?") or "?",
                  m.get("kernel", "?"), "/".join(scales),
                  ", ".join("%s.json (%s)" % (x["benchmark"], x["date"])
                            for x in (lk, fw, ct) if x)))
    md.append("")
    md.append("The machine is shared and noisy: compare ratios within this "
              "run, not absolute numbers across runs. Every figure is a "
              "median of the repetitions stated in the records "
              "(build/bench/results.json).")
    md.append("")
    md.append("## Targets")
    md.append("")
    md.append(table(["target", "measured", "status", "gap"], targets(lk, fw, ct)))
    md.append("")
    vs = verifier_section(lk, fw)
    if vs:
        md += ["## Verifier", "",
               "Instructions the verifier processed for each benchmark "
               "program and for the forwarding program as xfibctl attach "
               "loaded it, against the verifier's limit of 1,000,000 "
               "(kernel builds differ in how many they process for the "
               "same program: the margin is what is left).", "", vs, ""]
    if lk:
        md += ["## Lookup", "",
               "Longest-prefix-match lookups in a BPF program run by "
               "BPF_PROG_TEST_RUN (%d per run, bpf_loop), on one CPU, "
               "over the router's live maps; native = the same lookup "
               "code in C over the same maps mmap()ed. Baselines over "
               "the same keys: `lpm_trie` (BPF_MAP_TYPE_LPM_TRIE holding "
               "the same prefixes) and `fib_lookup` (bpf_fib_lookup, "
               "SKIP_NEIGH, against the kernel FIB holding the same "
               "routes). Keys: random = 65536 addresses inside random "
               "prefixes of the table, hot = 8. x LPM_TRIE / x "
               "fib_lookup = times faster than that baseline. Two modes "
               "over the same keys: tput (throughput: independent "
               "lookups in a row, whose cache misses the CPU overlaps) "
               "and lat (latency: each key's index depends on the "
               "previous lookup's result, so each lookup waits for the "
               "one before, as in a packet's serial work), both in ns "
               "per lookup. Tables: generated (Internet-shaped, "
               "scripts/gen-table.py) and, for IPv6, clustered "
               "(tests/bench/gen-bench-table.py clustered6: a few hundred "
               "/20-/32 allocations, runs of /48s, /64s and /128s next to "
               "each other), as many prefixes as the largest size. "
               "B/prefix = the instance's memory per prefix of the table. "
               "reads/lookup (mean), max reads, lines/lookup (mean) and "
               "working set: an untimed pass of the native lookup code "
               "over the same keys and maps counts the table reads of "
               "each lookup (each address depends on what the reads "
               "before it returned), the distinct 64-byte cache lines "
               "they touch, and the distinct lines the whole key set "
               "touches (its answers are checked against the timed "
               "loop's)%s."
               % (lk["summary"][0].get("lookups_per_run", 256),
                  caches(lk)), "",
               lookup_section(lk), ""]
        md += ["Automatic selection: " + "; ".join(
            "%s %d prefixes: %s" % (s["family"], s["routes"], s["auto"])
            for s in lk.get("steps", [])), ""]
        sh = shape_section(lk)
        if sh:
            md += ["Programs measured, after the verifier (the bpf_loop "
                   "body calls a global function of 16 lookups; helper "
                   "call sites are map "
                   "lookups the verifier did not inline, or the "
                   "bpf_fib_lookup helper):", "", sh, ""]
        if "lookup.png" in made:
            md += ["![lookups per second](lookup.png)", ""]
        if "lookup-latency.png" in made:
            md += ["![ns per dependent lookup](lookup-latency.png)", ""]
    if lk or ct:
        md += ["## Memory", "",
               "Each structure's memory (xfibctl status: the instance's "
               "maps) at each size of the lookup benchmark, per prefix of "
               "the table and per route the instance holds (the router's "
               "own connected and local routes too)."
               , ""] + memory_section(lk, ct)
        if "memory.png" in made:
            md += ["![memory per prefix](memory.png)", ""]
    if fw:
        md += ["## Forwarding", "",
               "64-byte UDP, gen -> router -> two sinks over veth, %d "
               "destinations spread over 198.19.0.0/16 and "
               "2001:db8:8000::/33, sent in a shuffled order; %d x %s s "
               "per path; %s. Paths: "
               "`kernel` (no XDP), `fibfwd` (bpf_fib_lookup XDP "
               "forwarder, tests/bench/fibfwd.bpf.c), `nolookup` (the "
               "lookup-free XDP forwarder, tests/bench/nolookup.bpf.c: "
               "TTL, fixed MACs, redirect to one port), `xfib/ALGO`. "
               "Tables: `10` routes, `full` = Internet-shaped table plus "
               "prefixes nested in the destinations' ranges "
               "(tests/bench/gen-bench-table.py: nested4 in "
               "198.19.0.0/16, clustered6 in 2001:db8:8000::/33; the "
               "fwd log says how many are some destination's longest "
               "match). x kernel / x fibfwd: "
               "ratio of the medians, same table and family. Path "
               "verified: the router's forwarding counters show the "
               "path measured did the forwarding." % (
                   fw["destinations"], fw["repetitions"],
                   fw["seconds_per_repetition"], fw["placement"]), "",
               fwd_section(fw), ""]
        if "fwd.png" in made:
            md += ["![forwarding Mpps](fwd.png)", ""]
        if fw.get("router_cost"):
            md += ["### The router's own cost per packet", "",
                   "One core carries generator, router and sinks, so a "
                   "path's rate hides how much of the time per packet is "
                   "the router's. Per repetition: the path's time per "
                   "packet (1 / rx) minus the lookup-free forwarder's "
                   "(`nolookup`) in the same repetition; median and range "
                   "over the repetitions (on a busy machine a repetition can "
                   "come out at or below zero). kernel / xfib and fibfwd / "
                   "xfib: that path's own cost over xfib's, per repetition "
                   "where both are positive, median [range].", "", cost_section(fw), ""]
            if "router-cost.png" in made:
                md += ["![router's own cost per packet](router-cost.png)", ""]
    if ct:
        md += ["## Control plane", "",
               "xfibd mirroring the router's kernel FIB "
               "(tests/bench/ctl.sh; change latency by "
               "tests/bench/ctlprobe.c polling the live maps, over every "
               "change: one not seen within the probe's timeout counts "
               "as the time waited, a lower bound).", "",
               ctl_section(ct), ""]
    prof = profiles(d)
    if prof:
        md += ["## Profiles", "",
               "Flat perf profiles by symbol (PERF=1 tests/bench/ctl.sh: "
               "xfibd while it mirrors the full-table install; PERF=1 "
               "tests/bench/fwd.sh: the core running generator, router "
               "and sinks). Top lines only; the files are in "
               "build/bench/.", ""] + prof
    if not made:
        md += ["(Plots skipped: python3-matplotlib is not installed.)", ""]
    with open(os.path.join(d, "report.md"), "w") as f:
        f.write("\n".join(md))
    print("wrote %s: results.json (%d records), report.md%s" % (
        d, len(records), "".join(", " + p for p in made)))


if __name__ == "__main__":
    main()
