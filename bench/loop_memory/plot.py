"""Plots the loop gradient memory tables: bench/loop_memory/results.png.

    python3 bench/loop_memory/plot.py [--lstm results.md] [--revnet results_revnet.md]
                                      [--revnet-shared results_revnet_shared.md]
                                      [--out results.png]

Reads the tables that run.py writes (so a plot never needs a re-run) and draws,
for the LSTM and for the two RevNets, the working memory and the time of each policy
against the trip count (depth), log-log. Needs matplotlib.
"""
import argparse
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))


def read_table(path):
    """Rows of run.py's table: {steps, policy, time_s, working_mb}."""
    rows = []
    with open(path) as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) != 9 or not cells[0].isdigit():
                continue
            num = lambda s: float(re.match(r"[0-9.eE+-]+", s).group(0))  # noqa: E731
            rows.append({"steps": int(cells[0]), "policy": cells[1],
                         "time_s": num(cells[2]), "working_mb": num(cells[5])})
    return rows


def policy_family(p):
    """checkpoint:SLOTS rows differ in SLOTS per T; group them by their rule."""
    return p if not p.startswith("checkpoint:") else "checkpoint:SLOTS"


def draw(ax_mem, ax_time, rows, title, xlabel):
    series = {}
    for r in rows:
        series.setdefault(r["policy"], []).append(r)
    for policy, rs in sorted(series.items()):
        rs.sort(key=lambda r: r["steps"])
        xs = [r["steps"] for r in rs]
        ax_mem.plot(xs, [r["working_mb"] for r in rs], "o-", label=policy)
        ax_time.plot(xs, [r["time_s"] for r in rs], "o-", label=policy)
    for ax, what in ((ax_mem, "working memory (MB)"), (ax_time, "time per call (s)")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(what)
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lstm", default=os.path.join(HERE, "results.md"))
    ap.add_argument("--revnet", default=os.path.join(HERE, "results_revnet.md"))
    ap.add_argument("--revnet-shared",
                    default=os.path.join(HERE, "results_revnet_shared.md"))
    ap.add_argument("--out", default=os.path.join(HERE, "results.png"))
    args = ap.parse_args()
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(3, 2, figsize=(11, 12))
    lstm = read_table(args.lstm)
    # The LSTM's checkpoint:SLOTS rows use sqrt(T) and log2(T) slots: two series.
    for r in lstm:
        if r["policy"].startswith("checkpoint:"):
            slots = int(r["policy"].split(":")[1])
            r["policy"] = ("checkpoint:sqrt(T)" if slots * slots >= r["steps"]
                           else "checkpoint:log2(T)")
    draw(axes[0][0], axes[0][1], lstm, "LSTM gradient (hidden 256, batch 32)", "steps T")
    draw(axes[1][0], axes[1][1], read_table(args.revnet),
         "RevNet gradient, weights per block", "depth")
    draw(axes[2][0], axes[2][1], read_table(args.revnet_shared),
         "RevNet gradient, weights shared", "depth")
    fig.tight_layout()
    fig.savefig(args.out, dpi=90)
    print("wrote " + args.out)


if __name__ == "__main__":
    main()
