#!/usr/bin/python3
"""Draws a `hetstencil bench variants` CSV: time-to-accuracy speedup over sync
against alpha (async2, async3) or depth K (blocked), one panel per grid size,
with the spread of the runs. Uses Debian's python3-matplotlib.

    tools/plot_variants.py variants.csv variants.png [--title TEXT]
"""
import statistics
import sys
from collections import defaultdict

from plot_common import plt, read_args_and_rows


def main():
    args, rows = read_args_and_rows(__doc__)
    rows = [r for r in rows if r["variant"] != "sync" and float(r["speedup"]) > 0]
    if not rows:
        sys.exit(f"{args.csv}: no variant reached sync's accuracy")
    sizes = sorted({int(r["n"]) for r in rows})
    fig, axes = plt.subplots(1, len(sizes), figsize=(6 * len(sizes), 4.5), squeeze=False)
    for ax, n in zip(axes[0], sizes):
        runs = defaultdict(list)
        for r in rows:
            if int(r["n"]) == n:
                runs[(r["variant"], int(r["param"]))].append(float(r["speedup"]))
        for variant, marker in (("async2", "o-"), ("async3", "s-"), ("blocked", "^-")):
            params = sorted(p for v, p in runs if v == variant)
            if not params:
                continue
            mid = [statistics.median(runs[(variant, p)]) for p in params]
            lo = [m - min(runs[(variant, p)]) for m, p in zip(mid, params)]
            hi = [max(runs[(variant, p)]) - m for m, p in zip(mid, params)]
            ax.errorbar(params, mid, yerr=[lo, hi], fmt=marker, capsize=3, label=variant)
        ax.axhline(1.0, color="grey", linewidth=1, linestyle=":")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("alpha (async) or K (blocked)")
        ax.set_ylabel("speedup over sync at equal accuracy")
        ax.set_title(f"{n} x {n}", fontsize=10)
        ax.grid(True, alpha=0.3)
        ax.legend()
    fig.suptitle(args.title, fontsize=10)
    fig.tight_layout()
    fig.savefig(args.png, dpi=120)


if __name__ == "__main__":
    main()
