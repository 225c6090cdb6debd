#!/usr/bin/env python3
"""Every length from one program: fusec --max against torch.compile(dynamic=True).

Makes a Llama-3-8B-shaped block whose length is a named dim: `--case prefill` (S tokens, from
bench/graphs/llama_block_prefill.json) or `--case decode` (one token against a cache of T rows
joined with its own, from bench/graphs/llama_block_decode_b1.json). Then times in one run on
one GPU, at each length:

  - PyTorch eager and torch.compile(dynamic=True) of the block as a PyTorch user writes it (one
    compile, the length dynamic; recompiles counted), in each of the two ways of writing
    grouped-query heads (SDPA's enable_gqa, or K/V repeated to every query head);
  - fusec bench --max DIM=BOUND --sweep DIM=...: one program over every length, a padded
    compile per length class (1, 2, 3, 4, 6, 8, 12, ...), as docs/graph-format.md says;
  - fusec bench --sweep DIM=... without --max: each length compiled on its own, what padding
    costs against.

With `--layers N` (prefill) the block is stacked N times, a whole model's prefill, every layer
reading one set of weights (tied: 0.44 GB of random inputs instead of 14 GB, which fusec bench
would draw on the host at every length; each layer still streams its 0.44 GB, 9 times L2, so
the bytes each layer moves are a model's).

Checks first that the PyTorch function computes the graph (against bench/graph_to_torch.py at
one length) and that fusec's padded program matches PyTorch eager at a length that is not a
padded size. Prints a table last; raw outputs go to OUT.

    python3 bench/size_sweep.py --case prefill --sizes 1,128,1000,4096 --bound 4096 --out OUT
    python3 bench/size_sweep.py --case decode --sizes 1,1000,4095 --bound 8192 --out OUT
    python3 bench/size_sweep.py --case prefill --layers 32 --sizes 1,128,1000,4096 --out OUT
"""
import argparse
import copy
import json
import os
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from graph_to_torch import TorchGraph, load_graph  # noqa: E402
from make_stack import stack  # noqa: E402
from torch_worker import rel_err, time_runs  # noqa: E402

HIDDEN, HEADS, KV_HEADS, HEAD_DIM = 4096, 32, 8, 128
CACHE = 4096  # the decode graph's fixed cache length, renamed T


def log(msg):
    print("[%s] %s" % (time.strftime("%H:%M:%S"), msg), file=sys.stderr, flush=True)


def prefill_graph():
    """The fixed-length prefill block with its 4096 tokens renamed S."""
    g = copy.deepcopy(load_graph(os.path.join(HERE, "graphs", "llama_block_prefill.json")))
    g["name"] = "llama_block_prefill_dynamic"
    g["description"] = "llama_block_prefill with its token count a named dim S"
    for t in g["inputs"]:
        if t["name"] == "x":
            t["shape"] = ["S", HIDDEN]
    for n in g["nodes"]:
        shape = (n.get("attrs") or {}).get("shape")
        if shape is None:
            continue
        if shape == [4096, HIDDEN]:
            n["attrs"]["shape"] = ["S", HIDDEN]
        else:
            n["attrs"]["shape"] = ["S" if d == 4096 else d for d in shape]
    return g


def decode_graph():
    """The decode block with its cache length renamed T (the joined cache's T + 1 rows
    written -1: the input's own dim)."""
    g = copy.deepcopy(load_graph(os.path.join(HERE, "graphs", "llama_block_decode_b1.json")))
    g["name"] = "llama_block_decode_dynamic"
    g["description"] = "llama_block_decode_b1 with its cache length a named dim T"
    for t in g["inputs"]:
        if t["name"] in ("cache_k", "cache_v"):
            t["shape"] = [1, KV_HEADS, "T", HEAD_DIM]
    for n in g["nodes"]:
        shape = (n.get("attrs") or {}).get("shape")
        if shape is not None and CACHE + 1 in shape:
            n["attrs"]["shape"] = [-1 if d == CACHE + 1 else d for d in shape]
    return g


def bound_graph(g, dim, size):
    """`g` with `dim` bound to `size` (for graph_to_torch, which takes fixed shapes)."""
    return json.loads(json.dumps(g).replace('"%s"' % dim, str(size)))


def attention(q, k, v, repeat_kv, causal):
    if repeat_kv:
        r = HEADS // KV_HEADS
        return F.scaled_dot_product_attention(q, k.repeat_interleave(r, -3),
                                              v.repeat_interleave(r, -3), is_causal=causal)
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)


def ffn(x, a, w_o, w_ffn_norm, w_gate, w_up, w_down):
    r1 = x + a @ w_o.t()
    h2 = F.rms_norm(r1, (HIDDEN,), w_ffn_norm, eps=1e-5)
    return r1 + (F.silu(h2 @ w_gate.t()) * (h2 @ w_up.t())) @ w_down.t()


def make_prefill(repeat_kv):
    """The prefill block as a PyTorch user writes it (S = x.shape[0], symbolic under
    dynamic=True). Grouped-query heads through SDPA's enable_gqa or, as Llama's reference code
    does, K/V repeated to every query head (which lets SDPA take FlashAttention or cuDNN)."""
    def block(x, w_attn_norm, w_q, w_k, w_v, w_o, w_ffn_norm, w_gate, w_up, w_down):
        s = x.shape[0]
        h = F.rms_norm(x, (HIDDEN,), w_attn_norm, eps=1e-5)
        q = (h @ w_q.t()).view(s, HEADS, HEAD_DIM).transpose(0, 1)
        k = (h @ w_k.t()).view(s, KV_HEADS, HEAD_DIM).transpose(0, 1)
        v = (h @ w_v.t()).view(s, KV_HEADS, HEAD_DIM).transpose(0, 1)
        # 4-D, [batch, heads, S, dim]: what SDPA's fused kernels take.
        a = attention(q.unsqueeze(0), k.unsqueeze(0), v.unsqueeze(0), repeat_kv, causal=True)[0]
        return ffn(x, a.transpose(0, 1).reshape(s, HIDDEN), w_o, w_ffn_norm, w_gate, w_up,
                   w_down), k, v
    return block


def make_decode(repeat_kv):
    """The decode block: this step's K/V row joined to the cache (T = cache_k.shape[2])."""
    def block(x, w_attn_norm, w_q, w_k, w_v, w_o, w_ffn_norm, w_gate, w_up, w_down, cache_k,
              cache_v):
        h = F.rms_norm(x, (HIDDEN,), w_attn_norm, eps=1e-5)
        q = (h @ w_q.t()).view(1, HEADS, 1, HEAD_DIM)
        k = (h @ w_k.t()).view(1, KV_HEADS, 1, HEAD_DIM)
        v = (h @ w_v.t()).view(1, KV_HEADS, 1, HEAD_DIM)
        a = attention(q, torch.cat([cache_k, k], 2), torch.cat([cache_v, v], 2), repeat_kv,
                      causal=False)
        return ffn(x, a.reshape(1, HIDDEN), w_o, w_ffn_norm, w_gate, w_up, w_down), k, v
    return block


def layered(block, layers):
    """`block` applied `layers` times with the same weights, as bench/make_stack.py's tied
    stack computes it: each layer's K and V, then the last hidden state."""
    if layers == 1:
        return block

    def model(x, *ws):
        outs = []
        for _ in range(layers):
            x, k, v = block(x, *ws)
            outs += [k, v]
        return outs + [x]
    return model


CASES = {
    "prefill": {"dim": "S", "graph": prefill_graph, "make": make_prefill, "graph_flag": []},
    # Decode runs as a CUDA graph on both sides' best: fusec replays one.
    "decode": {"dim": "T", "graph": decode_graph, "make": make_decode, "graph_flag": ["--graph"]},
}


def weights(g, device):
    """Every graph input that keeps its shape (the weights), drawn once."""
    gen = torch.Generator(device=device).manual_seed(0)
    out = {}
    for t in g["inputs"]:
        shape = t["shape"]
        if any(isinstance(d, str) for d in shape) or t["name"] == "x":
            continue
        w = torch.rand(shape, generator=gen, device=device, dtype=torch.float32) * 4 - 2
        if len(shape) == 2:  # a linear's [out, in]: 1/sqrt(in), as trained weights scale
            w = w / shape[1] ** 0.5
        out[t["name"]] = w.to(torch.bfloat16)
    return out


def per_call(g, dim, size, seed, device):
    """The inputs that change with the length (x, and the caches), at `size`."""
    gen = torch.Generator(device=device).manual_seed(seed)
    out = {}
    for t in g["inputs"]:
        shape = t["shape"]
        if not (any(isinstance(d, str) for d in shape) or t["name"] == "x"):
            continue
        shape = [size if d == dim else d for d in shape]
        out[t["name"]] = (torch.rand(shape, generator=gen, device=device) * 4 - 2).to(torch.bfloat16)
    return out


def fusec_sweep(a, case, graph_path, sizes, padded):
    dim = case["dim"]
    cmd = [a.fusec, "bench", graph_path, "--sweep", dim + "=" + ",".join(map(str, sizes)),
           "--json", "--iters", str(a.iters)] + case["graph_flag"]
    if padded:
        cmd += ["--max", "%s=%d" % (dim, a.bound)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    tag = "padded" if padded else "exact"
    with open(os.path.join(a.out, "fusec_%s.json" % tag), "w") as f:
        f.write(r.stdout)
    with open(os.path.join(a.out, "fusec_%s.err" % tag), "w") as f:
        f.write(r.stderr)
    if r.returncode != 0:
        sys.exit("fusec bench (%s) failed:\n%s" % (tag, r.stderr[-2000:]))
    return {row["size"]: row for row in json.loads(r.stdout)["sizes"]}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--case", choices=sorted(CASES), default="prefill")
    p.add_argument("--sizes", default="1,128,1000,4096")
    p.add_argument("--bound", type=int, default=4096)
    p.add_argument("--check-size", type=int, default=77, help="a length that is no padded size")
    p.add_argument("--fusec", default=os.path.join(HERE, "..", "build", "bin", "fusec"))
    p.add_argument("--out", default=os.environ.get("OUT") or "size-sweep-out")
    p.add_argument("--iters", type=int, default=50)
    p.add_argument("--layers", type=int, default=1,
                   help="prefill: the block stacked this many times, the weights tied")
    a = p.parse_args()
    case = CASES[a.case]
    dim = case["dim"]
    sizes = [int(s) for s in a.sizes.split(",")]
    os.makedirs(a.out, exist_ok=True)
    g = case["graph"]()
    if a.layers > 1:
        if a.case != "prefill":
            sys.exit("--layers stacks the prefill block only")
        g = stack(g, a.layers, shared=True)
        g["name"] = "llama_prefill_%d_layers_dynamic" % a.layers
    graph_path = os.path.join(a.out, g["name"] + ".json")
    with open(graph_path, "w") as f:
        json.dump(g, f, indent=1)
    dev = "cuda"
    w = weights(g, dev)
    names = [t["name"] for t in g["inputs"]]
    variants = {"enable_gqa": layered(case["make"](False), a.layers),
                "repeat_kv": layered(case["make"](True), a.layers)}

    def args_of(call):
        return [call[n] if n in call else w[n] for n in names]

    with torch.no_grad():
        # The PyTorch function is the graph: against graph_to_torch at one length.
        s = a.check_size
        call = per_call(g, dim, s, 1, dev)
        ref = [o.float() for o in TorchGraph(bound_graph(g, dim, s))(*args_of(call))]
        mine = [o.float() for o in variants["enable_gqa"](*args_of(call))]
        mine_rep = [o.float() for o in variants["repeat_kv"](*args_of(call))]
        log("PyTorch block vs graph_to_torch at %s=%d: rel err %.1e (K/V repeated: %.1e)"
            % (dim, s, rel_err(mine, ref), rel_err(mine_rep, ref)))
        # fusec's padded program at that length against PyTorch eager.
        from safetensors.torch import save_file, load_file
        inputs_path = os.path.join(a.out, "inputs_%d.safetensors" % s)
        save_file({n: t.cpu() for n, t in zip(names, args_of(call))}, inputs_path)
        out_path = os.path.join(a.out, "fusec_%d.safetensors" % s)
        r = subprocess.run([a.fusec, "run", graph_path, "--max", "%s=%d" % (dim, a.bound),
                            "--inputs", inputs_path, "-o", out_path], capture_output=True,
                           text=True)
        os.remove(inputs_path)
        if r.returncode != 0:
            sys.exit("fusec run --max failed:\n" + r.stderr[-2000:])
        got = load_file(out_path)
        fusec_err = rel_err([got[n].float().to(dev) for n in g["outputs"]], mine)
        log("fusec --max %s=%d at %s=%d vs PyTorch eager: rel err %.1e"
            % (dim, a.bound, dim, s, fusec_err))

        # PyTorch: eager, and one torch.compile with the length dynamic, each way of writing
        # grouped-query attention; the faster one at each length is PyTorch's time.
        rows = {}
        for variant, fn in variants.items():
            torch._dynamo.reset()
            torch._dynamo.utils.counters.clear()
            compiled = torch.compile(fn, dynamic=True)
            for s in sizes:
                sets = [args_of(per_call(g, dim, s, 100 + k, dev)) for k in range(4)]
                eager = time_runs(lambda xs: fn(*xs), sets, 3, 1.0, 10, a.iters)
                t0 = time.perf_counter()
                compiled(*sets[0])
                torch.cuda.synchronize()
                first_s = time.perf_counter() - t0
                comp = time_runs(lambda xs: compiled(*xs), sets, 5, 1.0, 10, a.iters,
                                 warmup_s=1.0)
                graphs = int(torch._dynamo.utils.counters["stats"]["unique_graphs"])
                row = rows.setdefault(s, {})
                row[variant] = {"eager_us": eager["median_us"], "compile_us": comp["median_us"],
                                "first_call_s": first_s, "graphs": graphs}
                for k in ("eager_us", "compile_us"):
                    if k not in row or row[variant][k] < row[k]:
                        row[k] = row[variant][k]
                        row[k.split("_")[0] + "_variant"] = variant
                row["torch_graphs"] = max(row.get("torch_graphs", 0), graphs)
                log("%s %s=%d: eager %.1f us, torch.compile(dynamic) %.1f us (first call %.1f s, "
                    "%d graphs so far)" % (variant, dim, s, eager["median_us"], comp["median_us"],
                                           first_s, graphs))
    del w
    torch.cuda.empty_cache()

    padded = fusec_sweep(a, case, graph_path, sizes, True)
    exact = fusec_sweep(a, case, graph_path, sizes, False)
    with open(os.path.join(a.out, "torch.json"), "w") as f:
        json.dump(rows, f, indent=1)
    print("Llama-3-8B-shaped %s %s, bf16, %s; fusec --max %s=%d: %d padded compiles in all%s"
          % (a.case, "block" if a.layers == 1 else "model of %d layers (weights tied)" % a.layers,
             torch.cuda.get_device_name(), dim, a.bound, padded[sizes[-1]]["compiles"],
             " (fusec: CUDA graph replays)" if case["graph_flag"] else ""))
    print("%6s %10s %11s %11s %11s %9s %11s %10s %11s %8s" % (
        dim, "eager us", "compile us", "(variant)", "fusec --max", "padded to", "compile ms",
        "fusec us", "vs compile", "padding"))
    for s in sizes:
        t, f, e = rows[s], padded[s], exact[s]
        print("%6d %10.1f %11.1f %11s %11.1f %9d %11.0f %10.1f %10.2fx %7.2fx" % (
            s, t["eager_us"], t["compile_us"], t["compile_variant"], f["median_us"],
            f["compiled_at"], f["compile_ms"], e["median_us"], t["compile_us"] / f["median_us"],
            f["median_us"] / e["median_us"]))
    print("(fusec us: the length compiled on its own; vs compile: torch.compile(dynamic=True) "
          "time / fusec --max time; padding: fusec --max / fusec at the exact length. "
          "torch.compile made at most %d graph(s) over all lengths.)" % rows[sizes[-1]]["torch_graphs"])


if __name__ == "__main__":
    main()
