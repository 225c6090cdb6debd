#!/usr/bin/env python3
"""PyTorch's tensor-parallel baseline: a Llama-3-70B-shaped decode step over W GPUs.

The block is bench/make_graphs.py's llama_decode at 70B sizes (hidden 8192, 64 heads, 8 kv
heads, head dim 128, FFN 28672, bf16, no RoPE; the new k/v row is concatenated to read-only
caches), --layers of them stacked, each with its own random weights and caches. Megatron
sharding over W ranks: w_q, w_k, w_v, w_gate, w_up column-parallel (HEADS/W query heads and
KV_HEADS/W kv heads, with their cache slices, per rank), w_o and w_down row-parallel, each
followed by an all-reduce (sum) of the partial output; norms replicated. Two all-reduces per
layer. Per rank, timed with CUDA events, median of --iters after >= 20 runs and >= 0.5 s:

  eager     plain torch ops, dist.all_reduce
  compiled  torch.compile(mode="reduce-overhead"), functional all-reduces, so the step with
            its collectives is one CUDA graph (inputs, weights and caches at fixed addresses)
  all-reduce of [1, 4096] and [1, 8192] bf16 (8 / 16 KB): eager per call (back to back), and
            100 of them captured in one torch.cuda.CUDAGraph (replay time / 100)

Floor per layer = one rank's weight bytes per layer / its copy bandwidth (a 1 GiB device copy,
bytes read + written, as bench/NOTES.md measures it); the caches (8 MB a layer per rank at W=2)
are left out of it. Checks: eager vs compiled output, and every
rank's output identical; --ref also runs the unsharded block (gathered weights, GQA by literal
repeat as make_graphs.gqa_repeat) on rank 0 against the TP result.

    python3 bench/tp_torch.py --ranks 2 --layers 8 --cache 4096 --iters 100 --out OUT
    python3 bench/tp_torch.py --dry-run      # tiny dims, CPU processes over gloo, with --ref
"""
import argparse
import json
import math
import os
import socket
import statistics
import sys
import time
import traceback

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
import torch.multiprocessing as mp
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from torch_worker import rel_err, short_error, time_runs  # noqa: E402

FULL = dict(hidden=8192, heads=64, kv_heads=8, head_dim=128, ffn=28672)  # Llama-3-70B
TINY = dict(hidden=256, heads=16, kv_heads=4, head_dim=16, ffn=512)  # --dry-run: GQA x4 too
NAMES = ("attn_norm", "q", "k", "v", "o", "ffn_norm", "gate", "up", "down", "cache_k", "cache_v")
# The dim each sharded tensor is split on: weights are [out, in], so 0 is column-parallel
# (outputs split) and 1 row-parallel (inputs split); caches [b, kv_heads, seq, dim] by kv head.
SPLIT = dict(q=0, k=0, v=0, gate=0, up=0, o=1, down=1, cache_k=1, cache_v=1)


def log(rank, msg):
    if rank == 0:
        print("[%s r%d] %s" % (time.strftime("%H:%M:%S"), rank, msg), file=sys.stderr, flush=True)


def nbytes(t):
    return t.numel() * t.element_size()


def sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def block(x, p, head_dim, allreduce, literal_gqa=False):
    """One decoder block on this rank's shards (or, with identity allreduce, unsharded)."""
    b = x.shape[0]
    h = F.rms_norm(x, (x.shape[-1],), p["attn_norm"], 1e-5)
    q = F.linear(h, p["q"]).view(b, -1, 1, head_dim)
    k = torch.cat([p["cache_k"], F.linear(h, p["k"]).view(b, -1, 1, head_dim)], dim=2)
    v = torch.cat([p["cache_v"], F.linear(h, p["v"]).view(b, -1, 1, head_dim)], dim=2)
    if literal_gqa:  # make_graphs.gqa_repeat: each kv head serves `rep` consecutive q heads
        rep, (_, kv, s, e) = q.shape[1] // k.shape[1], k.shape
        k, v = (t.reshape(b, kv, 1, s, e).broadcast_to(b, kv, rep, s, e).reshape(b, -1, s, e)
                for t in (k, v))
        a = F.scaled_dot_product_attention(q, k, v)
    else:  # the same grouping, as a PyTorch user writes it (bench/graph_to_torch.py does too)
        a = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    r1 = x + allreduce(F.linear(a.reshape(b, -1), p["o"]))
    h2 = F.rms_norm(r1, (r1.shape[-1],), p["ffn_norm"], 1e-5)
    f = F.silu(F.linear(h2, p["gate"])) * F.linear(h2, p["up"])
    return r1 + allreduce(F.linear(f, p["down"]))


def decode_step(x, flat, head_dim, allreduce):
    """flat: NAMES' tensors of layer 0, then of layer 1, ...; layer i's output is i+1's x."""
    n = len(NAMES)
    for i in range(0, len(flat), n):
        x = block(x, dict(zip(NAMES, flat[i:i + n])), head_dim, allreduce)
    return x


def build(d, world, rank, batch, cache, layers, dev, seed):
    """This rank's shards, drawn on the device. The shards come from a per-rank generator
    (no need to match any other system's values); x and the replicated norms from a generator
    seeded alike on every rank, so that every rank holds the same ones."""
    g = torch.Generator(device=dev)
    g.manual_seed(seed + 1000 * (rank + 1))
    gs = torch.Generator(device=dev)
    gs.manual_seed(seed)
    H, KV, D, Hd, Ff = d["heads"], d["kv_heads"], d["head_dim"], d["hidden"], d["ffn"]

    def randn(shape, gen, scale=1.0):
        return torch.randn(shape, generator=gen, device=dev, dtype=torch.bfloat16).mul_(scale)
    out = []
    for _ in range(layers):
        p = {}
        for n, rows, cols in (("q", H * D, Hd), ("k", KV * D, Hd), ("v", KV * D, Hd),
                              ("o", Hd, H * D), ("gate", Ff, Hd), ("up", Ff, Hd),
                              ("down", Hd, Ff)):
            shape = [rows // world, cols] if SPLIT[n] == 0 else [rows, cols // world]
            p[n] = randn(shape, g, cols ** -0.5)  # N(0, 1/fan_in): activations stay O(1)
        for n in ("attn_norm", "ffn_norm"):
            p[n] = (1 + 0.1 * torch.randn(Hd, generator=gs, device=dev)).to(torch.bfloat16)
        for n in ("cache_k", "cache_v"):
            p[n] = randn([batch, KV // world, cache, D], g)
        out.append(p)
    return randn([batch, Hd], gs), out


def copy_bandwidth(dev):
    """Bytes read + written per second by a 1 GiB device-to-device copy (torch_worker's way)."""
    n = (1 << 30) if dev.type == "cuda" else (1 << 24)
    src = torch.randint(0, 255, (n,), dtype=torch.uint8, device=dev)
    dst = torch.empty_like(src)
    t = time_runs(lambda _: dst.copy_(src), [None], 3, 0.2, 10, 50, dev.type)
    return 2 * n / (t["median_us"] * 1e-6)


def agree_max(value, ctl):
    t = torch.tensor([float(value)], dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX, group=ctl)
    return t.item()


def time_steps(call, dev, ctl, iters, warm_s=0.5, min_warm=20):
    """Median us of `iters` back-to-back calls, each between two CUDA events, after >= min_warm
    calls and >= warm_s seconds. Unlike torch_worker.time_runs every count is the same on all
    ranks (the slowest rank's estimate decides): each call issues collectives, and ranks that
    made different numbers of calls would hang."""
    for _ in range(3):
        call()
    sync(dev)
    t0 = time.perf_counter()
    for _ in range(3):
        call()
    sync(dev)
    est = agree_max((time.perf_counter() - t0) / 3, ctl)
    for _ in range(max(min_warm, math.ceil(warm_s / max(est, 1e-6)))):
        call()
    sync(dev)
    if dev.type == "cuda":
        ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(iters)]
        for start, stop in ev:
            start.record()
            call()
            stop.record()
        sync(dev)
        us = [1e3 * s.elapsed_time(e) for s, e in ev]
    else:  # --dry-run: host clock, only to test the script
        us = []
        for _ in range(iters):
            t0 = time.perf_counter()
            call()
            us.append(1e6 * (time.perf_counter() - t0))
    return statistics.median(us)


def bench_allreduce(numel, dev, group, calls=200, reps=5, captured=100):
    """us per all-reduce of a [1, numel] bf16 tensor: eager, calls back to back (the host's
    launch cost shows if it is the larger), and replayed from one CUDA graph of `captured`."""
    buf = torch.zeros(1, numel, dtype=torch.bfloat16, device=dev)  # zeros: sums stay finite
    for _ in range(20):  # the communicator is set up by now; capture could not do that
        dist.all_reduce(buf, group=group)
    sync(dev)

    def burst(fn, n):
        if dev.type != "cuda":
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            return 1e6 * (time.perf_counter() - t0) / n
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(n):
            fn()
        stop.record()
        sync(dev)
        return 1e3 * start.elapsed_time(stop) / n
    res = {"bytes": 2 * numel,
           "eager_us": statistics.median(
               burst(lambda: dist.all_reduce(buf, group=group), calls) for _ in range(reps)),
           "graph_us": None}
    if dev.type == "cuda":
        g = torch.cuda.CUDAGraph()
        # thread_local, as torch.compile's CUDA graph trees capture: NCCL's watchdog thread
        # makes CUDA calls that a global-mode capture would reject.
        with torch.cuda.graph(g, capture_error_mode="thread_local"):
            for _ in range(captured):
                dist.all_reduce(buf, group=group)
        for _ in range(3):
            g.replay()
        sync(dev)
        res["graph_us"] = statistics.median(burst(g.replay, 1) for _ in range(20)) / captured
    return res


def reference(x, layers, d, group, world, rank):
    """The unsharded block as make_graphs.llama_decode writes it (GQA by literal repeat), from
    every rank's shards gathered a layer at a time; the result on rank 0."""
    for p in layers:
        full = dict(p)
        for n, dim in SPLIT.items():
            parts = [torch.empty_like(p[n]) for _ in range(world)]
            dist.all_gather(parts, p[n], group=group)
            full[n] = torch.cat(parts, dim)
        if rank == 0:
            x = block(x, full, d["head_dim"], lambda t: t, literal_gqa=True)
        del full, parts
    return x


def rank_spread(t, ctl, world):
    """Largest |difference| between any rank's output and rank 0's."""
    t = t.detach().float().cpu()
    parts = [torch.empty_like(t) for _ in range(world)]
    dist.all_gather(parts, t, group=ctl)
    return max((q - parts[0]).abs().max().item() for q in parts)


def worker(rank, a, d):
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    cuda = not a.dry_run
    if cuda:
        torch.cuda.set_device(rank)
        dev = torch.device("cuda", rank)
        # No device_id: the communicator comes up lazily at the first eager all-reduce, well
        # before any CUDA graph capture (which could not create it).
        dist.init_process_group("nccl", rank=rank, world_size=a.ranks)
    else:
        torch.set_num_threads(1)
        dev = torch.device("cpu")
        dist.init_process_group("gloo", rank=rank, world_size=a.ranks)
    group = dist.group.WORLD
    # Flags and results go over gloo on the host: they still travel if a rank's CUDA failed.
    ctl = dist.new_group(backend="gloo")
    res = {"rank": rank}
    with torch.no_grad():
        res["copy_bw"] = copy_bandwidth(dev)
        t0 = time.perf_counter()
        x, layers = build(d, a.ranks, rank, a.batch, a.cache, a.layers, dev, a.seed)
        sync(dev)
        flat = [p[n] for p in layers for n in NAMES]
        res["weight_bytes_per_layer"] = sum(nbytes(layers[0][n]) for n in NAMES[:-2])
        res["cache_bytes_per_layer"] = nbytes(layers[0]["cache_k"]) * 2
        log(rank, "built %d layers of shards: %.3f GB of weights + %.1f MB of caches per layer "
            "per rank in %.1f s; copy bandwidth %.0f GB/s" %
            (a.layers, res["weight_bytes_per_layer"] / 1e9, res["cache_bytes_per_layer"] / 1e6,
             time.perf_counter() - t0, res["copy_bw"] / 1e9))

        def ar_eager(t):
            dist.all_reduce(t, group=group)
            return t
        out_e = decode_step(x, flat, d["head_dim"], ar_eager).clone()
        sync(dev)
        res["eager"] = {"median_us": time_steps(
            lambda: decode_step(x, flat, d["head_dim"], ar_eager), dev, ctl, a.iters)}
        res["eager"]["rank_max_abs_diff"] = rank_spread(out_e, ctl, a.ranks)
        log(rank, "eager: %.1f us per step" % res["eager"]["median_us"])
        if a.ref:
            out_r = reference(x, layers, d, group, a.ranks, rank)
            if rank == 0:
                res["eager"]["rel_err_vs_unsharded"] = rel_err([out_e], [out_r])
                log(rank, "TP eager vs the unsharded block: rel err %.2e" %
                    res["eager"]["rel_err_vs_unsharded"])
            del out_r

        res["allreduce"] = {}
        for numel in (4096, 8192):
            r = bench_allreduce(numel, dev, group)
            res["allreduce"][str(numel)] = r
            log(rank, "all-reduce [1, %d] bf16: eager %.1f us, CUDA graph %s us" % (
                numel, r["eager_us"], "-" if r["graph_us"] is None else "%.1f" % r["graph_us"]))

        res["compiled"] = {"error": None}
        if a.no_compile:
            res["compiled"]["error"] = "skipped (--no-compile)"
        else:
            try:
                # Weights and caches live at fixed addresses as a server's would, so the
                # CUDA graph reads them in place (not copied into its own buffers each step).
                for t in [x] + flat:
                    torch._dynamo.mark_static_address(t)
                fn = torch.compile(
                    lambda x_, *ws: decode_step(
                        x_, ws, d["head_dim"], lambda t: funcol.all_reduce(t, "sum", group)),
                    mode="reduce-overhead" if cuda else None, dynamic=False)

                def call_c():
                    torch.compiler.cudagraph_mark_step_begin()  # last step's output is dead
                    return fn(x, *flat)
                log(rank, "torch.compile: compiling (minutes)...")
                t0 = time.perf_counter()
                for _ in range(3):  # compile + warm-up run, CUDA graph recording, a replay
                    out_c = call_c()
                out_c = out_c.clone()
                sync(dev)
                res["compiled"]["compile_s"] = time.perf_counter() - t0
            except Exception as e:  # noqa: BLE001 - reported; the other ranks are told below
                traceback.print_exc()
                res["compiled"]["error"] = "rank %d: %s" % (rank, short_error(e))
        # Every rank learns whether any failed before issuing another collective on `group`.
        errors = [None] * a.ranks
        dist.all_gather_object(errors, res["compiled"]["error"], group=ctl)
        failed = [e for e in errors if e]
        if failed:
            res["compiled"]["error"] = failed[0]
            log(rank, "torch.compile: %s" % failed[0])
        else:
            log(rank, "torch.compile: first 3 calls %.1f s" % res["compiled"]["compile_s"])
            res["compiled"]["rel_err_vs_eager"] = rel_err([out_c], [out_e])
            res["compiled"]["rank_max_abs_diff"] = rank_spread(out_c, ctl, a.ranks)
            res["compiled"]["median_us"] = time_steps(call_c, dev, ctl, a.iters)
            log(rank, "torch.compile reduce-overhead: %.1f us per step" %
                res["compiled"]["median_us"])
    results = [None] * a.ranks
    dist.all_gather_object(results, res, group=ctl)
    if rank == 0:
        report(a, d, results)
    agree_max(0, ctl)  # nobody tears down while rank 0 still reads
    # Leave without tearing NCCL down: destroying a communicator that CUDA
    # graphs captured hung for minutes on two H200s.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def report(a, d, results):
    r0, L = results[0], a.layers
    floor = r0["weight_bytes_per_layer"] / r0["copy_bw"] * 1e6
    modes = {}
    for m in ("eager", "compiled"):
        rec = dict(r0[m])
        if rec.get("error") is None:
            per = [r[m]["median_us"] for r in results]
            rec.update(median_us=per[0], max_over_ranks_us=max(per), per_rank_us=per,
                       us_per_layer=per[0] / L, floor_us_per_layer=floor,
                       pct_of_floor=100 * floor / (per[0] / L))
        modes[m] = rec
    ars = {k: dict(v, eager_us_max_over_ranks=max(r["allreduce"][k]["eager_us"] for r in results))
           for k, v in r0["allreduce"].items()}
    dev = torch.cuda.get_device_name(0) if not a.dry_run else "CPU, gloo (--dry-run)"
    summary = dict(device=dev, ranks=a.ranks, layers=L, batch=a.batch, cache=a.cache,
                   dims=d, copy_bw_bytes_per_s=[r["copy_bw"] for r in results],
                   weight_bytes_per_layer_per_rank=r0["weight_bytes_per_layer"],
                   cache_bytes_per_layer_per_rank=r0["cache_bytes_per_layer"],
                   modes=modes, allreduce=ars)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "tp_torch.json"), "w") as f:
        json.dump(summary, f, indent=2)
    lines = ["TP=%d decode, %d layers of hidden %d / %d heads / %d kv heads / FFN %d, batch %d, "
             "cache %d, bf16 on %s; per rank %.3f GB of weights per layer, copy bandwidth "
             "%.0f GB/s -> floor %.1f us per layer" %
             (a.ranks, L, d["hidden"], d["heads"], d["kv_heads"], d["ffn"], a.batch, a.cache,
              dev, r0["weight_bytes_per_layer"] / 1e9, r0["copy_bw"] / 1e9, floor), "",
             "| mode | step us (rank 0) | max over ranks | us / layer | % of floor | "
             "rel err vs eager | ranks' max abs diff |", "|---|---|---|---|---|---|---|"]
    names = {"eager": "eager, dist.all_reduce",
             "compiled": "torch.compile reduce-overhead, functional all-reduce"}
    for m, rec in modes.items():
        if rec.get("error"):
            e = rec["error"]
            lines.append("| %s | %s | | | | | |" % (
                names[m], e if e.startswith("skipped") else "failed: " + e))
            continue
        err = rec.get("rel_err_vs_eager")
        lines.append("| %s | %.1f | %.1f | %.1f | %.0f%% | %s | %g |" % (
            names[m], rec["median_us"], rec["max_over_ranks_us"], rec["us_per_layer"],
            rec["pct_of_floor"], "-" if err is None else "%.1e" % err, rec["rank_max_abs_diff"]))
    if "rel_err_vs_unsharded" in modes["eager"]:
        lines.append("\nTP eager vs the unsharded block (--ref): rel err %.2e" %
                     modes["eager"]["rel_err_vs_unsharded"])
    lines.append("")
    for k, r in ars.items():
        lines.append("all-reduce [1, %s] bf16 (%d KB): eager %.1f us per call (max over ranks "
                     "%.1f), in a CUDA graph %s us per call" % (
                         k, r["bytes"] // 1024, r["eager_us"], r["eager_us_max_over_ranks"],
                         "-" if r["graph_us"] is None else "%.1f" % r["graph_us"]))
    print("\n".join(lines), flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ranks", type=int, default=2, help="world size W, one GPU each")
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--cache", type=int, default=4096, help="KV cache length before the step")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--iters", type=int, default=100, help="timed steps per mode")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=os.environ.get("OUT") or "tp-torch-out")
    p.add_argument("--ref", action="store_true",
                   help="also check TP eager against the unsharded block on rank 0")
    p.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    p.add_argument("--dry-run", action="store_true",
                   help="tiny dims, CPU processes over gloo (no CUDA graphs): tests the script")
    a = p.parse_args()
    d = TINY if a.dry_run else FULL
    if a.dry_run:
        a.cache, a.ref = min(a.cache, 32), True
    for k in ("heads", "kv_heads", "hidden", "ffn"):
        if d[k] % a.ranks:
            sys.exit("%s = %d is not divisible by --ranks %d" % (k, d[k], a.ranks))
    if not a.dry_run and torch.cuda.device_count() < a.ranks:
        sys.exit("--ranks %d but %d GPUs" % (a.ranks, torch.cuda.device_count()))
    with socket.socket() as s:  # a free port for the rendezvous
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # Set before the workers start, so every process has them before init_process_group.
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), NCCL_NVLS_ENABLE="0")
    mp.spawn(worker, args=(a, d), nprocs=a.ranks, join=True)


if __name__ == "__main__":
    main()
