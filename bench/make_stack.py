#!/usr/bin/env python3
"""Writes an N-layer decode stack: bench/graphs/llama_block_decode_b32.json
repeated N times, each layer with its own weights and KV cache, the hidden
state chained through. For timing fusec's planning on deep graphs:

    python3 bench/make_stack.py 64 /tmp/stack64.json
    time fusec explain /tmp/stack64.json --arch sm_90a > /dev/null
"""
import copy
import json
import os
import sys


def stack(layer, n):
    out = {"fusec": 1, "name": f"decode_stack_{n}",
           "description": f"{n} x {layer['name']}, the hidden state chained through",
           "inputs": [], "nodes": [], "outputs": []}
    cur = "x"
    for i in range(n):
        ren = {}
        for t in layer["inputs"]:
            if t["name"] == "x":
                ren["x"] = cur
                if i == 0:
                    out["inputs"].append(copy.deepcopy(t))
                continue
            ren[t["name"]] = f"l{i}_{t['name']}"
            out["inputs"].append(dict(copy.deepcopy(t), name=ren[t["name"]]))
        for nd in layer["nodes"]:
            ren[nd["name"]] = f"l{i}_{nd['name']}"
        for nd in layer["nodes"]:
            out["nodes"].append(dict(copy.deepcopy(nd), name=ren[nd["name"]],
                                     inputs=[ren[x] for x in nd["inputs"]]))
        out["outputs"] += [ren[o] for o in layer["outputs"] if o != "out"]
        cur = ren["out"]
    out["outputs"].append(cur)
    return out


def main():
    if len(sys.argv) != 3 or not sys.argv[1].isdigit() or int(sys.argv[1]) < 1:
        sys.exit("usage: make_stack.py LAYERS OUT.json")
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "graphs", "llama_block_decode_b32.json")) as f:
        layer = json.load(f)
    with open(sys.argv[2], "w") as f:
        json.dump(stack(layer, int(sys.argv[1])), f, indent=1)


if __name__ == "__main__":
    main()
