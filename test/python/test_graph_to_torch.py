"""bench/graph_to_torch.py against hand-computed values, one test per op family (CPU torch)."""
import math
import os
import sys

import pytest

torch = pytest.importorskip("torch")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import graph_to_torch as gt  # noqa: E402

INF, NAN = math.inf, math.nan


def graph(inputs, nodes, outputs):
    return {"fusec": 1, "name": "t", "nodes": nodes, "outputs": outputs,
            "inputs": [{"name": n, "dtype": d, "shape": s} for n, d, s in inputs]}


def node(name, op, inputs, **attrs):
    n = {"name": name, "op": op, "inputs": inputs}
    if attrs:
        n["attrs"] = attrs
    return n


def run(inputs, nodes, outputs, values, **kw):
    return gt.TorchGraph(graph(inputs, nodes, outputs), **kw).run_dict(values)


def t(values, dtype=torch.float32):
    return torch.tensor(values, dtype=dtype)


def close(actual, expected, rel=1e-6):
    expected = torch.as_tensor(expected, dtype=torch.float64)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert torch.allclose(actual.double(), expected, rtol=rel, atol=rel, equal_nan=True), \
        (actual, expected)


def test_unary_float():
    x = [-1.5, -0.5, 0.0, 0.5, 2.0]
    pos = [0.25, 1.0, 4.0]
    ops = {"neg": lambda v: -v, "abs": abs, "relu": lambda v: max(v, 0.0),
           "exp": math.exp, "tanh": math.tanh, "sigmoid": lambda v: 1 / (1 + math.exp(-v)),
           "silu": lambda v: v / (1 + math.exp(-v)), "sin": math.sin, "cos": math.cos,
           "erf": math.erf}
    pos_ops = {"log": math.log, "sqrt": math.sqrt, "rsqrt": lambda v: 1 / math.sqrt(v),
               "reciprocal": lambda v: 1 / v}
    for table, data in ((ops, x), (pos_ops, pos)):
        out = run([("x", "f32", [len(data)])], [node(k, k, ["x"]) for k in table],
                  list(table), {"x": t(data)})
        for k, f in table.items():
            close(out[k], [f(v) for v in data])


def test_gelu_both_forms():
    x = [-2.0, -0.5, 0.0, 1.0, 3.0]
    out = run([("x", "f32", [5])], [node("e", "gelu", ["x"]),
                                    node("h", "gelu", ["x"], approximate="tanh")],
              ["e", "h"], {"x": t(x)})
    close(out["e"], [0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x])
    c = math.sqrt(2 / math.pi)
    close(out["h"], [0.5 * v * (1 + math.tanh(c * (v + 0.044715 * v ** 3))) for v in x])


def test_integer_unary_and_division():
    out = run([("a", "i32", [7]), ("b", "i32", [7])],
              [node("d", "div", ["a", "b"]), node("n", "neg", ["a"]), node("r", "relu", ["a"]),
               node("m", "abs", ["b"])], ["d", "n", "r", "m"],
              {"a": t([7, -7, 7, -7, 5, -2 ** 31, 7], torch.int32),
               "b": t([2, 2, -2, -2, 0, -1, -1], torch.int32)})
    assert out["d"].tolist() == [3, -3, -3, 3, 0, -2 ** 31, -7]  # toward 0; x/0 = 0; wraps
    assert out["n"].tolist() == [-7, 7, -7, 7, -5, -2 ** 31, -7]
    assert out["r"].tolist() == [7, 0, 7, 0, 5, 0, 7]
    assert out["m"].tolist() == [2, 2, 2, 2, 0, 1, 1]
    assert out["d"].dtype == torch.int32


def test_cast():
    x = t([2.7, -2.7, NAN, 1e10, -1e10, 0.0])
    out = run([("x", "f32", [6])],
              [node("i", "cast", ["x"], dtype="i32"), node("l", "cast", ["x"], dtype="i64"),
               node("b", "cast", ["x"], dtype="bool"), node("f", "cast", ["b"], dtype="f32")],
              ["i", "l", "b", "f"], {"x": x})
    assert out["i"].tolist() == [2, -2, 0, 2 ** 31 - 1, -2 ** 31, 0]
    assert out["l"].tolist() == [2, -2, 0, 10 ** 10, -10 ** 10, 0]
    assert out["b"].tolist() == [True, True, True, True, True, False]
    assert out["f"].tolist() == [1.0, 1.0, 1.0, 1.0, 1.0, 0.0]
    # Round to nearest even: 1 + 2^-8 and 1 + 3*2^-8 are halfway between bf16 neighbours.
    r = run([("x", "f32", [2])], [node("y", "cast", ["x"], dtype="bf16")], ["y"],
            {"x": t([1 + 2 ** -8, 1 + 3 * 2 ** -8])})["y"]
    assert r.dtype == torch.bfloat16 and r.float().tolist() == [1.0, 1 + 2 ** -6]


def test_binary_broadcast_and_nan():
    a, b = t([[1.0], [2.0]]), t([10.0, NAN, 30.0])
    ops = ["add", "sub", "mul", "div", "maximum", "minimum", "pow"]
    out = run([("a", "f32", [2, 1]), ("b", "f32", [3])], [node(o, o, ["a", "b"]) for o in ops],
              ops, {"a": a, "b": b})
    A, B = [1.0, 2.0], [10.0, NAN, 30.0]
    ref = {"add": lambda p, q: p + q, "sub": lambda p, q: p - q, "mul": lambda p, q: p * q,
           "div": lambda p, q: p / q, "pow": lambda p, q: p ** q,
           "maximum": lambda p, q: NAN if math.isnan(q) else max(p, q),
           "minimum": lambda p, q: NAN if math.isnan(q) else min(p, q)}
    for o in ops:
        close(out[o], [[ref[o](p, q) for q in B] for p in A])


def test_compare_and_where():
    ops = ["eq", "ne", "lt", "le", "gt", "ge"]
    out = run([("x", "f32", [3]), ("y", "f32", [3])],
              [node(o, o, ["x", "y"]) for o in ops] + [node("w", "where", ["lt", "x", "y"])],
              ops + ["w"], {"x": t([1.0, 2.0, 3.0]), "y": t([2.0, 2.0, 2.0])})
    assert out["eq"].tolist() == [False, True, False]
    assert out["ne"].tolist() == [True, False, True]
    assert out["lt"].tolist() == [True, False, False]
    assert out["le"].tolist() == [True, True, False]
    assert out["gt"].tolist() == [False, False, True]
    assert out["ge"].tolist() == [False, True, True]
    assert out["w"].tolist() == [1.0, 2.0, 2.0]
    # cond [3], a [2, 1], b [3]: all three broadcast to [2, 3].
    out = run([("x", "f32", [3]), ("a", "f32", [2, 1])],
              [node("two", "constant", [], value=2.0), node("c", "gt", ["x", "two"]),
               node("w", "where", ["c", "a", "x"])], ["w"],
              {"x": t([1.0, 2.0, 3.0]), "a": t([[10.0], [20.0]])})
    assert out["w"].tolist() == [[1.0, 2.0, 10.0], [1.0, 2.0, 20.0]]


def test_constant():
    g = graph([], [node("a", "constant", [], value="-inf", dtype="f32", shape=[2]),
                   node("b", "constant", [], value=True, dtype="i32"),
                   node("c", "constant", [], value=1e10, dtype="i32", shape=[1]),
                   node("d", "constant", [], value=2.5),
                   node("e", "constant", [], value="nan", dtype="i32"),
                   dict(node("f", "constant", [], value=3), dtype="bf16", shape=[2, 2]),
                   node("g", "constant", [], value=0, dtype="bool")],
              list("abcdefg"))
    a, b, c, d, e, f, g_ = gt.TorchGraph(g)()
    assert a.tolist() == [-INF, -INF] and a.dtype == torch.float32
    assert b.item() == 1 and b.dtype == torch.int32 and b.shape == ()
    assert c.tolist() == [2 ** 31 - 1]
    assert d.item() == 2.5 and d.dtype == torch.float32 and d.shape == ()
    assert e.item() == 0
    assert f.dtype == torch.bfloat16 and f.tolist() == [[3.0, 3.0], [3.0, 3.0]]
    assert g_.dtype == torch.bool and g_.item() is False


def test_iota():
    # Each element's index along dim, as fusec's iota, compared with a label.
    g = graph([("t", "i32", [2, 1])],
              [node("col", "iota", [], shape=[2, 3], dim=1, dtype="i32"),
               node("hit", "eq", ["col", "t"])], ["col", "hit"])
    col, hit = gt.TorchGraph(g)(torch.tensor([[2], [5]], dtype=torch.int32))
    assert col.tolist() == [[0, 1, 2], [0, 1, 2]] and col.dtype == torch.int32
    assert hit.tolist() == [[False, False, True], [False, False, False]]


def test_reductions():
    x = torch.arange(24, dtype=torch.float32).reshape(2, 3, 4)
    nodes = [node("s", "sum", ["x"], axes=-1), node("sk", "sum", ["x"], axes=[2, 0],
                                                    keepdims=True),
             node("all", "sum", ["x"]), node("mx", "max", ["x"], axes=1),
             node("mn", "min", ["x"], axes=[0, 1]), node("me", "mean", ["x"], axes=[-1, -3])]
    out = run([("x", "f32", [2, 3, 4])], nodes, [n["name"] for n in nodes], {"x": x})
    xs = x.tolist()
    close(out["s"], [[sum(r) for r in m] for m in xs])
    close(out["sk"], [[[sum(xs[i][j][k] for i in range(2) for k in range(4))] for j in range(3)]])
    close(out["all"], sum(range(24)))
    close(out["mx"], [[xs[i][2][k] for k in range(4)] for i in range(2)])
    close(out["mn"], [0.0, 1.0, 2.0, 3.0])
    close(out["me"], [sum(xs[i][j][k] for i in range(2) for k in range(4)) / 8
                      for j in range(3)])
    out = run([("i", "i32", [3]), ("z", "f32", [])],
              [node("s", "sum", ["i"]), node("zs", "sum", ["z"])], ["s", "zs"],
              {"i": t([1, 2, 3], torch.int32), "z": t(5.0)})
    assert out["s"].dtype == torch.int32 and out["s"].item() == 6
    assert out["zs"].item() == 5.0


def test_layout():
    x = torch.arange(12, dtype=torch.float32)
    m = x.reshape(3, 4)
    nodes = [node("r", "reshape", ["x"], shape=[-1, 6]),
             node("m", "reshape", ["x"], shape=[3, 4]),
             node("r3", "reshape", ["x"], shape=[2, 3, 2]),
             node("tr", "transpose", ["m"]),
             node("tp", "transpose", ["r3"], perm=[1, 2, 0]),
             node("bc", "broadcast_to", ["row"], shape=[2, 3]),
             node("s1", "slice", ["x"], starts=[-3], ends=[1000]),
             node("s2", "slice", ["x"], starts=[1], ends=[-1], steps=[3]),
             node("s3", "slice", ["x"], starts=[-100], ends=[2]),
             node("s4", "slice", ["m"], starts=[1], ends=[3], axes=[-1]),
             node("s5", "slice", ["m"], starts=[5], ends=[1]),
             node("cc", "concat", ["m", "m"], axis=-1),
             node("c0", "concat", ["m", "m", "m"])]
    names = [n["name"] for n in nodes]
    out = run([("x", "f32", [12]), ("row", "f32", [3])], nodes, names,
              {"x": x, "row": t([1.0, 2.0, 3.0])})
    close(out["r"], [list(range(6)), list(range(6, 12))])
    close(out["tr"], [[4 * i + j for i in range(3)] for j in range(4)])
    x3 = x.reshape(2, 3, 2).tolist()
    close(out["tp"], [[[x3[k][i][j] for k in range(2)] for j in range(2)] for i in range(3)])
    close(out["bc"], [[1.0, 2.0, 3.0]] * 2)
    close(out["s1"], [9.0, 10.0, 11.0])
    close(out["s2"], [1.0, 4.0, 7.0, 10.0])
    close(out["s3"], [0.0, 1.0])
    close(out["s4"], [[1.0, 2.0], [5.0, 6.0], [9.0, 10.0]])
    assert out["s5"].shape == (0, 4)
    close(out["cc"], [r + r for r in m.tolist()])
    close(out["c0"], m.tolist() * 3)


def test_matmul_forms():
    A, B = t([[1.0, 2.0], [3.0, 4.0]]), t([[5.0, 6.0], [7.0, 8.0]])
    out = run([("a", "f32", [2, 2]), ("b", "f32", [2, 2]), ("v", "f32", [2]),
               ("a3", "f32", [2, 1, 2])],
              [node("ab", "matmul", ["a", "b"]), node("vb", "matmul", ["v", "b"]),
               node("av", "matmul", ["a", "v"]), node("a3b", "matmul", ["a3", "b"])],
              ["ab", "vb", "av", "a3b"],
              {"a": A, "b": B, "v": t([1.0, 1.0]), "a3": t([[[1.0, 2.0]], [[3.0, 4.0]]])})
    close(out["ab"], [[19.0, 22.0], [43.0, 50.0]])
    close(out["vb"], [12.0, 14.0])
    close(out["av"], [3.0, 7.0])
    close(out["a3b"], [[[19.0, 22.0]], [[43.0, 50.0]]])


def test_softmax_family():
    x = t([[0.0, math.log(2), math.log(5)], [1.0, 1.0, 1.0]])
    out = run([("x", "f32", [2, 3])],
              [node("s", "softmax", ["x"]), node("l", "log_softmax", ["x"], axis=-1),
               node("s0", "softmax", ["x"], axis=0)], ["s", "l", "s0"], {"x": x})
    close(out["s"], [[1 / 8, 2 / 8, 5 / 8], [1 / 3] * 3])
    close(out["l"], [[math.log(1 / 8), math.log(2 / 8), math.log(5 / 8)], [math.log(1 / 3)] * 3])
    e = [[math.exp(v) for v in r] for r in x.tolist()]
    close(out["s0"], [[e[i][j] / (e[0][j] + e[1][j]) for j in range(3)] for i in range(2)])


def test_norms_and_linear():
    x = t([[1.0, 2.0, 3.0, 4.0]])
    w, b = t([1.0, 2.0, 1.0, 2.0]), t([0.0, 1.0, 0.0, 1.0])
    out = run([("x", "f32", [1, 4]), ("w", "f32", [4]), ("b", "f32", [4]), ("w2", "f32", [1, 4])],
              [node("ln", "layer_norm", ["x", "w", "b"]),
               node("lb", "layer_norm", ["x", "", "b"], eps=0.0),
               node("la", "layer_norm", ["x", "w2"], axis=-2),
               node("rn", "rms_norm", ["x", "w"]), node("r0", "rms_norm", ["x"], eps=0.5)],
              ["ln", "lb", "la", "rn", "r0"], {"x": x, "w": w, "b": b, "w2": w[None]})
    norm = [(v - 2.5) / math.sqrt(1.25 + 1e-5) for v in (1, 2, 3, 4)]
    close(out["ln"], [[n * wi + bi for n, wi, bi in zip(norm, w.tolist(), b.tolist())]], 1e-5)
    close(out["lb"], [[(v - 2.5) / math.sqrt(1.25) + bi for v, bi in
                       zip((1, 2, 3, 4), b.tolist())]], 1e-5)
    close(out["la"], [[n * wi for n, wi in zip(norm, w.tolist())]], 1e-5)
    r = 1 / math.sqrt(7.5 + 1e-6)
    close(out["rn"], [[v * r * wi for v, wi in zip((1, 2, 3, 4), w.tolist())]], 1e-5)
    close(out["r0"], [[v / math.sqrt(8.0) for v in (1, 2, 3, 4)]], 1e-5)
    out = run([("x", "f32", [1, 2]), ("w", "f32", [3, 2]), ("b", "f32", [3])],
              [node("y", "linear", ["x", "w", "b"]), node("n", "linear", ["x", "w"])],
              ["y", "n"], {"x": t([[1.0, 2.0]]), "w": t([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]),
                           "b": t([10.0, 20.0, 30.0])})
    close(out["y"], [[11.0, 22.0, 33.0]])
    close(out["n"], [[1.0, 2.0, 3.0]])


def attention(inputs, values, **attrs):
    names = [n for n, _, _ in inputs]
    return run(inputs, [node("o", "scaled_dot_product_attention", names, **attrs)], ["o"],
               values)["o"]


def test_attention_masks_and_alignment():
    q = k = t([[1.0, 0.0], [0.0, 1.0]])
    v = t([[1.0], [3.0]])
    e = math.e
    spec = [("q", "f32", [2, 2]), ("k", "f32", [2, 2]), ("v", "f32", [2, 1])]
    qkv = {"q": q, "k": k, "v": v}
    close(attention(spec, qkv, scale=1.0), [[(e + 3) / (e + 1)], [(1 + 3 * e) / (e + 1)]])
    s = math.exp(1 / math.sqrt(2))
    close(attention(spec, qkv), [[(s + 3) / (s + 1)], [(1 + 3 * s) / (s + 1)]])
    causal = [[1.0], [(1 + 3 * e) / (e + 1)]]
    close(attention(spec, qkv, scale=1.0, causal=True), causal)
    bool_mask = t([[True, False], [True, True]], torch.bool)
    close(attention(spec + [("m", "bool", [2, 2])], dict(qkv, m=bool_mask), scale=1.0), causal)
    float_mask = t([[0.0, -INF], [0.0, 0.0]])
    close(attention(spec + [("m", "f32", [2, 2])], dict(qkv, m=float_mask), scale=1.0), causal)
    # causal and a mask together: row 0 keeps key 0 (causal), row 1 keeps key 1 (mask).
    both = t([[True, True], [False, True]], torch.bool)
    close(attention(spec + [("m", "bool", [2, 2])], dict(qkv, m=both), scale=1.0, causal=True),
          [[1.0], [3.0]])
    both_f = t([[0.0, 0.0], [-INF, 0.0]])
    close(attention(spec + [("m", "f32", [2, 2])], dict(qkv, m=both_f), scale=1.0, causal=True),
          [[1.0], [3.0]])
    # L < S: causal is top-left aligned, so query 0 sees key 0 only.
    close(attention([("q", "f32", [1, 2]), ("k", "f32", [2, 2]), ("v", "f32", [2, 1])],
                    {"q": q[:1], "k": k, "v": v}, scale=1.0, causal=True), [[1.0]])
    # Leading dims (3-D and 5-D) go through the 4-D kernels' layout and come back.
    for lead in ([2], [1, 2, 1]):
        shape = lambda x: x.expand(lead + list(x.shape))  # noqa: E731
        out = attention([(n, "f32", lead + list(x.shape)) for n, x in qkv.items()],
                        {n: shape(x) for n, x in qkv.items()}, scale=1.0, causal=True)
        close(out, shape(t(causal)))


def gqa_graph(extra_outputs=()):
    nodes = [node("k1", "reshape", ["k"], shape=[1, 2, 1, 3, 2]),
             node("kx", "broadcast_to", ["k1"], shape=[1, 2, 2, 3, 2]),
             node("kh", "reshape", ["kx"], shape=[1, 4, 3, 2]),
             node("v1", "reshape", ["v"], shape=[1, 2, 1, 3, 2]),
             node("vx", "broadcast_to", ["v1"], shape=[1, 2, 2, 3, 2]),
             node("vh", "reshape", ["vx"], shape=[1, 4, 3, 2]),
             node("o", "scaled_dot_product_attention", ["q", "kh", "vh"], causal=True)]
    return graph([("q", "f32", [1, 4, 3, 2]), ("k", "f32", [1, 2, 3, 2]),
                  ("v", "f32", [1, 2, 3, 2])], nodes, ["o"] + list(extra_outputs))


def test_gqa_rewrite_matches_literal_graph():
    g = torch.Generator().manual_seed(0)
    vals = {n: torch.randn(s, generator=g) for n, s in
            (("q", [1, 4, 3, 2]), ("k", [1, 2, 3, 2]), ("v", [1, 2, 3, 2]))}
    fast, literal = gt.TorchGraph(gqa_graph()), gt.TorchGraph(gqa_graph(), fast_gqa=False)
    assert [s[0] for s in fast.steps] == ["o"]  # the repeats are gone
    assert len(literal.steps) == 7
    ref = torch.nn.functional.scaled_dot_product_attention(
        vals["q"], vals["k"].repeat_interleave(2, 1), vals["v"].repeat_interleave(2, 1),
        is_causal=True)
    close(fast.run_dict(vals)["o"], ref, 1e-5)
    close(literal.run_dict(vals)["o"], ref, 1e-5)
    kept = gt.TorchGraph(gqa_graph(["kh"]))  # a repeat that is an output stays
    assert [s[0] for s in kept.steps] == ["k1", "kx", "kh", "o"]
    close(kept.run_dict(vals)["kh"], vals["k"].repeat_interleave(2, 1))


def test_graph_plumbing():
    g = graph([("x", "f32", [2])], [node("y", "exp", ["x"]), node("dead", "neg", ["x"])],
              ["y", "x", "y"])
    tg = gt.TorchGraph(g)
    assert [s[0] for s in tg.steps] == ["y"]
    y, x, y2 = tg(t([0.0, 1.0]))
    close(y, [1.0, math.e])
    assert y2 is y and x.tolist() == [0.0, 1.0]
    with pytest.raises(TypeError):
        tg()
    with pytest.raises(ValueError, match="no PyTorch mapping"):
        gt.TorchGraph(graph([("x", "f32", [2])], [node("y", "gleu", ["x"])], ["y"]))
    shapes = gt.infer_shapes(graph([("x", "bf16", [4, 6])],
                                   [node("y", "sum", ["x"], axes=0, keepdims=True),
                                    node("z", "lt", ["y", "x"])], ["z"]))
    assert shapes["y"] == ("bf16", [1, 6]) and shapes["z"] == ("bool", [4, 6])
