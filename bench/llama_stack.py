#!/usr/bin/env python3
"""A whole model's decode step: fusec with its weights bound once against torch.compile.

Builds an N-layer stack of a Llama-3-8B-shaped decode block (bench/make_stack.py --params:
the weights are the graph's parameters), draws its weights and inputs on the GPU, writes the
weights as safetensors shards, and then times, in one run on one GPU:

  - PyTorch eager and torch.compile with CUDA graphs (mode "reduce-overhead", the inputs and
    weights at fixed addresses), the JSON graph run op by op (bench/graph_to_torch.py);
  - fusec: `fusec run --weights SHARDS` once (compile, bind the weights, run: checked against
    eager), then `fusec bench --weights SHARDS --graph` (the fused plan as CUDA graph replays).

Prints a table: step time, tokens per second, % of copy bandwidth on the bytes one step must
move (every weight and cache read once, the new cache rows and the output written once).

    python3 bench/llama_stack.py --layers 32 --layer llama_block_decode_b1 --out OUT
"""
import argparse
import json
import os
import subprocess
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import graph_stats  # noqa: E402
from graph_to_torch import TorchGraph  # noqa: E402
from make_stack import load_layer, stack  # noqa: E402
from torch_worker import rel_err, time_runs  # noqa: E402


def log(msg):
    print("[%s] %s" % (time.strftime("%H:%M:%S"), msg), file=sys.stderr, flush=True)


def nbytes(t):
    return t.numel() * t.element_size()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--layers", type=int, default=32)
    p.add_argument("--layer", default="llama_block_decode_b1")
    p.add_argument("--fusec", default=os.path.join(HERE, "..", "build", "bin", "fusec"))
    p.add_argument("--work", default="/tmp/fusec-llama-stack")
    p.add_argument("--out", default=os.environ.get("OUT") or "llama-stack-out")
    p.add_argument("--shard-layers", type=int, default=8, help="layers per weights file")
    p.add_argument("--iters", type=int, default=50)
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    os.makedirs(a.out, exist_ok=True)
    from safetensors.torch import save_file

    graph = stack(load_layer(a.layer), a.layers, params=True)
    graph_path = os.path.join(a.work, "stack.json")
    with open(graph_path, "w") as f:
        json.dump(graph, f)
    params = [t["name"] for t in graph["parameters"]]
    # PyTorch sees the parameters as trailing inputs, as fusec orders them.
    flat = dict(graph, inputs=graph["inputs"] + graph["parameters"])
    flat.pop("parameters")
    tg = TorchGraph(flat)
    t0 = time.perf_counter()
    by_name = graph_stats.make_inputs(flat, tg.shapes, seed=0, device="cuda")
    torch.cuda.synchronize()
    weight_bytes = sum(nbytes(by_name[n]) for n in params)
    input_bytes = sum(nbytes(by_name[t["name"]]) for t in graph["inputs"])
    log("drew %.2f GB of weights and %.1f MB of inputs in %.1f s" %
        (weight_bytes / 1e9, input_bytes / 1e6, time.perf_counter() - t0))

    t0 = time.perf_counter()
    shards = []
    per = a.shard_layers
    for s in range(0, a.layers, per):
        names = [n for n in params if int(n.split("_", 1)[0][1:]) in range(s, s + per)]
        path = os.path.join(a.work, "weights-%05d.safetensors" % (s // per))
        save_file({n: by_name[n].cpu() for n in names}, path)
        shards.append(path)
    inputs_path = os.path.join(a.work, "inputs.safetensors")
    save_file({t["name"]: by_name[t["name"]].cpu() for t in graph["inputs"]}, inputs_path)
    log("wrote %d weight shards and the inputs in %.1f s" % (len(shards), time.perf_counter() - t0))

    inputs = [by_name[n] for n in tg.input_names]
    with torch.no_grad():
        first = tg(*inputs)
        out_bytes = sum(nbytes(o) for o in first)
        refs = [o.float().cpu() for o in first]
        del first
        eager = time_runs(lambda _: tg(*inputs), [None], 3, 1.0, 10, a.iters)
        log("eager: %.1f us" % eager["median_us"])
        for t in inputs:
            torch._dynamo.mark_static_address(t)
        t0 = time.perf_counter()
        fn = torch.compile(lambda *xs: tg(*xs), mode="reduce-overhead", dynamic=False)

        def call(_):
            torch.compiler.cudagraph_mark_step_begin()
            return fn(*inputs)
        outs = call(None)
        torch.cuda.synchronize()
        compile_s = time.perf_counter() - t0
        compiled_err = rel_err([o.float().cpu() for o in outs], refs)
        del outs
        compiled = time_runs(call, [None], 5, 1.0, 10, a.iters, warmup_s=1.0)
        log("torch.compile cudagraphs: %.1f us (compile %.0f s)" % (compiled["median_us"], compile_s))
    del inputs, by_name, fn
    torch._dynamo.reset()
    torch.cuda.empty_cache()

    weights_arg = ",".join(shards)
    fusec_out = os.path.join(a.work, "fusec_out.safetensors")
    t0 = time.perf_counter()
    run = subprocess.run([a.fusec, "run", graph_path, "--weights", weights_arg, "--inputs",
                          inputs_path, "-o", fusec_out], capture_output=True, text=True)
    run_s = time.perf_counter() - t0
    with open(os.path.join(a.out, "fusec_run.txt"), "w") as f:
        f.write(run.stdout + run.stderr)
    if run.returncode != 0:
        sys.exit("fusec run failed:\n" + run.stderr[-2000:])
    from safetensors.torch import load_file
    got = load_file(fusec_out)
    fusec_err = rel_err([got[n].float() for n in graph["outputs"]], refs)
    log("fusec run (compile, bind %.1f GB, run): %.1f s; rel err vs eager %.1e" %
        (weight_bytes / 1e9, run_s, fusec_err))

    bench = subprocess.run([a.fusec, "bench", graph_path, "--weights", weights_arg, "--inputs",
                            inputs_path, "--graph", "--no-steps", "--json",
                            "--iters", str(a.iters)], capture_output=True, text=True)
    with open(os.path.join(a.out, "fusec_bench.json"), "w") as f:
        f.write(bench.stdout)
    with open(os.path.join(a.out, "fusec_bench.err"), "w") as f:
        f.write(bench.stderr)
    if bench.returncode != 0:
        sys.exit("fusec bench failed:\n" + bench.stderr[-2000:])
    b = json.loads(bench.stdout)
    bw = b["copy_bw_bytes_per_s"]
    floor_bytes = weight_bytes + input_bytes + out_bytes
    floor_us = floor_bytes / bw * 1e6
    batch = int(graph["inputs"][0]["shape"][0])
    rows = [("PyTorch eager (the reference)", eager["median_us"], None),
            ("torch.compile, CUDA graphs", compiled["median_us"], compiled_err),
            ("fusec unfused (--no-fuse), CUDA graph", b["unfused"]["median_us"], None),
            ("fusec, weights bound, CUDA graph", b["fused"]["median_us"], fusec_err)]
    lines = ["%d layers of %s; weights %.2f GB in %d shards; one step moves %.2f GB: "
             "floor %.1f us at %.0f GB/s copy bandwidth (%s)" %
             (a.layers, a.layer, weight_bytes / 1e9, len(shards), floor_bytes / 1e9, floor_us,
              bw / 1e9, b["device"]),
             "fusec: compile + bind + run %.1f s (fusec run); predicted fused %.1f us" %
             (run_s, b["fused"]["predicted_us"]),
             "torch.compile: first call %.0f s" % compile_s, "",
             "| system | step us | tokens/s | % of copy BW | vs torch.compile | rel err vs eager |",
             "|---|---|---|---|---|---|"]
    for name, us, err in rows:
        lines.append("| %s | %.1f | %.0f | %.0f%% | %.2fx | %s |" %
                     (name, us, batch / (us * 1e-6), 100 * floor_us / us,
                      compiled["median_us"] / us, "—" if err is None else "%.1e" % err))
    text = "\n".join(lines)
    with open(os.path.join(a.out, "table.md"), "w") as f:
        f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
