#!/usr/bin/env python3
"""The PyTorch side of one benchmark case, in a process of its own.

bench/harness.py starts one per case and kills it at the case's deadline (torch.compile
cannot be interrupted in-process), so a result is printed the moment it exists, one JSON
object per line on stdout:

  {"event": "env", ...}          with --env: GPU, copy bandwidth, bf16 matmul rate
  {"event": "inputs", ...}       the inputs were written (--inputs-out) for fusec to read
  {"event": "system", "system": "eager", "median_us": ..., "iters": ..., "compile_s": ...,
   "rel_err_vs_eager": ...}      or {"event": "system", "system": ..., "error": "..."}

Timing follows fusec bench: CUDA events around each run, warm-up first, median of many; runs
are enqueued back to back, and input sets are rotated (copies at other addresses) when one set
is smaller than 3x L2, so that inputs come from HBM.
"""
import argparse
import json
import math
import os
import sys
import time
import traceback

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import graph_stats  # noqa: E402
from graph_to_torch import TorchGraph, load_graph  # noqa: E402

SYSTEMS = {"eager": None, "compile": "default",
           "compile-max-autotune": "max-autotune-no-cudagraphs",
           "compile-reduce-overhead": "reduce-overhead"}


def emit(**record):
    print(json.dumps(record), flush=True)


def short_error(e):
    first = str(e).strip().splitlines()[0] if str(e).strip() else ""
    return ("%s: %s" % (type(e).__name__, first))[:400]


def synchronize(device):
    if device == "cuda":
        torch.cuda.synchronize()


def time_runs(call, sets, warmup, target_s, min_iters, max_iters, device="cuda", warmup_s=0.0):
    """Median and spread in microseconds of back-to-back runs, each between two CUDA events
    (host clock around each run on the CPU, which is only for testing the harness).
    The warm-up is `warmup` runs and at least `warmup_s` seconds: under sustained tensor-core
    load an H100's power cap lowers its clock within about a second, and `fusec bench` warms
    up the same way, so both sides are timed at that clock (bench/NOTES.md)."""
    t0 = time.perf_counter()
    i = 0
    while True:
        if i >= warmup and i % 8 == 0:
            synchronize(device)
            if time.perf_counter() - t0 >= warmup_s:
                break
        call(sets[i % len(sets)])
        i += 1
    synchronize(device)
    t0 = time.perf_counter()
    call(sets[0])
    synchronize(device)
    estimate = time.perf_counter() - t0
    iters = int(min(max_iters, max(min_iters, target_s / max(estimate, 1e-6))))
    if device == "cuda":
        events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                  for _ in range(iters)]
        for i, (start, stop) in enumerate(events):
            start.record()
            call(sets[(i + 1) % len(sets)])  # sets[0] has just run for the estimate
            stop.record()
        torch.cuda.synchronize()
        us = sorted(1e3 * s.elapsed_time(e) for s, e in events)
    else:
        us = []
        for i in range(iters):
            t0 = time.perf_counter()
            call(sets[i % len(sets)])
            us.append(1e6 * (time.perf_counter() - t0))
        us.sort()
    return {"median_us": us[len(us) // 2], "min_us": us[0], "p90_us": us[(9 * len(us)) // 10],
            "iters": iters}


def rel_err(outs, refs):
    worst = 0.0
    for o, r in zip(outs, refs):
        o, r = o.double(), r.double()
        d = (o - r).norm().item() / max(r.norm().item(), 1e-30)
        worst = d if math.isnan(d) else max(worst, d)
    return worst


def measure_env(device):
    """Copy bandwidth (bytes read + written) and the bf16 matmul rate, on random data."""
    if device == "cuda":
        props = torch.cuda.get_device_properties(0)
        rec = {"event": "env", "device": torch.cuda.get_device_name(0),
               "sm_count": props.multi_processor_count, "memory_bytes": props.total_memory,
               "l2_bytes": getattr(props, "L2_cache_size", 0)}
        n, m = 1 << 30, 8192
    else:
        rec, n, m = {"event": "env", "device": "cpu (harness test only)"}, 1 << 26, 1024
    rec["torch"] = torch.__version__
    try:
        import triton
        rec["triton"] = triton.__version__
    except ImportError:
        rec["triton"] = None
    src = torch.randint(0, 255, (n,), dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    t = time_runs(lambda _: dst.copy_(src), [None], 3, 0.2, 10, 50, device)
    rec["copy_bw_bytes_per_s"] = 2 * n / (t["median_us"] * 1e-6)
    src = dst = None
    x = torch.rand(m, m, device=device, dtype=torch.bfloat16) - 0.5
    y = torch.rand(m, m, device=device, dtype=torch.bfloat16) - 0.5
    c = torch.empty_like(x)
    t = time_runs(lambda _: torch.matmul(x, y, out=c), [None], 5, 0.3, 10, 100, device,
                  warmup_s=0.5)
    rec["matmul_flops_per_s"] = 2 * m ** 3 / (t["median_us"] * 1e-6)
    emit(**rec)


def input_sets(inputs, l2_bytes):
    """The input set, plus copies until 3x L2 is covered (at most 16 sets), as fusec does."""
    size = sum(t.numel() * t.element_size() for t in inputs)
    count = 1
    if 0 < size < 3 * l2_bytes:
        count = min(16, -(-3 * l2_bytes // size))
    return [inputs] + [[t.clone() for t in inputs] for _ in range(count - 1)]


def run_system(name, tg, inputs, refs, l2_bytes, args):
    mode = SYSTEMS[name]
    if mode is None:
        fn = tg
    else:
        torch._dynamo.reset()
        fn = torch.compile(lambda *xs: tg(*xs), mode=mode, dynamic=False)
    if mode == "reduce-overhead":
        # As a KV cache and weights would be: fixed addresses, so CUDA graphs copy nothing.
        sets = [inputs]
        for t in inputs:
            torch._dynamo.mark_static_address(t)
    else:
        sets = input_sets(inputs, l2_bytes)

    def call(xs):
        if mode == "reduce-overhead":
            torch.compiler.cudagraph_mark_step_begin()
        return fn(*xs)
    t0 = time.perf_counter()
    outs = call(sets[0])
    synchronize(args.device)
    first_s = time.perf_counter() - t0
    err = rel_err(outs, refs) if refs is not None else None
    del outs
    timing = time_runs(call, sets, args.warmup, args.time_s, args.min_iters, args.max_iters,
                       args.device, args.warmup_s)
    return dict(timing, compile_s=first_s if mode else None, rel_err_vs_eager=err,
                input_sets=len(sets))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("graph", nargs="?")
    p.add_argument("--env", action="store_true", help="measure copy bandwidth and matmul rate")
    p.add_argument("--systems", default="eager,compile", help="comma-separated: " +
                   ", ".join(SYSTEMS))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--inputs-out", help="write the inputs here (safetensors)")
    p.add_argument("--ref-out", help="write the eager outputs here (safetensors)")
    p.add_argument("--time-s", type=float, default=0.5, help="timed seconds per system")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--warmup-s", type=float, default=0.5,
                   help="and warm-up runs for at least this many seconds (the power-capped clock)")
    p.add_argument("--min-iters", type=int, default=10)
    p.add_argument("--max-iters", type=int, default=200)
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"],
                   help="cpu only tests the harness: host-clock timing, no cudagraphs")
    p.add_argument("--literal-gqa", action="store_true",
                   help="run the repeated k/v of grouped-query attention as written")
    args = p.parse_args()
    if args.env:
        measure_env(args.device)
        return
    from safetensors.torch import save_file

    graph = load_graph(args.graph)
    tg = TorchGraph(graph, fast_gqa=not args.literal_gqa)
    t0 = time.perf_counter()
    by_name = graph_stats.make_inputs(graph, tg.shapes, seed=args.seed, device=args.device)
    inputs = [by_name[n] for n in tg.input_names]
    if args.inputs_out:
        save_file({n: t.contiguous().cpu() for n, t in by_name.items()}, args.inputs_out)
        emit(event="inputs", path=args.inputs_out, seconds=time.perf_counter() - t0)
    del by_name
    refs = None
    try:
        refs = [o.contiguous() for o in tg(*inputs)]
        synchronize(args.device)
        if args.ref_out:
            save_file({n: o.cpu() for n, o in zip(tg.output_names, refs)}, args.ref_out)
            emit(event="reference", path=args.ref_out)
    except Exception as e:  # noqa: BLE001 - reported, the other systems still run
        emit(event="reference", error=short_error(e))
        traceback.print_exc()
    l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 50 << 20) \
        if args.device == "cuda" else 0
    for name in args.systems.split(","):
        t0 = time.perf_counter()
        try:
            rec = run_system(name, tg, inputs, refs, l2, args)
            emit(event="system", system=name, seconds=time.perf_counter() - t0, **rec)
        except Exception as e:  # noqa: BLE001 - one system's failure must not end the case
            traceback.print_exc()
            emit(event="system", system=name, seconds=time.perf_counter() - t0,
                 error=short_error(e))
        try:
            synchronize(args.device)
            if args.device == "cuda":
                torch.cuda.empty_cache()
        except Exception as e:  # noqa: BLE001 - a sticky CUDA error: the rest will say so
            emit(event="note", error=short_error(e))


if __name__ == "__main__":
    main()
