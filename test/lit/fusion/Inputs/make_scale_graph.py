"""Writes a scale-test graph: `chain N` (N elementwise ops in a row), `sum N`
(x0 + x1 + ... + x(N-1), one add each), or `concat N` (one concat of N
inputs)."""
import json
import sys

kind, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
g = {"fusec": 1, "name": "%s%d" % (kind, n), "nodes": []}
if kind == "chain":
    g["inputs"] = [{"name": "x", "dtype": "f32", "shape": [64]}]
    prev = "x"
    for i in range(n):
        g["nodes"].append({"name": "n%d" % i, "op": "exp" if i % 2 else "neg", "inputs": [prev]})
        prev = "n%d" % i
    g["outputs"] = [prev]
elif kind == "sum":
    g["inputs"] = [{"name": "x%d" % i, "dtype": "f32", "shape": [1024]} for i in range(n)]
    prev = "x0"
    for i in range(1, n):
        g["nodes"].append({"name": "s%d" % i, "op": "add", "inputs": [prev, "x%d" % i]})
        prev = "s%d" % i
    g["outputs"] = [prev]
else:
    g["inputs"] = [{"name": "x%d" % i, "dtype": "f32", "shape": [2, 4]} for i in range(n)]
    g["nodes"] = [{"name": "y", "op": "concat", "inputs": ["x%d" % i for i in range(n)],
                   "attrs": {"axis": 1}}]
    g["outputs"] = ["y"]
with open(out, "w") as f:
    json.dump(g, f)
