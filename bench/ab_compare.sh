#!/usr/bin/env bash
# A/B on one GPU: `fusec bench --no-steps --json` of two fusec binaries,
# alternating per graph (A B A B), so that clock and power drift fall on
# both alike. Prints each graph's fused median per run and the ratio of the
# medians of B over A. Used to show that a refactoring changed no kernel's
# speed (bench/NOTES.md).
#   bench/ab_compare.sh OLD_FUSEC NEW_FUSEC GRAPH...
set -u
a=$1 b=$2
shift 2
out=${OUT:-/tmp}
printf '%-44s %10s %10s %10s %10s %8s\n' graph A1_us B1_us A2_us B2_us B/A
for g in "$@"; do
  times=()
  for bin in "$a" "$b" "$a" "$b"; do
    j=$("$bin" bench "$g" --no-steps --json --iters 50 2>>"$out/ab_err.log") || { times+=(nan); continue; }
    echo "$j" >>"$out/ab_runs.jsonl"
    times+=($(python3 -c 'import json,sys; print("%.1f" % json.loads(sys.argv[1])["fused"]["median_us"])' "$j"))
  done
  ratio=$(python3 -c 'import sys,statistics as s; t=[float(x) for x in sys.argv[1:]]; print("%.3f" % (s.median(t[1::2])/s.median(t[0::2])))' "${times[@]}" 2>/dev/null || echo nan)
  printf '%-44s %10s %10s %10s %10s %8s\n' "$(basename "$g" .json)" "${times[@]}" "$ratio"
done
