"""What a graph must cost at least (bytes, flops), and the random inputs fusec would draw.

bytes = every graph input read once + every output written once.
flops = 2*M*N*K per matmul and linear; scaled_dot_product_attention counts its two products
over the (query, key) pairs that take part (the upper triangle of a causal mask is skipped by
any sensible kernel). Elementwise work is left out: on a GPU it is never the floor.

Inputs follow fusec (compiler/pipeline/Compile.cpp: randomInputScales, compiler/support/HostTensor.cpp:
randomTensor): floats uniform on the grid -2 + k*2^(1-p) in [-2, 2), p the significand width,
times 1/sqrt(K) for an input that a matmul (either side) or a linear weight contracts over K,
followed through reshape/transpose/broadcast_to/slice; integers in [-8, 8); bools 0/1.
"""
import math

import torch

from graph_to_torch import DTYPES, VIEW_OPS

DTYPE_BYTES = {"f32": 4, "f16": 2, "bf16": 2, "i32": 4, "i64": 8, "bool": 1}
SIGNIFICAND_BITS = {"f32": 24, "f16": 11, "bf16": 8}


def numel(shape):
    return math.prod(shape)


def tensor_bytes(spec):
    dtype, shape = spec
    return numel(shape) * DTYPE_BYTES[dtype]


def io_bytes(graph, shapes):
    inputs = sum(tensor_bytes(shapes[t["name"]]) for t in graph["inputs"])
    outputs = sum(tensor_bytes(shapes[n]) for n in dict.fromkeys(graph["outputs"]))
    return inputs + outputs


def attention_pairs(L, S, causal):
    """(query, key) pairs a query attends to; causal is top-left aligned (key j <= query i)."""
    if not causal:
        return L * S
    full = min(L, S)
    return full * (full + 1) // 2 + max(0, L - S) * S


def flops(graph, shapes):
    total = 0
    for n in graph["nodes"]:
        ins, op = n.get("inputs", []), n["op"]
        if op == "matmul":
            total += 2 * numel(shapes[n["name"]][1]) * shapes[ins[0]][1][-1]
        elif op == "linear":
            total += 2 * numel(shapes[n["name"]][1]) * shapes[ins[1]][1][-1]
        elif op == "scaled_dot_product_attention":
            q, k, v = (shapes[x][1] for x in ins[:3])
            batch = numel(shapes[n["name"]][1][:-2])
            causal = n.get("attrs", {}).get("causal", False)
            total += 2 * batch * attention_pairs(q[-2], k[-2], causal) * (q[-1] + v[-1])
    return total


def input_scales(graph, shapes):
    """{input name: scale}: 1/sqrt(K) for the smallest contraction K an input feeds."""
    users = {}
    for n in graph["nodes"]:
        for pos, name in enumerate(n.get("inputs", [])):
            users.setdefault(name, []).append((n, pos))
    scales = {}
    for t in graph["inputs"]:
        scale, work = 1.0, [t["name"]]
        while work:
            for node, pos in users.get(work.pop(), []):
                k = 0
                if node["op"] in VIEW_OPS and pos == 0:
                    work.append(node["name"])
                elif node["op"] == "matmul":
                    k = shapes[node["inputs"][0]][1][-1]
                elif node["op"] == "linear" and pos == 1:
                    k = shapes[node["inputs"][1]][1][-1]
                if k > 1:
                    scale = min(scale, 1.0 / math.sqrt(k))
        scales[t["name"]] = scale
    return scales


def random_tensor(dtype, shape, scale, generator, device):
    if dtype == "bool":
        return torch.randint(0, 2, shape, generator=generator, device=device).bool()
    if dtype in ("i32", "i64"):
        return torch.randint(-8, 8, shape, generator=generator, device=device,
                             dtype=DTYPES[dtype])
    p = SIGNIFICAND_BITS[dtype]
    k = torch.randint(0, 2 ** (p + 1), shape, generator=generator, device=device)
    work = torch.float64 if dtype == "f32" else torch.float32  # both exact on the grid
    v = k.to(work) * 2.0 ** (1 - p) - 2.0
    del k
    if scale != 1.0:
        v = v * scale
    return v.to(DTYPES[dtype])


def make_inputs(graph, shapes, seed=0, device="cpu"):
    """{input name: tensor}, each input from its own seeded stream."""
    scales = input_scales(graph, shapes)
    out = {}
    for i, t in enumerate(graph["inputs"]):
        gen = torch.Generator(device=device)
        gen.manual_seed(seed * 1000003 + i + 1)
        out[t["name"]] = random_tensor(t["dtype"], t["shape"], scales[t["name"]], gen, device)
    return out
