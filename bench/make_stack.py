#!/usr/bin/env python3
"""Writes an N-layer decode stack: a decode block (bench/graphs/llama_block_decode_b32.json by
default) repeated N times, each layer with its own weights (or, tied, one set read by every
layer: stack(shared=True)) and KV cache, the hidden state chained through. For timing
fusec's planning on deep graphs, and (with --params) a whole model's decode step with its
weights as parameters, bound once (bench/llama_stack.py):

    python3 bench/make_stack.py 64 /tmp/stack64.json
    python3 bench/make_stack.py 32 /tmp/llama32.json --layer llama_block_decode_b1 --params
    time fusec explain /tmp/stack64.json --arch sm_90a > /dev/null
"""
import argparse
import copy
import json
import os


def stack(layer, n, params=False, shared=False):
    """`layer` repeated n times; with `params` its inputs named w_* are parameters; with
    `shared` every layer reads the same w_* inputs (one set of weights, tied)."""
    out = {"fusec": 1, "name": f"decode_stack_{n}",
           "description": f"{n} x {layer['name']}, the hidden state chained through",
           "inputs": [], "nodes": [], "outputs": []}
    if params:
        out["parameters"] = []
    cur = "x"
    for i in range(n):
        ren = {}
        for t in layer["inputs"]:
            if t["name"] == "x":
                ren["x"] = cur
                if i == 0:
                    out["inputs"].append(copy.deepcopy(t))
                continue
            tied = shared and t["name"].startswith("w_")
            ren[t["name"]] = t["name"] if tied else f"l{i}_{t['name']}"
            kind = "parameters" if params and t["name"].startswith("w_") else "inputs"
            if not tied or i == 0:
                out[kind].append(dict(copy.deepcopy(t), name=ren[t["name"]]))
        for nd in layer["nodes"]:
            ren[nd["name"]] = f"l{i}_{nd['name']}"
        for nd in layer["nodes"]:
            out["nodes"].append(dict(copy.deepcopy(nd), name=ren[nd["name"]],
                                     inputs=[ren[x] for x in nd["inputs"]]))
        out["outputs"] += [ren[o] for o in layer["outputs"] if o != "out"]
        cur = ren["out"]
    out["outputs"].append(cur)
    return out


def load_layer(name):
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "graphs", name + ".json")) as f:
        return json.load(f)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("layers", type=int)
    p.add_argument("out")
    p.add_argument("--layer", default="llama_block_decode_b32",
                   help="the bench graph repeated (default: %(default)s)")
    p.add_argument("--params", action="store_true",
                   help="the layers' w_* inputs become parameters (weights bound once)")
    a = p.parse_args()
    if a.layers < 1:
        p.error("LAYERS must be at least 1")
    with open(a.out, "w") as f:
        json.dump(stack(load_layer(a.layer), a.layers, a.params), f, indent=1)


if __name__ == "__main__":
    main()
