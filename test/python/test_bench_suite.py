"""bench/graph_stats.py (floors, inputs), the benchmark graphs, the report, and the builder
against fusec's own reference interpreter (`fusec eval`, when a built fusec is found)."""
import glob
import json
import math
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import graph_stats as gs  # noqa: E402
import graph_to_torch as gt  # noqa: E402
import harness  # noqa: E402
import report  # noqa: E402

from test_graph_to_torch import graph, node  # noqa: E402


def bench_graph(name):
    return gt.load_graph(os.path.join(ROOT, "bench", "graphs", name + ".json"))


def test_flops_bytes_and_scales():
    g = graph([("x", "bf16", [4, 8]), ("w", "bf16", [16, 8]), ("m", "f32", [3, 5, 7]),
               ("q", "bf16", [2, 4, 6])],
              [node("y", "linear", ["x", "w"]), node("mt", "transpose", ["m"], perm=[0, 2, 1]),
               node("mm", "matmul", ["m", "mt"]),
               node("o", "scaled_dot_product_attention", ["q", "q", "q"], causal=True)],
              ["y", "mm", "y", "o"])
    shapes = gt.infer_shapes(g)
    causal_pairs = 4 * 5 // 2
    assert gs.flops(g, shapes) == 2 * 4 * 16 * 8 + 2 * 3 * 5 * 5 * 7 + \
        2 * 2 * causal_pairs * (6 + 6)
    inputs = (4 * 8 + 16 * 8) * 2 + 3 * 5 * 7 * 4 + 2 * 4 * 6 * 2
    outputs = 4 * 16 * 2 + 3 * 5 * 5 * 4 + 2 * 4 * 6 * 2  # "y" listed twice, written once
    assert gs.io_bytes(g, shapes) == inputs + outputs
    scales = gs.input_scales(g, shapes)
    assert scales == {"x": 1.0, "w": 1 / math.sqrt(8), "m": 1 / math.sqrt(7), "q": 1.0}
    assert gs.attention_pairs(3, 5, True) == 1 + 2 + 3
    assert gs.attention_pairs(5, 3, True) == 1 + 2 + 3 + 3 + 3
    assert gs.attention_pairs(5, 3, False) == 15


def test_random_inputs_follow_fusec():
    g = graph([("x", "bf16", [64, 256]), ("w", "f32", [32, 256]), ("i", "i32", [100]),
               ("b", "bool", [10])], [node("y", "linear", ["x", "w"])], ["y"])
    shapes = gt.infer_shapes(g)
    a, b = gs.make_inputs(g, shapes, seed=3), gs.make_inputs(g, shapes, seed=3)
    for k in a:
        assert torch.equal(a[k], b[k])
    assert not torch.equal(a["x"], gs.make_inputs(g, shapes, seed=4)["x"])
    x = a["x"].float()
    assert x.min() >= -2 and x.max() < 2 and torch.equal(x * 128, (x * 128).round())
    assert x.unique().numel() > 400  # the whole grid of 512 values is in use
    w = a["w"].double() * 16  # scale 1/sqrt(256)
    assert w.min() >= -2 and w.max() < 2 and a["w"].dtype == torch.float32
    assert a["i"].dtype == torch.int32 and a["i"].min() >= -8 and a["i"].max() < 8
    assert a["b"].dtype == torch.bool


def test_bench_graphs_build_and_count():
    for path in sorted(glob.glob(os.path.join(ROOT, "bench", "graphs", "*.json"))):
        g = gt.load_graph(path)
        tg = gt.TorchGraph(g)
        assert all(o in tg.shapes for o in g["outputs"]), path
    g = bench_graph("swiglu_ffn")
    assert gs.flops(g, gt.infer_shapes(g)) == 3 * 2 * 4096 * 4096 * 11008
    g = bench_graph("attention")
    assert gs.flops(g, gt.infer_shapes(g)) == 2 * 32 * (4096 * 4097 // 2) * 256
    for b in (1, 32):
        g = bench_graph("llama_block_decode_b%d" % b)
        tg = gt.TorchGraph(g)
        assert tg.shapes["k_all_heads"][1] == [b, 32, 4097, 128]
        assert [tg.shapes[o][1] for o in g["outputs"]] == [[b, 4096], [b, 8, 1, 128],
                                                           [b, 8, 1, 128]]
        sdpa = [s for s in tg.steps if s[0] == "attn"][0]
        assert sdpa[2] == ["q_heads", "k_all", "v_all"]  # GQA handed to enable_gqa
    g = bench_graph("llama_block_prefill")
    weights = (4096 * 4096 * 2 + 1024 * 4096 * 2 + 3 * 14336 * 4096 + 2 * 4096) * 2
    assert gs.io_bytes(g, gt.infer_shapes(g)) == weights + 4096 * 4096 * 2 * 2 + \
        2 * 8 * 4096 * 128 * 2


def fusec_binary():
    path = os.environ.get("FUSEC") or os.path.join(ROOT, "build", "bin", "fusec")
    return path if os.path.exists(path) else None


EXAMPLES = [p for p in sorted(glob.glob(os.path.join(ROOT, "examples", "*.json")))
            if "llama" not in p]  # its weights take the interpreter ~10 s


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: os.path.basename(p)[:-5])
def test_builder_matches_fusec_interpreter(path, tmp_path):
    fusec = fusec_binary()
    if fusec is None:
        pytest.skip("no built fusec (set FUSEC or build build/bin/fusec)")
    save_file = pytest.importorskip("safetensors.torch").save_file
    load_file = pytest.importorskip("safetensors.torch").load_file
    g = gt.load_graph(path)
    tg = gt.TorchGraph(g)
    inputs = gs.make_inputs(g, tg.shapes, seed=1)
    save_file(inputs, str(tmp_path / "in.safetensors"))
    subprocess.run([fusec, "eval", path, "--fp64", "--inputs", str(tmp_path / "in.safetensors"),
                    "-o", str(tmp_path / "out.safetensors")], check=True, capture_output=True)
    ref = load_file(str(tmp_path / "out.safetensors"))
    for name, got in tg.run_dict(inputs).items():
        want = ref[name]
        assert got.shape == want.shape and got.dtype == want.dtype, name
        if not got.is_floating_point():
            assert torch.equal(got, want), name
            continue
        a, b = got.double(), want.double()
        assert torch.equal(a.isnan(), b.isnan()) and torch.equal(a.isinf(), b.isinf()), name
        fin = torch.isfinite(b)
        err = (a[fin] - b[fin]).norm() / max(b[fin].norm(), 1e-30)
        assert err <= (1e-5 if got.dtype == torch.float32 else 1e-2), (name, float(err))


def test_report_and_case_selection():
    results = {"env": {"device": "GPU X", "copy_bw_bytes_per_s": 3e12,
                       "matmul_flops_per_s": 6e14}, "date": "d", "command": "c", "commit": "h",
               "seconds": 1.0, "cases": [
                   {"case": "a", "floor": {"floor_us": 50.0, "bound": "memory"},
                    "torch": {"eager": {"median_us": 100.0}, "compile": {"median_us": 80.0},
                              "compile-max-autotune": {"status": "timeout after 120 s"}},
                    "fusec": {"fused_us": 60.0, "unfused_us": 90.0, "speedup_predicted": 1.6,
                              "speedup_measured": 1.5},
                    "correctness": {"max_rel_err": 3e-3, "tol": 2e-2, "ok": True}},
                   {"case": "b", "floor": {"floor_us": 10.0, "bound": "compute"},
                    "torch": {"eager": {"error": "RuntimeError: | boom"}},
                    "fusec": {"error": "no NVIDIA driver found"},
                    "correctness": {"error": "fusec run: timeout"}}]}
    rows = report.table_rows(results)
    assert rows[0] == ["a", "50.0 (memory)", "100.0", "80.0", "—", "timeout after 120 s",
                       "90.0", "60.0", "83%", "1.33x", "1.60x / 1.50x", "ok 3.0e-03 (tol 2e-02)"]
    assert rows[1][2] == "error: RuntimeError: / boom"
    assert rows[1][6] == rows[1][7] == "error: no NVIDIA driver found"
    assert rows[1][11] == "error: fusec run: timeout"
    page = report.results_page(results)
    assert "GPU X" in page and "| a |" in page and "Command: `c`" in page
    assert len(report.HEADER) == len(rows[0])
    assert harness.select_cases("default")[:2] == ["linear_bias_gelu_residual", "swiglu_ffn"]
    assert harness.select_cases("llama_block_decode_*") == ["llama_block_decode_b1",
                                                            "llama_block_decode_b32"]
    with pytest.raises(SystemExit):
        harness.select_cases("nope")
    floor, dtypes = harness.case_floor(bench_graph("swiglu_ffn"), results["env"])
    assert floor["bound"] == "compute" and dtypes == {"y": "bf16"}
    assert floor["floor_us"] == pytest.approx(3 * 2 * 4096 * 4096 * 11008 / 6e14 * 1e6)


def test_results_json_round_trip(tmp_path):
    results = {"env": {}, "cases": [{"case": "a", "torch": {}, "fusec": {
        "status": "skipped: time budget"}}]}
    src = tmp_path / "r.json"
    src.write_text(json.dumps(results))
    harness.main(["--from-json", str(src), "--out", str(tmp_path / "out")])
    assert (tmp_path / "out" / "results.md").read_text().count("skipped: time budget") == 2
    assert (tmp_path / "out" / "RESULTS.md").exists()
