#!/usr/bin/env python3
"""Where is the planner furthest from the GPU? Runs `fusec bench --json` on each
graph given and lists the kernels (and whole plans) whose measured time differs
most from what `fusec explain` predicted for them, largest gap in us first.

    python3 bench/model_gaps.py --fusec build/bin/fusec examples/*.json bench/graphs/*.json

A kernel many times slower than its prediction is usually a schedule that
leaves the GPU idle (a whole-tensor sum on one block was 30x); one much faster
is a cost-model term to revisit (docs/cost-model.md)."""
import argparse
import json
import subprocess
import sys


def bench(fusec, graph, extra, timeout):
    cmd = [fusec, "bench", graph, "--json"] + extra
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "timed out after %d s" % timeout
    if p.returncode != 0:
        return None, (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
    return json.loads(p.stdout), None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("graphs", nargs="+")
    ap.add_argument("--fusec", default="build/bin/fusec")
    ap.add_argument("--min-gap-us", type=float, default=3.0,
                    help="list kernels at least this far from the prediction (default 3)")
    ap.add_argument("--timeout-s", type=int, default=120, help="per graph (default 120)")
    args = ap.parse_args(argv)
    # fusec bench's own warm-up and run count: with 20 runs after 0.2 s, small
    # kernels read 3-10x their time (bench/NOTES.md, round 90).
    extra = []
    rows, failed = [], []
    for g in args.graphs:
        j, err = bench(args.fusec, g, extra, args.timeout_s)
        if err:
            failed.append((g, err))
            print("%s: %s" % (g, err), file=sys.stderr)
            continue
        for plan in ("fused", "unfused"):
            p = j[plan]
            rows.append((p["median_us"] - p["planner_us"], g, plan, "whole graph",
                         p["median_us"], p["planner_us"]))
            for s in p.get("steps", []):
                rows.append((s["median_us"] - s["planner_us"], g, plan, s["name"],
                             s["median_us"], s["planner_us"]))
        print("%s: fused %.1f us (planner %.1f), unfused %.1f us (planner %.1f)" %
              (g, j["fused"]["median_us"], j["fused"]["planner_us"],
               j["unfused"]["median_us"], j["unfused"]["planner_us"]), file=sys.stderr)
    rows.sort(key=lambda r: -abs(r[0]))
    print("| graph | plan | kernel | measured us | planner us | measured / planner |")
    print("|---|---|---|---|---|---|")
    for gap, g, plan, name, meas, pred in rows:
        if abs(gap) >= args.min_gap_us:
            print("| %s | %s | %s | %.1f | %.1f | %.2f |" %
                  (g, plan, name, meas, pred, meas / pred if pred > 0 else float("inf")))
    for g, err in failed:
        print("| %s | - | failed: %s | | | |" % (g, err))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
