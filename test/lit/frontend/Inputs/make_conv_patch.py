#!/usr/bin/env python3
"""Writes conv-patch.onnx.txt (a ViT patch embedding: Conv with kernel = stride
= 4 on a 2 x 3 x 8 x 8 image), its input and the output computed here by the
convolution's definition (plain loops), for onnx-import.test. Encode the
model with: protoc --encode=onnx.ModelProto -I/usr/include/onnx onnx.proto
< conv-patch.onnx.txt > conv-patch.onnx"""
import json
import math
import struct

B, C, H, W, E, P = 2, 3, 8, 8, 4, 4
x = [math.sin(0.37 * i) for i in range(B * C * H * W)]
w = [math.cos(0.11 * i) / 8 for i in range(E * C * P * P)]
b = [0.1 * e for e in range(E)]


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


x, w, b = [f32(v) for v in x], [f32(v) for v in w], [f32(v) for v in b]
Ho, Wo = H // P, W // P
y = []
for n in range(B):
    for e in range(E):
        for i in range(Ho):
            for j in range(Wo):
                acc = b[e]
                for c in range(C):
                    for p in range(P):
                        for q in range(P):
                            acc += (x[((n * C + c) * H + i * P + p) * W + j * P + q] *
                                    w[((e * C + c) * P + p) * P + q])
                y.append(acc)


def safetensors(path, tensors):
    header, data = {}, b""
    for name, (shape, values) in tensors.items():
        raw = struct.pack(f"<{len(values)}f", *values)
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as out:
        out.write(struct.pack("<Q", len(text)) + text + data)


safetensors("conv-patch-inputs.safetensors", {"x": ([B, C, H, W], x)})
safetensors("conv-patch-expected.safetensors", {"y": ([B, E, Ho, Wo], y)})
floats = lambda vs: ", ".join(repr(v) for v in vs)
with open("conv-patch.onnx.txt", "w") as out:
    out.write(f"""ir_version: 8
producer_name: "fusec-test"
opset_import {{ domain: "" version: 17 }}
graph {{
  name: "patches"
  initializer {{ name: "w" dims: {E} dims: {C} dims: {P} dims: {P} data_type: 1 float_data: [{floats(w)}] }}
  initializer {{ name: "b" dims: {E} data_type: 1 float_data: [{floats(b)}] }}
  node {{ name: "embed" op_type: "Conv" input: "x" input: "w" input: "b" output: "y"
         attribute {{ name: "kernel_shape" type: INTS ints: [{P}, {P}] }}
         attribute {{ name: "strides" type: INTS ints: [{P}, {P}] }} }}
  input {{ name: "x" type {{ tensor_type {{ elem_type: 1 shape {{ dim {{ dim_value: {B} }} dim {{ dim_value: {C} }} dim {{ dim_value: {H} }} dim {{ dim_value: {W} }} }} }} }} }}
  output {{ name: "y" type {{ tensor_type {{ elem_type: 1 }} }} }}
}}
""")
