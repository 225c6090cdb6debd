#!/usr/bin/env python3
"""Writes the benchmark graphs in bench/graphs/ (graph format v1).

The seed computations at realistic sizes. Run it after changing a case; the
JSON files are committed so that the suite runs without Python on the host.
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "graphs")


def graph(name, inputs, nodes, outputs, description):
    return {"fusec": 1, "name": name, "description": description,
            "inputs": [{"name": n, "dtype": d, "shape": s} for n, d, s in inputs],
            "nodes": nodes, "outputs": outputs}


def node(name, op, inputs, **attrs):
    n = {"name": name, "op": op, "inputs": inputs}
    if attrs:
        n["attrs"] = attrs
    return n


def memory_bound(m, n, dt="bf16", suffix=""):
    x = ("x", dt, [m, n])
    row = [n]
    g = {}
    g["gelu_bias" + suffix] = graph(
        "gelu_bias" + suffix, [x, ("bias", dt, row)],
        [node("h", "add", ["x", "bias"]), node("y", "gelu", ["h"], approximate="tanh")],
        ["y"], "gelu(x + bias)")
    g["cos" + suffix] = graph("cos" + suffix, [x], [node("y", "cos", ["x"])], ["y"], "cos(x)")
    g["cos_cos" + suffix] = graph(
        "cos_cos" + suffix, [x], [node("c", "cos", ["x"]), node("y", "cos", ["c"])], ["y"],
        "cos(cos(x))")
    g["rms_norm" + suffix] = graph(
        "rms_norm" + suffix, [x, ("w", dt, row)],
        [node("y", "rms_norm", ["x", "w"], eps=1e-6)], ["y"], "rms_norm(x) * w")
    g["add_rms_norm" + suffix] = graph(
        "add_rms_norm" + suffix, [x, ("r", dt, [m, n]), ("w", dt, row)],
        [node("h", "add", ["x", "r"]), node("y", "rms_norm", ["h", "w"], eps=1e-6)],
        ["h", "y"], "h = x + r; y = rms_norm(h) * w (both outputs)")
    g["softmax" + suffix] = graph(
        "softmax" + suffix, [x], [node("y", "softmax", ["x"], axis=-1)], ["y"], "softmax(x, -1)")
    g["log_softmax" + suffix] = graph(
        "log_softmax" + suffix, [x], [node("y", "log_softmax", ["x"], axis=-1)], ["y"],
        "log_softmax(x, -1)")
    g["layer_norm" + suffix] = graph(
        "layer_norm" + suffix, [x, ("w", dt, row), ("b", dt, row)],
        [node("y", "layer_norm", ["x", "w", "b"], axis=-1, eps=1e-5)], ["y"],
        "layer_norm(x) * w + b")
    return g


def main():
    os.makedirs(OUT, exist_ok=True)
    graphs = memory_bound(8192, 8192)
    graphs["softmax_dim0"] = graph(
        "softmax_dim0", [("x", "bf16", [8192, 8192])],
        [node("y", "softmax", ["x"], axis=0)], ["y"], "softmax(x, 0): an outer reduction")
    graphs["odd_chain_f32"] = graph(
        "odd_chain_f32", [("x", "f32", [1023, 4097]), ("b", "f32", [4097])],
        [node("h", "add", ["x", "b"]), node("t", "tanh", ["h"]), node("s", "sigmoid", ["x"]),
         node("p", "mul", ["t", "s"]), node("y", "add", ["p", "x"])],
        ["y"], "tanh(x + b) * sigmoid(x) + x on odd f32 sizes")
    # Decode-sized rows: latency, not bandwidth.
    for rows in (1, 32):
        small = memory_bound(rows, 4096, suffix="_%dx4096" % rows)
        for k in ("rms_norm", "softmax", "add_rms_norm", "gelu_bias"):
            graphs[k + "_%dx4096" % rows] = small[k + "_%dx4096" % rows]
    for name, g in sorted(graphs.items()):
        with open(os.path.join(OUT, name + ".json"), "w") as f:
            json.dump(g, f, indent=2)
            f.write("\n")
    print("wrote %d graphs to %s" % (len(graphs), OUT))


if __name__ == "__main__":
    main()
