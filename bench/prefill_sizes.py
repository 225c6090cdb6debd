#!/usr/bin/env python3
"""Every prompt length from one compile: fusec --max against torch.compile(dynamic=True).

Makes a Llama-3-8B-shaped prefill block whose sequence length is a named dim S (from
bench/graphs/llama_block_prefill.json), then times in one run on one GPU, at each length:

  - PyTorch eager (SDPA picks cuDNN or FlashAttention) and torch.compile(dynamic=True) of the
    block as a PyTorch user writes it: one compile with S dynamic, recompiles counted;
  - fusec bench --max S=BOUND --sweep S=...: one program over every length, a padded compile
    per length class (1, 2, 3, 4, 6, 8, 12, ...), as docs/graph-format.md says;
  - fusec bench --sweep S=... without --max: each length compiled on its own, what padding
    costs against.

Checks first that the PyTorch function computes the graph (against bench/graph_to_torch.py at
one length) and that fusec's padded program matches PyTorch eager at a length that is not a
padded size. Prints a table last; raw outputs go to OUT.

    python3 bench/prefill_sizes.py --sizes 1,128,1000,4096 --bound 4096 --out OUT
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
from torch_worker import rel_err, time_runs  # noqa: E402

HIDDEN, HEADS, KV_HEADS, HEAD_DIM = 4096, 32, 8, 128


def log(msg):
    print("[%s] %s" % (time.strftime("%H:%M:%S"), msg), file=sys.stderr, flush=True)


def dynamic_graph(seq):
    """The fixed-length prefill block with its `seq` tokens renamed S."""
    g = load_graph(os.path.join(HERE, "graphs", "llama_block_prefill.json"))
    g = copy.deepcopy(g)
    g["name"] = "llama_block_prefill_dynamic"
    g["description"] = "llama_block_prefill with its token count a named dim S"
    for t in g["inputs"]:
        if t["name"] == "x":
            t["shape"] = ["S", HIDDEN]
    for n in g["nodes"]:
        shape = (n.get("attrs") or {}).get("shape")
        if shape is None:
            continue
        if shape == [seq, HIDDEN]:
            n["attrs"]["shape"] = ["S", HIDDEN]
        else:
            n["attrs"]["shape"] = ["S" if d == seq else d for d in shape]
    return g


def bound_graph(g, s):
    """`g` with S bound to `s` (for graph_to_torch, which takes fixed shapes)."""
    text = json.dumps(g).replace('"S"', str(s))
    return json.loads(text)


def make_block(repeat_kv):
    """The block as a PyTorch user writes it (S = x.shape[0], symbolic under dynamic=True).
    Grouped-query heads either through SDPA's enable_gqa or, as Llama's reference code does,
    K/V repeated to every query head (which lets SDPA take FlashAttention or cuDNN)."""
    def block(x, w_attn_norm, w_q, w_k, w_v, w_o, w_ffn_norm, w_gate, w_up, w_down):
        s = x.shape[0]
        h = F.rms_norm(x, (HIDDEN,), w_attn_norm, eps=1e-5)
        q = (h @ w_q.t()).view(s, HEADS, HEAD_DIM).transpose(0, 1)
        k = (h @ w_k.t()).view(s, KV_HEADS, HEAD_DIM).transpose(0, 1)
        v = (h @ w_v.t()).view(s, KV_HEADS, HEAD_DIM).transpose(0, 1)
        if repeat_kv:
            r = HEADS // KV_HEADS
            a = F.scaled_dot_product_attention(q.unsqueeze(0), k.repeat_interleave(r, 0).unsqueeze(0),
                                               v.repeat_interleave(r, 0).unsqueeze(0),
                                               is_causal=True)[0]
        else:
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        r1 = x + a.transpose(0, 1).reshape(s, HIDDEN) @ w_o.t()
        h2 = F.rms_norm(r1, (HIDDEN,), w_ffn_norm, eps=1e-5)
        out = r1 + (F.silu(h2 @ w_gate.t()) * (h2 @ w_up.t())) @ w_down.t()
        return out, k, v
    return block


VARIANTS = {"enable_gqa": make_block(False), "repeat_kv": make_block(True)}
block = VARIANTS["enable_gqa"]


def weights(g, device):
    gen = torch.Generator(device=device).manual_seed(0)
    out = {}
    for t in g["inputs"]:
        if t["name"] == "x":
            continue
        shape = t["shape"]
        w = torch.rand(shape, generator=gen, device=device, dtype=torch.float32) * 4 - 2
        if len(shape) == 2:  # a linear's [out, in]: 1/sqrt(in), as trained weights scale
            w = w / shape[1] ** 0.5
        out[t["name"]] = w.to(torch.bfloat16)
    return out


def tokens(s, seed, device):
    gen = torch.Generator(device=device).manual_seed(seed)
    return (torch.rand((s, HIDDEN), generator=gen, device=device) * 4 - 2).to(torch.bfloat16)


def fusec_sweep(a, graph_path, sizes, padded):
    cmd = [a.fusec, "bench", graph_path, "--sweep", "S=" + ",".join(map(str, sizes)), "--json",
           "--iters", str(a.iters)]
    if padded:
        cmd += ["--max", "S=%d" % a.bound]
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
    p.add_argument("--sizes", default="1,128,1000,4096")
    p.add_argument("--bound", type=int, default=4096)
    p.add_argument("--check-size", type=int, default=77, help="a length that is no padded size")
    p.add_argument("--fusec", default=os.path.join(HERE, "..", "build", "bin", "fusec"))
    p.add_argument("--out", default=os.environ.get("OUT") or "prefill-sizes-out")
    p.add_argument("--iters", type=int, default=50)
    a = p.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    os.makedirs(a.out, exist_ok=True)
    g = dynamic_graph(4096)
    graph_path = os.path.join(a.out, "llama_block_prefill_dynamic.json")
    with open(graph_path, "w") as f:
        json.dump(g, f, indent=1)
    dev = "cuda"
    w = weights(g, dev)
    names = [t["name"] for t in g["inputs"]]

    # The PyTorch function is the graph: against graph_to_torch at one length.
    with torch.no_grad():
        s = a.check_size
        x = tokens(s, 1, dev)
        tg = TorchGraph(bound_graph(g, s))
        ref = [o.float() for o in tg(*[x if n == "x" else w[n] for n in names])]
        mine = [o.float() for o in block(x, *[w[n] for n in names[1:]])]
        log("PyTorch block vs graph_to_torch at S=%d: rel err %.1e" % (s, rel_err(mine, ref)))

        # fusec's padded program at that length against PyTorch eager.
        from safetensors.torch import save_file, load_file
        inputs_path = os.path.join(a.out, "inputs_s%d.safetensors" % s)
        save_file(dict({n: w[n].cpu() for n in names[1:]}, x=x.cpu()), inputs_path)
        out_path = os.path.join(a.out, "fusec_s%d.safetensors" % s)
        r = subprocess.run([a.fusec, "run", graph_path, "--max", "S=%d" % a.bound, "--inputs",
                            inputs_path, "-o", out_path], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("fusec run --max failed:\n" + r.stderr[-2000:])
        got = load_file(out_path)
        fusec_err = rel_err([got[n].float().to(dev) for n in g["outputs"]], mine)
        log("fusec --max S=%d at S=%d vs PyTorch eager: rel err %.1e" % (a.bound, s, fusec_err))

    # PyTorch: eager, and one torch.compile with S dynamic, each of the two ways of writing
    # grouped-query attention; the faster one at each length is PyTorch's time.
    rows = {}
    with torch.no_grad():
        ws = [w[n] for n in names[1:]]
        mine_rep = [o.float() for o in VARIANTS["repeat_kv"](x, *ws)]
        log("repeat_kv vs enable_gqa at S=%d: rel err %.1e" % (a.check_size, rel_err(mine_rep, mine)))
        for variant, fn in VARIANTS.items():
            torch._dynamo.reset()
            torch._dynamo.utils.counters.clear()
            compiled = torch.compile(fn, dynamic=True)
            for s in sizes:
                sets = [tokens(s, 100 + k, dev) for k in range(4)]
                eager = time_runs(lambda x: fn(x, *ws), sets, 3, 1.0, 10, a.iters)
                t0 = time.perf_counter()
                compiled(sets[0], *ws)
                torch.cuda.synchronize()
                first_s = time.perf_counter() - t0
                comp = time_runs(lambda x: compiled(x, *ws), sets, 5, 1.0, 10, a.iters,
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
                log("%s S=%d: eager %.1f us, torch.compile(dynamic) %.1f us (first call %.1f s, "
                    "%d graphs so far)" % (variant, s, eager["median_us"], comp["median_us"],
                                           first_s, graphs))
    del w
    torch.cuda.empty_cache()

    padded = fusec_sweep(a, graph_path, sizes, True)
    exact = fusec_sweep(a, graph_path, sizes, False)
    with open(os.path.join(a.out, "torch.json"), "w") as f:
        json.dump(rows, f, indent=1)
    print("Llama-3-8B-shaped prefill block, bf16, %s; fusec --max S=%d: %d padded compiles in all"
          % (torch.cuda.get_device_name(), a.bound, padded[sizes[-1]]["compiles"]))
    print("%6s %10s %11s %11s %11s %9s %11s %10s %11s %8s" % (
        "S", "eager us", "compile us", "(variant)", "fusec --max", "padded to", "compile ms",
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
