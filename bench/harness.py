#!/usr/bin/env python3
"""fusec vs PyTorch on the benchmark graphs, in one command on a GPU machine.

    python3 bench/harness.py                      # the default suite, ~10 minutes on an H100
    python3 bench/harness.py --quick --cases swiglu_ffn,attention
    python3 bench/harness.py --results bench/RESULTS.md

For each case (bench/graphs/<case>.json) a worker process (bench/torch_worker.py) draws seeded
inputs, writes them to a safetensors file and times PyTorch eager and torch.compile on them;
then `fusec run --inputs` checks fusec against the PyTorch outputs and `fusec bench --json
--inputs` times the fused and the unfused plan on the same inputs. The copy bandwidth and the
bf16 matmul rate measured at the start give each case its floor. max-autotune runs last, for
the GEMM cases, while the time budget lasts. Writes results.json, results.md, results.png,
RESULTS.md and logs/ under --out; the table is printed last.
"""
import argparse
import datetime
import fnmatch
import json
import math
import os
import queue
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GRAPHS = os.path.join(HERE, "graphs")
WORKER = os.path.join(HERE, "torch_worker.py")
sys.path.insert(0, HERE)
import report  # noqa: E402

FIRST = ["linear_bias_gelu_residual", "swiglu_ffn", "qkv_projection", "attention",
         "llama_block_decode_b1", "llama_block_decode_b32", "llama_block_prefill"]
MEMORY = ["gelu_bias", "add_rms_norm", "softmax", "layer_norm", "add_rms_norm_1x4096"]
DEFAULT_CASES = FIRST + MEMORY
TOLERANCE = {"bf16": 2e-2, "f16": 2e-2, "f32": 1e-4}


class Clock:
    def __init__(self, budget_s):
        self.start = time.monotonic()
        self.budget_s = budget_s

    def elapsed(self):
        return time.monotonic() - self.start

    def remaining(self):
        return self.budget_s - self.elapsed()


CLOCK = Clock(0)


def log(msg):
    print("[%6.1fs] %s" % (CLOCK.elapsed(), msg), flush=True)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="default cases: " + ", ".join(DEFAULT_CASES))
    p.add_argument("--cases", default="default",
                   help="comma-separated case names or globs, 'default' or 'all'")
    p.add_argument("--quick", action="store_true",
                   help="fewer timed runs, no max-autotune (a smoke test of the suite)")
    p.add_argument("--out", default=os.environ.get("OUT") or "bench-out",
                   help="output directory (default: $OUT if set, else ./bench-out)")
    p.add_argument("--results", help="also write the RESULTS.md page here")
    p.add_argument("--budget-s", type=float, default=540,
                   help="wall-clock budget for the whole suite; cases past it are skipped")
    p.add_argument("--case-timeout-s", type=float, default=200,
                   help="limit for one case's PyTorch worker (eager, compile, cudagraphs)")
    p.add_argument("--no-max-autotune", action="store_true", help="skip max-autotune")
    p.add_argument("--max-autotune-cases", default="gemm",
                   help="'gemm' (cases with matmuls and no attention), 'all' or names/globs")
    p.add_argument("--max-autotune-budget-s", type=float, default=120,
                   help="limit for one case's max-autotune compile and timing")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--fusec", default=os.environ.get("FUSEC") or
                   os.path.join(ROOT, "build", "bin", "fusec"))
    p.add_argument("--work", default="/tmp/fusec-bench-work",
                   help="scratch directory for the inputs and outputs (large files)")
    p.add_argument("--literal-gqa", action="store_true",
                   help="PyTorch runs the repeated k/v of grouped-query attention as written")
    p.add_argument("--torch-device", default="cuda", choices=["cuda", "cpu"],
                   help="cpu: test the harness on a machine without a GPU (times mean nothing)")
    p.add_argument("--from-json", help="re-render the reports of an earlier results.json")
    return p.parse_args(argv)


def select_cases(spec):
    available = sorted(f[:-5] for f in os.listdir(GRAPHS) if f.endswith(".json"))
    if spec == "default":
        return [c for c in DEFAULT_CASES if c in available]
    if spec == "all":
        return [c for c in DEFAULT_CASES if c in available] + \
            [c for c in available if c not in DEFAULT_CASES]
    chosen = []
    for pattern in spec.split(","):
        hits = [c for c in available if fnmatch.fnmatch(c, pattern.strip())]
        if not hits:
            raise SystemExit("harness: no case matches '%s' (have: %s)" %
                             (pattern, ", ".join(available)))
        chosen += [c for c in hits if c not in chosen]
    return chosen


# ---------------------------------------------------------------------------------------------
# Subprocesses
# ---------------------------------------------------------------------------------------------

def stop(proc):
    """Kills the worker and the compile workers it started (its own process group)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def run_worker(worker_args, timeout_s, log_path, on_record):
    """Runs torch_worker.py; each JSON line goes to on_record as it comes. Returns a status."""
    cmd = [sys.executable, WORKER] + worker_args
    with open(log_path, "a") as err:
        err.write("$ %s\n" % " ".join(cmd))
        err.flush()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True,
                                start_new_session=True)
        lines = queue.Queue()

        def pump():
            for line in proc.stdout:
                lines.put(line)
            lines.put(None)
        threading.Thread(target=pump, daemon=True).start()
        deadline = time.monotonic() + max(timeout_s, 1)
        try:
            while True:
                try:
                    line = lines.get(timeout=max(0.05, deadline - time.monotonic()))
                except queue.Empty:
                    stop(proc)
                    return "timeout after %.0f s" % timeout_s
                if line is None:
                    break
                try:
                    on_record(json.loads(line))
                except ValueError:
                    err.write("(stdout) " + line)
        except BaseException:
            stop(proc)
            raise
        rc = proc.wait()
        return "ok" if rc == 0 else "worker exited with status %d (see %s)" % (rc, log_path)


def run_fusec(cmd, timeout_s, log_path):
    """(returncode, stdout); stderr goes to the log. returncode None: timed out."""
    env = dict(os.environ)
    env.setdefault("FUSEC_CACHE_DIR", "/tmp/fusec-cache")
    with open(log_path, "a") as err:
        err.write("$ %s\n" % " ".join(cmd))
        err.flush()
        try:
            r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=err, text=True, env=env,
                               timeout=max(timeout_s, 1))
        except subprocess.TimeoutExpired:
            return None, ""
        except OSError as e:
            return -1, str(e)
    return r.returncode, r.stdout


def last_error_line(log_path):
    """The last line fusec wrote to stderr, without its 'fusec: error:' prefix."""
    try:
        with open(log_path) as f:
            lines = [ln.strip() for ln in f if ln.strip() and not ln.startswith("$ ")]
    except OSError:
        return "no log"
    if not lines:
        return "no message"
    return lines[-1].split("error: ", 1)[-1]


# ---------------------------------------------------------------------------------------------
# One case
# ---------------------------------------------------------------------------------------------

def case_floor(graph, env):
    import graph_stats
    from graph_to_torch import infer_shapes
    shapes = infer_shapes(graph)
    nbytes, flops = graph_stats.io_bytes(graph, shapes), graph_stats.flops(graph, shapes)
    bw, rate = env.get("copy_bw_bytes_per_s"), env.get("matmul_flops_per_s")
    bytes_us = nbytes / bw * 1e6 if bw else None
    flops_us = flops / rate * 1e6 if rate else None
    floor = max(v for v in (bytes_us, flops_us, 0.0) if v is not None)
    bound = "compute" if flops_us and bytes_us and flops_us > bytes_us else "memory"
    out_dtypes = {n: shapes[n][0] for n in graph["outputs"]}
    return {"bytes": nbytes, "flops": flops, "bytes_us": bytes_us, "flops_us": flops_us,
            "floor_us": floor or None, "bound": bound}, out_dtypes


def compare_outputs(fusec_path, ref_path, out_dtypes):
    """||fusec - torch|| / ||torch|| per output; the worst relative to its tolerance is shown."""
    from safetensors.torch import load_file
    got, want = load_file(fusec_path), load_file(ref_path)
    per, worst, worst_ratio, ok = {}, None, -1.0, True
    for name, dtype in out_dtypes.items():
        a, b = got[name].double(), want[name].double()
        if a.shape != b.shape:
            per[name], ok = "shape %s vs %s" % (list(a.shape), list(b.shape)), False
            continue
        err = (a - b).norm().item() / max(b.norm().item(), 1e-30)
        tol = TOLERANCE.get(dtype, 0.0)
        per[name] = err
        ratio = math.inf if math.isnan(err) or (err > 0 and tol == 0) else \
            (err / tol if tol else 0.0)
        ok = ok and err <= tol
        if ratio > worst_ratio:
            worst, worst_ratio = (err, tol), ratio
    return {"outputs": per, "max_rel_err": worst[0] if worst else None,
            "tol": worst[1] if worst else 0.0, "ok": ok}


def torch_systems(name, floor):
    systems = ["eager", "compile"]
    if "decode" in name or floor["bytes"] < (16 << 20):
        systems.append("compile-reduce-overhead")
    return systems


def worker_timing_args(args):
    if args.quick:
        return ["--time-s", "0.1", "--warmup", "2", "--warmup-s", "0.1", "--min-iters", "5",
                "--max-iters", "30"]
    return ["--time-s", "0.5", "--warmup", "5", "--warmup-s", "0.5", "--min-iters", "10",
            "--max-iters", "200"]


def run_torch(case, systems, args, timeout_s, extra):
    name = case["case"]
    log_path = os.path.join(args.out, "logs", name + ".torch.log")

    def on_record(rec):
        if rec.get("event") == "system":
            case["torch"][rec["system"]] = rec
            what = "%s us (%d runs)" % (report.fmt_us(rec["median_us"]), rec["iters"]) \
                if rec.get("median_us") is not None else "error: " + rec.get("error", "?")
            if rec.get("compile_s"):
                what += ", first call %.1f s" % rec["compile_s"]
            log("%s: torch %s %s" % (name, rec["system"], what))
        elif rec.get("event") in ("inputs", "reference"):
            case[rec["event"]] = rec
            if rec.get("error"):
                log("%s: torch eager reference failed: %s" % (name, rec["error"]))
    wargs = [os.path.join(ROOT, case["graph"]), "--systems", ",".join(systems),
             "--seed", str(args.seed), "--device", args.torch_device]
    wargs += worker_timing_args(args) + extra + (["--literal-gqa"] if args.literal_gqa else [])
    status = run_worker(wargs, timeout_s, log_path, on_record)
    for s in systems:
        if s not in case["torch"]:
            case["torch"][s] = {"status": status if status != "ok" else "no result"}
    if status != "ok":
        log("%s: torch worker: %s" % (name, status))


def run_fusec_side(case, args, inputs_file, ref_file, out_dtypes):
    name, fusec = case["case"], {}
    case["fusec"] = fusec
    path = os.path.join(ROOT, case["graph"])
    log_path = os.path.join(args.out, "logs", name + ".fusec.log")
    have_inputs = inputs_file and os.path.exists(inputs_file)
    inputs = ["--inputs", inputs_file] if have_inputs else []
    if have_inputs and ref_file and os.path.exists(ref_file):
        out_file = os.path.join(args.work, name + ".fusec_out.safetensors")
        rc, _ = run_fusec([args.fusec, "run", path, "-o", out_file] + inputs,
                          min(300, max(CLOCK.remaining() - 15, 20)), log_path)
        if rc == 0:
            try:
                case["correctness"] = compare_outputs(out_file, ref_file, out_dtypes)
            except Exception as e:  # noqa: BLE001
                case["correctness"] = {"error": "compare: %s" % e}
        else:
            why = "timeout" if rc is None else last_error_line(log_path)
            case["correctness"] = {"error": "fusec run: " + why}
        remove_files(out_file)
        log("%s: fusec vs torch: %s" % (name, report.correctness_cell(case)))
    else:
        case["correctness"] = {"status": "n/a: no PyTorch inputs/outputs"}
    # The same warm-up as the PyTorch side (worker_timing_args): both timed at the clock a
    # sustained load runs at.
    iters = (["--iters", "10", "--warmup", "2", "--warmup-s", "0.1"] if args.quick
             else ["--iters", "50", "--warmup-s", "0.5"])
    rc, out = run_fusec([args.fusec, "bench", path, "--json"] + iters + inputs,
                        min(300, max(CLOCK.remaining(), 20)), log_path)
    if rc != 0:
        fusec["error"] = ("timeout" if rc is None else last_error_line(log_path))
        log("%s: fusec bench: %s" % (name, fusec["error"]))
        return
    try:
        j = json.loads(out)
    except ValueError:
        fusec["error"] = "fusec bench printed no JSON"
        return
    with open(os.path.join(args.out, "logs", name + ".fusec_bench.json"), "w") as f:
        f.write(out)
    fusec.update(fused_us=j["fused"]["median_us"], unfused_us=j["unfused"]["median_us"],
                 bytes=j["fused"]["bytes"], unfused_bytes=j["unfused"]["bytes"],
                 copy_bw_bytes_per_s=j.get("copy_bw_bytes_per_s"),
                 speedup_predicted=j.get("speedup_predicted"),
                 speedup_measured=j.get("speedup_measured"), inputs_given=bool(inputs),
                 steps=j["fused"].get("steps", []), kernels_unfused=len(j["unfused"]
                                                                         .get("steps", [])))
    log("%s: fusec unfused %s us, fused %s us (%d kernels)" % (
        name, report.fmt_us(fusec["unfused_us"]), report.fmt_us(fusec["fused_us"]),
        len(fusec["steps"])))


def remove_files(*paths):
    for p in paths:
        if os.path.exists(p):
            os.remove(p)


def run_case(name, args, env):
    path = os.path.join(GRAPHS, name + ".json")
    with open(path) as f:
        graph = json.load(f)
    case = {"case": name, "graph": os.path.relpath(path, ROOT),
            "description": graph.get("description", ""), "torch": {}}
    t0 = time.monotonic()
    try:
        case["floor"], out_dtypes = case_floor(graph, env)
    except Exception as e:  # noqa: BLE001
        case["floor"], out_dtypes = {"error": str(e)}, {}
    inputs_file = os.path.join(args.work, name + ".inputs.safetensors")
    ref_file = os.path.join(args.work, name + ".torch_out.safetensors")
    remove_files(inputs_file, ref_file)  # never a stale file from an earlier run
    systems = torch_systems(name, case["floor"]) if "bytes" in case["floor"] else ["eager"]
    budget = max(10, min(args.case_timeout_s, CLOCK.remaining() - 40))
    run_torch(case, systems, args, budget,
              ["--inputs-out", inputs_file, "--ref-out", ref_file])
    try:
        run_fusec_side(case, args, inputs_file, ref_file, out_dtypes)
    except Exception as e:  # noqa: BLE001
        case.setdefault("fusec", {})["error"] = "harness: %s" % e
    remove_files(inputs_file, ref_file)
    case["seconds"] = time.monotonic() - t0
    return case


def wants_autotune(name, graph_path, args):
    if args.quick or args.no_max_autotune:
        return False
    spec = args.max_autotune_cases
    if spec == "all":
        return True
    if spec == "gemm":
        with open(graph_path) as f:
            ops = {n["op"] for n in json.load(f)["nodes"]}
        return bool(ops & {"matmul", "linear"}) and "scaled_dot_product_attention" not in ops
    return any(fnmatch.fnmatch(name, p.strip()) for p in spec.split(","))


# ---------------------------------------------------------------------------------------------
# The suite
# ---------------------------------------------------------------------------------------------

def write_reports(results, args):
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(results, f, indent=1, default=str)
    table = report.markdown_table(results)
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write(report.environment_line(results) + "\n\n" + table + "\n" + report.NOTES)
    page = report.results_page(results)
    for path in [os.path.join(args.out, "RESULTS.md")] + ([args.results] if args.results else []):
        with open(path, "w") as f:
            f.write(page)
    return table


def git_commit():
    # A copy of the tree without its history (a remote GPU machine) names the
    # commit it was made from here.
    if os.environ.get("FUSEC_COMMIT"):
        return os.environ["FUSEC_COMMIT"]
    try:
        return subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=10).stdout.strip() or "?"
    except (OSError, subprocess.SubprocessError):
        return "?"


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    args.out = os.path.abspath(args.out)
    os.makedirs(os.path.join(args.out, "logs"), exist_ok=True)
    if args.from_json:
        with open(args.from_json) as f:
            results = json.load(f)
    else:
        results = run_suite(args)
    table = write_reports(results, args)
    try:
        if report.write_chart(results, os.path.join(args.out, "results.png")):
            log("wrote %s" % os.path.join(args.out, "results.png"))
    except Exception as e:  # noqa: BLE001 - the chart is optional
        log("chart failed: %s" % e)
    log("wrote results.json, results.md, RESULTS.md%s under %s" % (
        " and " + args.results if args.results else "", args.out))
    print("\n" + report.environment_line(results) + "\n\n" + table, flush=True)


def run_suite(args):
    global CLOCK
    CLOCK = Clock(args.budget_s)
    cases = select_cases(args.cases)
    os.makedirs(args.work, exist_ok=True)
    results = {"date": datetime.datetime.now(datetime.timezone.utc).strftime(
        "%Y-%m-%d %H:%M UTC"), "command": "python3 bench/harness.py " + " ".join(sys.argv[1:]),
        "commit": git_commit(), "quick": args.quick, "cases": [], "env": {}}
    log("%d case(s): %s" % (len(cases), ", ".join(cases)))
    if not os.path.exists(args.fusec):
        log("warning: %s not found: fusec columns will show errors" % args.fusec)

    def take_env(rec):
        results["env"] = rec
    status = run_worker(["--env", "--device", args.torch_device], 120,
                        os.path.join(args.out, "logs", "env.log"), take_env)
    if not results["env"]:
        results["env"] = {"error": status}
    log(report.environment_line(results))
    for name in cases:
        if CLOCK.remaining() < 60:
            results["cases"].append({"case": name, "torch": {}, "fusec": {
                "status": "skipped: time budget"}})
            log("%s: skipped (time budget)" % name)
            continue
        log("%s: start" % name)
        results["cases"].append(run_case(name, args, results["env"]))
        write_reports(results, args)  # a partial page survives a kill
    for case in results["cases"]:
        name = case["case"]
        if not wants_autotune(name, os.path.join(GRAPHS, name + ".json"), args):
            continue
        budget = min(args.max_autotune_budget_s, CLOCK.remaining() - 15)
        if budget < 30 or "floor" not in case:
            case["torch"]["compile-max-autotune"] = {"status": "skipped: time budget"}
            continue
        log("%s: max-autotune (up to %.0f s)" % (name, budget))
        run_torch(case, ["compile-max-autotune"], args, budget, [])
        write_reports(results, args)
    results["seconds"] = CLOCK.elapsed()
    return results


if __name__ == "__main__":
    main()
