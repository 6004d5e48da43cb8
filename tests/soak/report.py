#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Soak report: reads the samples of tests/soak/soak.sh and writes
report.md and soak.png beside them. Exits 1 when memory or a count of map
entries grows after warm-up: the maximum of the last third of the
post-warm-up samples is more than 2% (heap: 2% + 256 KiB) above the
maximum of the first third. Resident memory as a whole is reported but
not judged: it also counts the pages of the mmap()ed maps touched so far,
which grows as more map indexes come into use."""
import json
import sys

SERIES = [  # (key, label, tolerance in absolute units besides 2%)
    ("heap_kib", "xfibd heap, resident (KiB)", 256),
    ("nexthops", "nexthop entries in use", 0),
    ("neighbours", "neighbour entries in use", 0),
    ("groups", "multipath groups in use", 0),
    ("prefixes4", "IPv4 prefixes published", 0),
    ("prefixes6", "IPv6 prefixes published", 0),
]


def growth(samples, key, slack):
    third = max(1, len(samples) // 3)
    first = max(s[key] for s in samples[:third])
    last = max(s[key] for s in samples[-third:])
    return first, last, last > first * 1.02 + slack


def main():
    src, out = sys.argv[1], sys.argv[2]
    run = json.load(open(src))
    samples = run["samples"]
    post = [s for s in samples if s["minute"] > run["warmup_until_minute"]]
    lines = [
        "# Soak run",
        "",
        "`make soak` (tests/soak/soak.sh, %d minutes): route, nexthop-object,"
        " link and neighbour churn in one-minute rounds (tests/lib/churn.sh),"
        " xfibd restarted under churn at minutes %s (SIGTERM, kill -9 in"
        " turn), a steady ping flow in both families, a sample after every"
        " round. Warm-up: until minute %d." % (
            run["minutes"], ", ".join(map(str, run["restarts_at"])),
            run["warmup_until_minute"]),
        "",
        "| check | result |",
        "|---|---|",
    ]
    failed = False
    verify_bad = [s["minute"] for s in samples if not s["verify_ok"]]
    lines.append("| verify clean at every sample | %s |" % (
        "yes (%d samples)" % len(samples) if not verify_bad else
        "NO: minutes %s" % verify_bad))
    lines.append("| steady flow (%d echoes per family) | %s |" % (
        run["echoes_per_family"], run["lost"] or "none lost"))
    if len(post) < 3:
        lines.append("| growth after warm-up | not judged: %d samples after"
                     " warm-up, 3 needed |" % len(post))
        failed = True
    else:
        for key, label, slack in SERIES:
            first, last, grew = growth(post, key, slack)
            failed |= grew
            lines.append("| %s: max of first / last third after warm-up |"
                         " %s / %s%s |" % (label, first, last,
                                           " GROWS" if grew else ""))
    resyncs = samples[-1]["resyncs"] if samples else 0
    overruns = samples[-1]["overruns"] if samples else 0
    lines += ["", "Last daemon: %d resyncs after %d overruns." % (
        resyncs, overruns), "", "![soak](soak.png)", "",
        "| minute | pid | RSS KiB | heap KiB | nexthops | neighbours | groups |"
        " prefixes v4/v6 | kernel routes v4/v6 | verify |",
        "|---|---|---|---|---|---|---|---|---|---|"]
    for s in samples:
        lines.append("| %d | %d | %d | %d | %d | %d | %d | %d/%d | %d/%d | %s |" % (
            s["minute"], s["pid"], s["rss_kib"], s["heap_kib"], s["nexthops"],
            s["neighbours"], s["groups"], s["prefixes4"], s["prefixes6"],
            s["kernel_routes4"], s["kernel_routes6"],
            "clean" if s["verify_ok"] else "%d mismatched" % s["mismatched"]))
    with open("%s/report.md" % out, "w") as f:
        f.write("\n".join(lines) + "\n")
    plot(samples, run, "%s/soak.png" % out)
    print("\n".join(lines))
    return 1 if failed else 0


def plot(samples, run, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("report.py: no matplotlib, no plot", file=sys.stderr)
        return
    m = [s["minute"] for s in samples]
    fig, (a, b) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    a.plot(m, [s["rss_kib"] / 1024 for s in samples], marker="o", label="resident")
    a.plot(m, [s["heap_kib"] / 1024 for s in samples], marker="o", label="heap")
    a.set_ylabel("xfibd memory (MiB)")
    a.legend(fontsize=7)
    for key, label, _ in SERIES[1:]:
        b.plot(m, [s[key] for s in samples], marker=".", label=label)
    b.set_ylabel("entries in use")
    b.set_xlabel("minute")
    b.legend(fontsize=7)
    for ax in (a, b):
        for r in run["restarts_at"]:
            ax.axvline(r, color="grey", linestyle=":")
        ax.axvline(run["warmup_until_minute"], color="red", linestyle="--")
    a.set_title("xfib soak: memory and map entries (dotted: restarts,"
                " dashed: end of warm-up)")
    fig.tight_layout()
    fig.savefig(path, dpi=90)


if __name__ == "__main__":
    sys.exit(main())
