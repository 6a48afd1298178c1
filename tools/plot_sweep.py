#!/usr/bin/python3
"""Draws a `hetstencil sweep` CSV: time per iteration against the varied
device's share, predicted and measured (the median, with a bar from the
fastest to the slowest run), and where a CPU slab fits a cache in its curve
the prediction at the pace past that cache; the model's split marked by a line and the
best measured split by a ring; points measured while the host was disturbed
are crossed. Uses Debian's python3-matplotlib.

    tools/plot_sweep.py sweep.csv sweep.png [--title TEXT]
"""
import sys

from plot_common import plt, read_args_and_rows


def ms(row, key):
    """The CSV's seconds as the plot's milliseconds."""
    return 1e3 * float(row[key])


def main():
    args, rows = read_args_and_rows(__doc__)
    if not rows:
        sys.exit(f"{args.csv}: no splits in it")
    sweep = sorted((r for r in rows if r["point"] == "sweep"), key=lambda r: float(r["share"]))
    model = [r for r in rows if r["point"] == "model"]
    best = min(rows, key=lambda r: float(r["measured_iteration_s"]))
    varied = next(k for k in rows[0] if k.endswith("_rows"))[: -len("_rows")]

    fig, ax = plt.subplots(figsize=(7, 4.5))
    share = [100 * float(r["share"]) for r in sweep]
    measured = [ms(r, "measured_iteration_s") for r in sweep]
    spread = [[m - ms(r, "measured_min_s") for r, m in zip(sweep, measured)],
              [ms(r, "measured_max_s") - m for r, m in zip(sweep, measured)]]
    ax.errorbar(share, measured, yerr=spread, fmt="o-", capsize=3, label="measured (median, fastest-slowest)",
                color="tab:blue")
    predicted = [(100 * float(r["share"]), ms(r, "predicted_iteration_s")) for r in sweep if r["predicted_iteration_s"]]
    if predicted:
        ax.plot(*zip(*predicted), "s--", label="predicted", color="tab:orange", markersize=4)
    uncached = [(100 * float(r["share"]), ms(r, "uncached_iteration_s")) for r in sweep if r.get("uncached_iteration_s")]
    if uncached:
        ax.plot(*zip(*uncached), "v", label="predicted, a CPU slab that fits a cache at the pace past it",
                color="tab:purple", markersize=4)
    disturbed = [(100 * float(r["share"]), ms(r, "measured_iteration_s")) for r in rows if r["disturbed"] == "yes"]
    if disturbed:
        ax.plot(*zip(*disturbed), "x", markersize=12, color="tab:gray", label="host disturbed in every run")
    for r in model:
        m = ms(r, "measured_iteration_s")
        ax.axvline(100 * float(r["share"]), color="tab:red", alpha=0.4, linestyle=":")
        ax.errorbar([100 * float(r["share"])], [m],
                    yerr=[[m - ms(r, "measured_min_s")], [ms(r, "measured_max_s") - m]], fmt="*", markersize=16,
                    capsize=3, color="tab:red", label=f"planned split ({100 * float(r['share']):.2f}%), measured")
        if r["predicted_iteration_s"]:
            ax.plot(100 * float(r["share"]), ms(r, "predicted_iteration_s"), "P", markersize=10, color="tab:red",
                    fillstyle="none", label="planned split, predicted")
    ax.plot(100 * float(best["share"]), ms(best, "measured_iteration_s"), "o", markersize=14, fillstyle="none",
            color="tab:green", markeredgewidth=2, label=f"measured best ({100 * float(best['share']):.2f}%)")
    ax.set_xlabel(f"share of the rows on {varied} (%)")
    ax.set_ylabel("time per iteration (ms)")
    ax.set_title(args.title, fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(args.png, dpi=120)


if __name__ == "__main__":
    main()
