#!/usr/bin/env python3
"""A Llama-3-70B-shaped decode step split over GPUs: fusec against PyTorch.

Builds an L-layer stack of a Llama-3-70B-shaped decode block (hidden 8192, 64 heads, 8 kv heads,
head dim 128, FFN 28672, batch 1, a KV cache of --cache tokens; bench/make_graphs.py's block at
those sizes, bench/make_stack.py's stack), splits it the Megatron-LM way (q/k/v, gate, up by
rows; o, down by columns; caches and the new k/v rows by heads) and times, on the same GPUs:

  - fusec: `fusec bench STACK --ranks W --shard ... --graph` (each rank's plan one CUDA graph
    replay, its all-reduces one-shot over peer memory or NCCL as the planner picks), and the
    same with FUSEC_PEER_COLLECTIVES=0 (every all-reduce through NCCL);
  - PyTorch: bench/tp_torch.py (torch.distributed over NCCL, eager and torch.compile with CUDA
    graphs), where --torch is given.

Prints a table: step time, time a layer, and the floor a layer (that rank's weight bytes at
the copy bandwidth). Needs W GPUs.

    python3 bench/tp_decode.py --ranks 2 --layers 8 --torch --out OUT
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_graphs  # noqa: E402
from make_stack import stack  # noqa: E402

SPLIT = ("*w_q=0,*w_k=0,*w_v=0,*w_o=1,*w_gate=0,*w_up=0,*w_down=1,"
         "*cache_k=1,*cache_v=1,*k_new=1,*v_new=1")


def log(msg):
    print("[%s] %s" % (time.strftime("%H:%M:%S"), msg), file=sys.stderr, flush=True)


def layer_70b(cache):
    """make_graphs' decode block at Llama-3-70B's sizes."""
    g = make_graphs
    saved = (g.HIDDEN, g.HEADS, g.KV_HEADS, g.HEAD_DIM, g.FFN)
    g.HIDDEN, g.HEADS, g.KV_HEADS, g.HEAD_DIM, g.FFN = 8192, 64, 8, 128, 28672
    try:
        layer = g.llama_decode(1, cache)
    finally:
        g.HIDDEN, g.HEADS, g.KV_HEADS, g.HEAD_DIM, g.FFN = saved
    layer["name"] = "llama70b_block_decode_b1"
    layer["description"] = ("Llama-3-70B-shaped decoder block at decode (hidden 8192, 64 heads, "
                            "8 kv heads, head dim 128, FFN 28672), batch 1, KV cache of %d "
                            "tokens; no RoPE" % cache)
    return layer


def weight_bytes(layer, ranks):
    """Bytes of one layer's weights each rank holds (every w_* split but the norms)."""
    total = 0
    for t in layer["inputs"]:
        if not t["name"].startswith("w_"):
            continue
        n = 2
        for d in t["shape"]:
            n *= d
        total += n if t["name"].endswith("norm") else n // ranks
    return total


def fusec_bench(a, path, env_extra):
    cmd = [a.fusec, "bench", path, "--ranks", str(a.ranks), "--shard", SPLIT, "--graph",
           "--no-steps", "--json", "--iters", str(a.iters)]
    env = dict(os.environ, NCCL_NVLS_ENABLE="0", **env_extra)
    log("running: %s %s" % (" ".join("%s=%s" % kv for kv in env_extra.items()), " ".join(cmd)))
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        log("fusec bench failed:\n" + r.stderr[-3000:])
        return None
    return json.loads(r.stdout)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--cache", type=int, default=4096)
    p.add_argument("--iters", type=int, default=100)
    p.add_argument("--torch", action="store_true", help="also run bench/tp_torch.py")
    p.add_argument("--fusec", default=os.path.join(HERE, "..", "build", "bin", "fusec"))
    p.add_argument("--work", default="/tmp/fusec-tp-decode")
    p.add_argument("--out", default=os.environ.get("OUT") or "tp-decode-out")
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    os.makedirs(a.out, exist_ok=True)
    layer = layer_70b(a.cache)
    graph = stack(layer, a.layers, params=True)
    graph["name"] = "llama70b_decode_%dlayers" % a.layers
    path = os.path.join(a.work, "stack.json")
    with open(path, "w") as f:
        json.dump(graph, f)
    floor_bytes = weight_bytes(layer, a.ranks)

    rows = []
    for label, extra in (("fusec, one-shot all-reduce", {}),
                         ("fusec, NCCL all-reduce", {"FUSEC_PEER_COLLECTIVES": "0"})):
        j = fusec_bench(a, path, extra)
        if j is None:
            rows.append((label, None))
            continue
        rows.append((label, j["slowest_rank_us"]))
        with open(os.path.join(a.out, "fusec_%s.json" % ("nccl" if extra else "oneshot")),
                  "w") as f:
            json.dump(j, f, indent=1)
    torch_rows = []
    if a.torch:
        cmd = [sys.executable, os.path.join(HERE, "tp_torch.py"), "--ranks", str(a.ranks),
               "--layers", str(a.layers), "--cache", str(a.cache), "--iters", str(a.iters),
               "--out", a.out]
        log("running: " + " ".join(cmd))
        r = subprocess.run(cmd, env=dict(os.environ, NCCL_NVLS_ENABLE="0"))
        try:
            with open(os.path.join(a.out, "tp_torch.json")) as f:
                tj = json.load(f)
            for mode, m in tj.get("modes", {}).items():
                torch_rows.append(("torch " + mode, m.get("max_over_ranks_us")))
        except (OSError, ValueError) as e:
            log("no torch results (%s, exit %d)" % (e, r.returncode))
    bw = None
    try:
        with open(os.path.join(a.out, "fusec_oneshot.json")) as f:
            bw = json.load(f)["copy_bw_bytes_per_s"]
    except (OSError, ValueError, KeyError):
        pass
    floor_us = floor_bytes / bw * 1e6 if bw else None
    print("Llama-3-70B-shaped decode, %d layers, cache %d, over %d GPUs; a rank's weights a "
          "layer: %.3f GB%s" % (a.layers, a.cache, a.ranks, floor_bytes / 1e9,
                                "; floor a layer %.1f us at %.0f GB/s" % (floor_us, bw / 1e9)
                                if floor_us else ""))
    print("%-34s %12s %12s %14s" % ("system", "step (us)", "layer (us)", "x floor a layer"))
    best_torch = min((t for _, t in torch_rows if t), default=None)
    for label, us in rows + torch_rows:
        if not us:
            print("%-34s %12s" % (label, "failed"))
            continue
        per = us / a.layers
        print("%-34s %12.1f %12.1f %14s" % (label, us, per,
                                           "%.2fx" % (per / floor_us) if floor_us else "-"))
    if best_torch and rows[0][1]:
        print("fusec (one-shot) against the best PyTorch: %.2fx" % (best_torch / rows[0][1]))


if __name__ == "__main__":
    main()
