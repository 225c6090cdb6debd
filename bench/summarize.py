#!/usr/bin/env python3
"""Prints one line per `fusec bench --json` file: fused vs unfused, % of copy bandwidth."""
import json
import sys


def main(paths):
    rows = []
    for p in paths:
        try:
            with open(p) as f:
                j = json.load(f)
        except (OSError, ValueError) as e:
            print("skip %s: %s" % (p, e))
            continue
        bw = j["copy_bw_bytes_per_s"]
        fused = j["fused"]
        floor_us = fused["bytes"] / bw * 1e6
        rows.append((j["graph"].split("/")[-1].replace(".json", ""), floor_us, fused["median_us"],
                     100 * floor_us / fused["median_us"], j["unfused"]["median_us"],
                     j["speedup_measured"], j["speedup_predicted"], len(fused["steps"]),
                     fused["host_us_per_launch"]))
    print("%-24s %9s %9s %7s %10s %8s %8s %4s %6s" % (
        "case", "floor_us", "fused_us", "%floor", "unfused_us", "speedup", "predict", "kern",
        "host_us"))
    for r in rows:
        print("%-24s %9.1f %9.1f %6.1f%% %10.1f %7.2fx %7.2fx %4d %6.2f" % r)
    # Matmul steps: their rate, and their bandwidth on the bytes they move.
    print("\n%-34s %-22s %9s %9s %8s %8s" % ("case", "step", "us", "TFLOP/s", "GB/s", "family"))
    for p in paths:
        try:
            with open(p) as f:
                j = json.load(f)
        except (OSError, ValueError):
            continue
        name = p.split("/")[-1].replace("bench_", "").replace(".json", "")
        for plan in ("fused", "unfused"):
            for s in j[plan]["steps"]:
                if s.get("flops", 0) > 0:
                    us = s["median_us"]
                    print("%-34s %-22s %9.1f %9.1f %8.0f %8s" % (
                        name + " " + plan, s["name"][:22], us, s["flops"] / us / 1e6,
                        s["bytes"] / us / 1e3, s["family"][:8]))


if __name__ == "__main__":
    main(sys.argv[1:])
