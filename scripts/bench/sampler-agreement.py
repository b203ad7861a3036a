#!/usr/bin/env python3
"""How much two sampler profiles agree: the `cpu.folded` and `wall.folded`
files the `sampler` example writes (CORPROF_SAMPLER_DIR), for instance one
run in signal mode and one in suspend-runtime mode on the same workload.

    python3 scripts/bench/sampler-agreement.py DIR_A DIR_B

For each kind, both profiles are normalized to shares of their total and
compared three ways: full stacks, leaf functions, and every function's
inclusive share ("cum"). Agreement is the overlap sum(min(a, b)) over the
keys (1.0: the same distribution; 0.0: nothing in common). Prints one line
per kind and measure, then the largest differences of leaf shares.
"""
import sys
from collections import defaultdict


def read(path):
    stacks = defaultdict(float)
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            stack, value = line.rsplit(" ", 1)
            stacks[stack] += float(value)
    total = sum(stacks.values()) or 1.0
    return {k: v / total for k, v in stacks.items()}, total


def leaves(stacks):
    out = defaultdict(float)
    for stack, share in stacks.items():
        out[stack.split(";")[-1]] += share
    return out


def inclusive(stacks):
    out = defaultdict(float)
    for stack, share in stacks.items():
        for frame in set(stack.split(";")):
            out[frame] += share
    return out


def overlap(a, b):
    return sum(min(a.get(k, 0.0), b.get(k, 0.0)) for k in set(a) | set(b))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    a_dir, b_dir = sys.argv[1:]
    for kind in ("cpu", "wall"):
        a, a_total = read(f"{a_dir}/{kind}.folded")
        b, b_total = read(f"{b_dir}/{kind}.folded")
        print(f"{kind}: total {a_total / 1e9:.3f} s vs {b_total / 1e9:.3f} s")
        print(f"{kind}: stacks agree {overlap(a, b):.3f}")
        la, lb = leaves(a), leaves(b)
        print(f"{kind}: leaves agree {overlap(la, lb):.3f}")
        ia, ib = inclusive(a), inclusive(b)
        # Inclusive shares sum to more than 1: the mean of min/max per frame
        # weighted by the larger share.
        keys = set(ia) | set(ib)
        num = sum(min(ia.get(k, 0), ib.get(k, 0)) for k in keys)
        den = sum(max(ia.get(k, 0), ib.get(k, 0)) for k in keys) or 1.0
        print(f"{kind}: inclusive shares agree {num / den:.3f}")
        diffs = sorted(
            ((la.get(k, 0) - lb.get(k, 0), k) for k in set(la) | set(lb)),
            key=lambda d: -abs(d[0]),
        )
        for d, k in diffs[:5]:
            print(f"  leaf {k}: {la.get(k, 0):.3f} vs {lb.get(k, 0):.3f}")
        diffs = sorted(
            ((a.get(k, 0) - b.get(k, 0), k) for k in set(a) | set(b)),
            key=lambda d: -abs(d[0]),
        )
        for d, k in diffs[:4]:
            print(f"  stack {k[-150:]}: {a.get(k, 0):.3f} vs {b.get(k, 0):.3f}")


main()
