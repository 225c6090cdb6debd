"""Turns the harness's results (one dict, also saved as results.json) into a markdown table,
a bar chart and the RESULTS.md page. No torch needed: `python3 bench/harness.py --from-json
results.json` re-renders a finished run.
"""
import math

# (column, torch system key)
TORCH_COLUMNS = [("eager", "eager"), ("compile", "compile"),
                 ("compile cudagraphs", "compile-reduce-overhead"),
                 ("compile max-autotune", "compile-max-autotune")]
COMPILE_SYSTEMS = ("compile", "compile-reduce-overhead", "compile-max-autotune")


def fmt_us(v):
    if v is None:
        return "—"
    return "%.0f" % v if v >= 1000 else "%.1f" % v


def cell(entry, limit=48):
    """A time, or why there is none."""
    if entry is None:
        return "—"
    if entry.get("median_us") is not None:
        return fmt_us(entry["median_us"])
    text = "error: " + entry["error"] if entry.get("error") else entry.get("status") or "—"
    text = text.replace("|", "/").replace("\n", " ")
    return text if len(text) <= limit else text[:limit - 1] + "…"


def best_compile(case):
    times = [(case["torch"][s]["median_us"], s) for s in COMPILE_SYSTEMS
             if case.get("torch", {}).get(s, {}).get("median_us")]
    return min(times) if times else (None, None)


def fusec_times(case):
    f = case.get("fusec", {})
    return f.get("unfused_us"), f.get("fused_us")


def correctness_cell(case):
    c = case.get("correctness")
    if not c:
        return "—"
    if c.get("error") or c.get("status"):
        return cell(c, 40)
    err = c.get("max_rel_err")
    mark = "ok" if c.get("ok") else "FAIL"
    return "%s %.1e (tol %.0e)" % (mark, err, c["tol"]) if err is not None and \
        not math.isnan(err) else "FAIL nan"


def table_rows(results):
    rows = []
    for case in results["cases"]:
        floor = case.get("floor", {})
        floor_us = floor.get("floor_us")
        torch_ = case.get("torch", {})
        unfused, fused = fusec_times(case)
        f = case.get("fusec", {})
        best, _ = best_compile(case)
        row = [case["case"], "%s (%s)" % (fmt_us(floor_us), floor.get("bound", "?"))
               if floor_us else "—"]
        row += [cell(torch_.get(key)) for _, key in TORCH_COLUMNS]
        row += [fmt_us(unfused) if unfused else cell(f or None),
                fmt_us(fused) if fused else cell(f or None)]
        row.append("%.0f%%" % (100 * floor_us / fused) if fused and floor_us else "—")
        row.append("%.2fx" % (best / fused) if fused and best else "—")
        pred, meas = f.get("speedup_predicted"), f.get("speedup_measured")
        row.append("%.2fx / %.2fx" % (pred, meas) if pred and meas else "—")
        row.append(correctness_cell(case))
        rows.append(row)
    return rows


HEADER = (["case", "floor us (bound)"] + [c + " us" for c, _ in TORCH_COLUMNS] +
          ["fusec unfused us", "fusec fused us", "fusec % of floor",
           "fusec vs best torch.compile", "fusion speedup pred / meas",
           "correctness (fusec vs torch)"])


def markdown_table(results):
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    for row in table_rows(results):
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def environment_line(results):
    env = results.get("env", {})
    parts = ["GPU: %s" % env.get("device", "unknown")]
    if env.get("copy_bw_bytes_per_s"):
        parts.append("copy bandwidth %.2f TB/s (read + write)" % (env["copy_bw_bytes_per_s"] /
                                                                 1e12))
    if env.get("matmul_flops_per_s"):
        parts.append("bf16 matmul %.0f TFLOP/s (8192^3)" % (env["matmul_flops_per_s"] / 1e12))
    if env.get("torch"):
        parts.append("torch %s, triton %s" % (env["torch"], env.get("triton")))
    if env.get("error"):
        parts.append("environment: %s" % env["error"])
    return "; ".join(parts)


NOTES = """\
- floor = max(bytes / copy bandwidth, flops / bf16 matmul rate), both measured in the same run;
  bytes = graph inputs read once + outputs written once; flops = 2*M*N*K per matmul/linear, and
  attention's two products over the (query, key) pairs that take part (half for causal).
- Times are medians (us) of CUDA-event-timed runs enqueued back to back after warm-up, on the
  same inputs for every system; inputs are rotated among copies when smaller than 3x L2.
  fusec times come from `fusec bench --json --inputs` (unfused = `--no-fuse`).
- compile = torch.compile default mode; cudagraphs = mode "reduce-overhead" (decode-sized
  cases, inputs at fixed addresses); max-autotune = "max-autotune-no-cudagraphs" (GEMM cases,
  within a time budget). "fusec vs best torch.compile" > 1 means fusec is faster.
- PyTorch runs the JSON graph op by op (bench/graph_to_torch.py); grouped-query attention's
  repeated k/v are passed to scaled_dot_product_attention with enable_gqa=True.
- fusec vs torch: ||fusec - torch eager|| / ||torch eager|| over each output (worst shown).
"""


def results_page(results):
    return ("# fusec benchmark results\n\n"
            "Date: %s  \n%s  \nCommand: `%s`  \nfusec commit: %s; total time %.0f s\n\n%s\n%s" % (
                results.get("date", "?"), environment_line(results),
                results.get("command", "?"), results.get("commit", "?"),
                results.get("seconds", 0), markdown_table(results), NOTES))


def write_chart(results, path):
    """Grouped bars: % of floor reached by each system, per case (higher is better)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    systems = [(c, k) for c, k in TORCH_COLUMNS] + [("fusec unfused", "unfused"),
                                                    ("fusec fused", "fused")]
    cases = [c for c in results["cases"] if c.get("floor", {}).get("floor_us")]
    if not cases:
        return False
    fig, ax = plt.subplots(figsize=(max(8, 1.5 * len(cases)), 5))
    width = 0.8 / len(systems)
    for s, (label, key) in enumerate(systems):
        values = []
        for case in cases:
            if key in ("unfused", "fused"):
                t = case.get("fusec", {}).get(key + "_us")
            else:
                t = case.get("torch", {}).get(key, {}).get("median_us")
            values.append(100 * case["floor"]["floor_us"] / t if t else 0)
        xs = [i + (s - (len(systems) - 1) / 2) * width for i in range(len(cases))]
        ax.bar(xs, values, width, label=label)
    ax.set_xticks(range(len(cases)))
    ax.set_xticklabels([c["case"] for c in cases], rotation=30, ha="right")
    ax.set_ylabel("% of floor (higher is better)")
    ax.axhline(100, color="black", linewidth=0.8, linestyle="--")
    ax.set_title("fusec vs PyTorch on %s" % results.get("env", {}).get("device", "GPU"))
    ax.legend(fontsize=8, ncol=3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True
