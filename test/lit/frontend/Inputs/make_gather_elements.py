#!/usr/bin/env python3
"""Writes gather-elements-inputs.safetensors (the fixed inputs of gather-elements.onnx) and
gather-elements-expected.safetensors (what ONNX's GatherElements gives for them, computed
here in plain Python), and prints the latter; and the input of gather-elements-names.onnx:

    python3 make_gather_elements.py [OUT_DIR]

gather-elements.onnx is gather-elements.onnx.txt encoded with
    protoc --encode=onnx.ModelProto -I/usr/include/onnx onnx.proto
"""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_cross_entropy import write  # noqa: E402

DATA = [[float(10 * i + j) for j in range(5)] for i in range(3)]
IDX = [[4], [-1], [-5]]          # the last column counted both ways, then the first
IDX2 = [[2, 0, 1, -1, 0], [0, 2, 2, 1, -3]]
# A f16 product's scores: values k / 8, each sum of 8 products exact in f16.
HX = [[((3 * i + 5 * j) % 9 - 4) / 8.0 for j in range(8)] for i in range(4)]
WX = [[((2 * i + 7 * j) % 11 - 5) / 8.0 for j in range(6)] for i in range(8)]
TOKENS = [[5], [0], [-2], [3]]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    write(os.path.join(out, "gather-elements-inputs.safetensors"), {
        "data": ("F32", [3, 5], "f", [x for r in DATA for x in r]),
        "idx": ("I64", [3, 1], "q", [x for r in IDX for x in r]),
        "idx2": ("I32", [2, 5], "i", [x for r in IDX2 for x in r]),
        "hx": ("F16", [4, 8], "e", [x for r in HX for x in r]),
        "wx": ("F16", [8, 6], "e", [x for r in WX for x in r]),
        "tokens": ("I64", [4, 1], "q", [x for r in TOKENS for x in r])})
    last = [DATA[i][r[0]] for i, r in enumerate(IDX)]
    rows = [DATA[IDX2[i][j]][j] for i in range(2) for j in range(5)]
    scores = [[sum(HX[i][k] * WX[k][j] for k in range(8)) for j in range(6)] for i in range(4)]
    logp = []
    for r in scores:
        m = max(r)
        lse = m + math.log(sum(math.exp(x - m) for x in r))
        logp.append([x - lse for x in r])
    token = [logp[i][t[0]] for i, t in enumerate(TOKENS)]
    # gather-elements-names.onnx: indices from a Constant, and a weight the
    # model names "y.zero" (a name the importer would make for itself).
    write(os.path.join(out, "gather-elements-names-inputs.safetensors"), {
        "data": ("F32", [2, 3], "f", [1, 2, 3, 4, 5, 6])})
    print("z %s" % ", ".join("%g" % x for x in [3 + 7, 4 + 7]))
    write(os.path.join(out, "gather-elements-expected.safetensors"), {
        "ge_last": ("F32", [3, 1], "f", last),
        "ge_rows": ("F32", [2, 5], "f", rows),
        "token_logp": ("F32", [4, 1], "f", token)})
    print("ge_last %s" % ", ".join("%g" % x for x in last))
    print("ge_rows %s" % ", ".join("%g" % x for x in rows))
    print("token_logp %s" % ", ".join("%.6f" % x for x in token))


if __name__ == "__main__":
    main()
