"""Forward steps run by checkpoint:SLOTS against the binomial optimum.

The gradient loop of a loop marked checkpoint:SLOTS (autodiff/ad_checkpoint.c,
ad_revolve_state) reverses steps T-1, ..., 0. Before reversing step i it
advances from its last snapshot to i, and on the way takes a snapshot after
m steps, m = max(1, l - beta(S-1, r), beta(S, r-2)) (l: steps left including
i, S: free snapshots plus one, r: the least with beta(S, r) >= l,
beta(S, r) = C(S + r, r)), while snapshots are free; the snapshot at i is
dropped after use. This script runs that procedure step for step, counts
the forward steps it runs (besides the forward loop itself and the one run
of each step that its gradient recomputes), and compares the count with
the optimum for SLOTS snapshots, r T - beta(SLOTS + 1, r - 1) with r the
least such that beta(SLOTS, r) >= T (Griewank, "Achieving logarithmic growth
of temporal and spatial complexity in reverse automatic differentiation";
the formula was also checked against the recursion
min_m [m + F(m, s) + F(l - m, s - 1)] for T < 200, SLOTS < 8).

    python3 bench/loop_memory/schedule.py            # the table
    python3 bench/loop_memory/schedule.py --check    # every T <= 300, SLOTS <= 12
"""
import math
import sys


def beta(s, r):
    return math.comb(s + r, r) if r >= 0 else 0


def split(l, free):
    """rev_split: the steps to advance before the next snapshot."""
    big_s, r, b, bp, bp2 = free + 1, 0, 1, 0, 0
    while b < l:
        r += 1
        bp2, bp, b = bp, b, b * (big_s + r) // r
    return max(1, l - (b - bp), bp2)


def simulate(steps, slots):
    """Forward steps the gradient loop runs, and the most snapshots held."""
    stack = [0]  # positions of the snapshots; the loop's init is the first
    ran = most = 0
    for i in range(steps - 1, -1, -1):
        pos = stack[-1]
        while pos < i:
            m = split(i - pos + 1, slots - len(stack))
            ran += m
            pos += m
            if pos < i:
                stack.append(pos)
                most = max(most, len(stack))
        if stack[-1] == i:
            stack.pop()
    return ran, max(most, 1)


def optimum(steps, slots):
    r = 0
    while beta(slots, r) < steps:
        r += 1
    return r * steps - beta(slots + 1, r - 1) if steps > 0 else 0


def main():
    if "--check" in sys.argv[1:]:
        bad = [(t, s) for s in range(1, 13) for t in range(1, 301)
               if simulate(t, s)[0] != optimum(t, s) or simulate(t, s)[1] > s]
        print("checked T 1..300, SLOTS 1..12: %d mismatches%s" % (
            len(bad), (": " + str(bad[:10])) if bad else ""))
        return 1 if bad else 0
    print("| T | SLOTS | forward steps run | optimum | per step | snapshots held |")
    print("|---|---|---|---|---|---|")
    for steps in (100, 1000, 10000):
        for slots in sorted({max(1, math.ceil(math.log2(steps))),
                             math.ceil(math.sqrt(steps)), 2, 8}):
            ran, most = simulate(steps, slots)
            print("| %d | %d | %d | %d | %.2f | %d |" % (
                steps, slots, ran, optimum(steps, slots), ran / steps, most))
    return 0


if __name__ == "__main__":
    sys.exit(main())
