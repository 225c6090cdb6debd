#!/usr/bin/env python3
"""Writes cross-entropy-inputs.safetensors (the fixed inputs of cross-entropy.onnx) and prints
the losses ONNX's definitions give for them, computed here in plain Python:

    python3 make_cross_entropy.py [OUT_DIR]

cross-entropy.onnx is cross-entropy.onnx.txt encoded with
    protoc --encode=onnx.ModelProto -I/usr/include/onnx onnx.proto
"""
import json
import math
import os
import struct
import sys

LOGP = [[-1.0, -2.0, -3.0, -4.0], [-0.5, -1.5, -2.5, -3.5], [-2.0, -1.0, -0.25, -3.0]]
TARGET = [1, -100, 3]
W = [1.0, 2.0, 0.5, 4.0]
SCORES = [[1.0, 2.0, 3.0], [0.5, 0.5, -1.0]]
LABELS = [2, 0]
# A f16 product's scores: values k / 8, so that each sum of 8 products is
# exact in f16 (the product is rounded to f16 before the cast).
HX = [[((3 * i + 5 * j) % 9 - 4) / 8.0 for j in range(8)] for i in range(4)]
WX = [[((2 * i + 7 * j) % 11 - 5) / 8.0 for j in range(6)] for i in range(8)]
LABELS2 = [5, 0, -1, 2]


def write(path, tensors):
    header, blob = {}, b""
    for name, (dtype, shape, fmt, values) in tensors.items():
        data = struct.pack("<%d%s" % (len(values), fmt), *values)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(blob), len(blob) + len(data)]}
        blob += data
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + blob)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    write(os.path.join(out, "cross-entropy-inputs.safetensors"), {
        "logp": ("F32", [3, 4], "f", [x for r in LOGP for x in r]),
        "target": ("I64", [3], "q", TARGET),
        "scores": ("F32", [2, 3], "f", [x for r in SCORES for x in r]),
        "labels": ("I32", [2], "i", LABELS),
        "hx": ("F16", [4, 8], "e", [x for r in HX for x in r]),
        "wx": ("F16", [8, 6], "e", [x for r in WX for x in r]),
        "wx2": ("F16", [8, 6], "e", [x for r in WX for x in r]),
        "labels2": ("I64", [4], "q", LABELS2)})
    kept = [i for i, t in enumerate(TARGET) if t != -100]
    rows = [0.0 if t == -100 else -LOGP[i][t] for i, t in enumerate(TARGET)]
    loss = sum(-LOGP[i][TARGET[i]] * W[TARGET[i]] for i in kept) / sum(W[TARGET[i]] for i in kept)
    logprob = []
    for r in SCORES:
        lse = math.log(sum(math.exp(x) for x in r))
        logprob.append([x - lse for x in r])
    sce = sum(-logprob[i][LABELS[i]] for i in range(len(LABELS)))
    print("loss %.6f" % loss)
    print("losses %s" % ", ".join("%.6f" % x for x in rows))
    print("sce_sum %.6f" % sce)
    print("sce_log_prob %s" % ", ".join("%.6f" % x for r in logprob for x in r))
    print("sce_mean %.6f" % (sce / len(LABELS)))
    rows2 = []
    for i, t in enumerate(LABELS2):
        s = [sum(HX[i][k] * WX[k][j] for k in range(8)) for j in range(6)]
        lse = math.log(sum(math.exp(x) for x in s))
        rows2.append(0.0 if t == -1 else lse - s[t])
    print("sce_rows %s" % ", ".join("%.6f" % x for x in rows2))


if __name__ == "__main__":
    main()
