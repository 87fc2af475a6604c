#!/usr/bin/env python3
"""Compares two runs of bench/compare/run.py: for every case and system in both, the new
median over the old one (below 1: faster now).

TensorFlow, XLA and JAX do not change between two runs of eddy, so their ratios in a row show
how much the machine itself drifted between the runs (on a shared VM, up to 1.3-1.6x). An
eddy ratio is marked ** when it lies outside the frameworks' ratios in its row, widened by the
spread of its own timed calls in both runs: more likely a change of eddy than of the machine
(a heuristic: check a marked cell by rerunning that case).

usage: bench/compare/diff.py OLD.json NEW.json      (e.g. git show HEAD~3:bench/results.json)
Needs only the Python standard library.
"""

import json
import sys

SYSTEMS = ["eddy-aot", "eddy-jit", "eddy-interp", "tf", "xla", "jax"]
FRAMEWORKS = ["tf", "xla", "jax"]


def spread(r):
    t, med = r.get("times_s") or [], r.get("median_s")
    return (max(t) - min(t)) / med if t and med else 0.0


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 2
    try:
        old, new = (json.load(open(p)) for p in argv[1:])
    except (OSError, ValueError) as e:
        print("diff.py: %s" % e, file=sys.stderr)
        return 1
    old_cases = {c["case"]: c for c in old.get("cases", [])}
    print("new / old median, %s (%s) against %s (%s); ** marks an eddy change beyond the "
          "frameworks' drift\n" % (new.get("date"), new.get("versions", {}).get("eddy"), old.get("date"),
                        old.get("versions", {}).get("eddy")))
    print("| case | " + " | ".join(SYSTEMS) + " |")
    print("|---" * (len(SYSTEMS) + 1) + "|")
    for c in new.get("cases", []):
        o = old_cases.get(c["case"])
        pairs = {}
        for s in SYSTEMS:
            a = (o or {}).get("systems", {}).get(s) or {}
            b = c["systems"].get(s) or {}
            if a.get("median_s") and b.get("median_s"):
                pairs[s] = (b["median_s"] / a["median_s"], 1 + max(spread(a), spread(b)))
        drift = [pairs[s][0] for s in FRAMEWORKS if s in pairs] or [1.0]
        row = []
        for s in SYSTEMS:
            if s not in pairs:
                row.append("-")
                continue
            ratio, noise = pairs[s]
            marked = s not in FRAMEWORKS and (ratio > max(drift) * noise or
                                              ratio < min(drift) / noise)
            row.append("%s%.2f%s" % ("**" if marked else "", ratio, "**" if marked else ""))
        print("| %s | %s |" % (c["case"], " | ".join(row)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
