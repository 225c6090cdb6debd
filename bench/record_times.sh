#!/usr/bin/env bash
# Times every bench graph's fused and unfused plan on this GPU (`fusec bench --json
# --no-steps`), one JSON line each, for bench/check_predictions.py --update:
#
#   bash bench/record_times.sh build/bin/fusec h200 /tmp/records.jsonl
#   python3 bench/check_predictions.py --update /tmp/records.jsonl bench/records/h200.json
set -u
fusec=${1:?usage: record_times.sh FUSEC PROFILE OUT.jsonl}
profile=${2:?profile}
out=${3:?out}
cd "$(dirname "$0")/.."
: > "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for g in bench/graphs/*.json; do
  n=$(basename "$g" .json)
  timeout 120 "$fusec" bench "$g" --json --no-steps --device "$profile" --warmup-s 0.3 \
    --iters 40 > "$tmp/r.json" 2> "$tmp/r.err"
  rc=$?
  python3 - "$n" "$rc" "$tmp" >> "$out" <<'PY'
import json, sys
name, rc, tmp = sys.argv[1], sys.argv[2], sys.argv[3]
try:
    j = json.load(open(tmp + "/r.json"))
    r = {"graph": name, "fused_us": j["fused"]["median_us"], "unfused_us": j["unfused"]["median_us"],
         "planner_fused_us": j["fused"]["planner_us"], "device": j["device"],
         "copy_bw": j["copy_bw_bytes_per_s"]}
except Exception:
    r = {"graph": name, "error": "exit %s: %s" % (rc, open(tmp + "/r.err").read()[-300:])}
print(json.dumps(r))
PY
  echo "$n: $(tail -1 "$out" | cut -c1-120)" >&2
done
