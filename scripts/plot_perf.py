#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Draw Mpps per lcore against connections from a sluice-bench micro CSV.

usage: /usr/bin/python3 scripts/plot_perf.py [CSV [PNG]]
  CSV  written by `sluice-bench --csv FILE` (default bench/results/micro.csv)
  PNG  output (default docs/perf-conns.png)

Plots the established-flow scenarios (est-*) of the 10-service table, one
line per flow distribution, plus the published per-core anchors for scale.
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ANCHORS = [  # (Mpps per core, label, label above or below the line)
    (0.22, "Ananta mux (220 Kpps/core)", "bottom"),
    (1.8, "Maglev (~1.8 Mpps/packet thread)", "bottom"),
    (2.9, "DPVS (2.9 Mpps/worker)", "top"),
    (3.0, "VPP lb, 1M flows (>3 Mpps/core)", "bottom"),
]


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "bench/results/micro.csv")
    dst = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "docs/perf-conns.png")
    series = {}
    with open(src, newline="") as f:
        for row in csv.DictReader(f):
            if not row["scenario"].startswith("est-"):
                continue
            series.setdefault(row["dist"], []).append(
                (int(row["conns"]), float(row["mpps"]), float(row["cycles_per_pkt"])))
    if not series:
        sys.exit(f"{src}: no est-* rows")

    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for n, (dist, pts) in enumerate(sorted(series.items())):
        pts.sort()
        xs = [p[0] for p in pts]
        ax.plot(xs, [p[1] for p in pts], marker="o", label=f"sluice mux_burst, {dist}")
        for x, y, c in pts:
            ax.annotate(f"{c:.0f} cyc", (x, y), textcoords="offset points",
                        xytext=(4, 6 if n % 2 else -12), fontsize=7)
    for mpps, label, va in ANCHORS:
        ax.axhline(mpps, linestyle=":", linewidth=0.8, color="grey")
        ax.text(1.05e3, mpps, label, fontsize=7, va=va, color="dimgrey")
    ax.set_xscale("log")
    ax.set_xlabel("established connections in the table")
    ax.set_ylabel("Mpps per lcore (mux_burst only)")
    ax.set_title("Sluice mux: throughput vs connection-table size (micro mode)")
    ax.set_ylim(bottom=0)
    ax.grid(True, which="both", linewidth=0.3)
    ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    fig.savefig(dst, dpi=120)
    print(f"wrote {dst}")


if __name__ == "__main__":
    main()
