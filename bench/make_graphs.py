#!/usr/bin/env python3
"""Writes the benchmark graphs in bench/graphs/ (graph format v1).

The seed computations at realistic sizes. Run it after changing a case; the
JSON files are committed so that the suite runs without Python on the host.
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "graphs")


def graph(name, inputs, nodes, outputs, description):
    return {"fusec": 1, "name": name, "description": description,
            "inputs": [{"name": n, "dtype": d, "shape": s} for n, d, s in inputs],
            "nodes": nodes, "outputs": outputs}


def node(name, op, inputs, **attrs):
    n = {"name": name, "op": op, "inputs": inputs}
    if attrs:
        n["attrs"] = attrs
    return n


def memory_bound(m, n, dt="bf16", suffix=""):
    x = ("x", dt, [m, n])
    row = [n]
    g = {}
    g["gelu_bias" + suffix] = graph(
        "gelu_bias" + suffix, [x, ("bias", dt, row)],
        [node("h", "add", ["x", "bias"]), node("y", "gelu", ["h"], approximate="tanh")],
        ["y"], "gelu(x + bias)")
    g["cos" + suffix] = graph("cos" + suffix, [x], [node("y", "cos", ["x"])], ["y"], "cos(x)")
    g["cos_cos" + suffix] = graph(
        "cos_cos" + suffix, [x], [node("c", "cos", ["x"]), node("y", "cos", ["c"])], ["y"],
        "cos(cos(x))")
    g["rms_norm" + suffix] = graph(
        "rms_norm" + suffix, [x, ("w", dt, row)],
        [node("y", "rms_norm", ["x", "w"], eps=1e-6)], ["y"], "rms_norm(x) * w")
    g["add_rms_norm" + suffix] = graph(
        "add_rms_norm" + suffix, [x, ("r", dt, [m, n]), ("w", dt, row)],
        [node("h", "add", ["x", "r"]), node("y", "rms_norm", ["h", "w"], eps=1e-6)],
        ["h", "y"], "h = x + r; y = rms_norm(h) * w (both outputs)")
    g["softmax" + suffix] = graph(
        "softmax" + suffix, [x], [node("y", "softmax", ["x"], axis=-1)], ["y"], "softmax(x, -1)")
    g["log_softmax" + suffix] = graph(
        "log_softmax" + suffix, [x], [node("y", "log_softmax", ["x"], axis=-1)], ["y"],
        "log_softmax(x, -1)")
    g["layer_norm" + suffix] = graph(
        "layer_norm" + suffix, [x, ("w", dt, row), ("b", dt, row)],
        [node("y", "layer_norm", ["x", "w", "b"], axis=-1, eps=1e-5)], ["y"],
        "layer_norm(x) * w + b")
    return g


def gemm_cases():
    """The GEMM-bound seeds: a matmul epilogue, SwiGLU, three sibling projections, attention."""
    g = {}
    m, k, n = 8192, 4096, 8192
    g["linear_bias_gelu_residual"] = graph(
        "linear_bias_gelu_residual",
        [("x", "bf16", [m, k]), ("w", "bf16", [n, k]), ("b", "bf16", [n]),
         ("residual", "bf16", [m, n])],
        [node("h", "linear", ["x", "w", "b"]), node("a", "gelu", ["h"]),
         node("y", "add", ["a", "residual"])],
        ["y"], "gelu(x @ w^T + b) + residual (exact erf gelu); x [8192, 4096], w [8192, 4096]")
    # Epilogues cuBLASLt applies itself: the planner's third choice.
    g["linear_bias_gelu_tanh"] = graph(
        "linear_bias_gelu_tanh",
        [("x", "bf16", [m, k]), ("w", "bf16", [n, k]), ("b", "bf16", [n])],
        [node("h", "linear", ["x", "w", "b"]), node("y", "gelu", ["h"], approximate="tanh")],
        ["y"], "gelu_tanh(x @ w^T + b); x [8192, 4096], w [8192, 4096]: an epilogue cuBLASLt "
        "applies itself")
    g["linear_residual"] = graph(
        "linear_residual",
        [("x", "bf16", [4096, 4096]), ("w", "bf16", [4096, 4096]),
         ("residual", "bf16", [4096, 4096])],
        [node("h", "linear", ["x", "w"]), node("y", "add", ["h", "residual"])],
        ["y"], "x @ w^T + residual, 4096 tokens, 4096 -> 4096 (an attention output projection): "
        "cuBLASLt reads the residual as C")
    t, d, f = 4096, 4096, 11008
    g["swiglu_ffn"] = graph(
        "swiglu_ffn",
        [("x", "bf16", [t, d]), ("w_gate", "bf16", [f, d]), ("w_up", "bf16", [f, d]),
         ("w_down", "bf16", [d, f])],
        [node("gate", "linear", ["x", "w_gate"]), node("up", "linear", ["x", "w_up"]),
         node("gate_act", "silu", ["gate"]), node("hidden", "mul", ["gate_act", "up"]),
         node("y", "linear", ["hidden", "w_down"])],
        ["y"], "SwiGLU FFN: (silu(x w_gate^T) * x w_up^T) w_down^T; 4096 tokens, 4096 -> 11008 "
        "-> 4096")
    g["qkv_projection"] = graph(
        "qkv_projection",
        [("x", "bf16", [4096, 4096]), ("w_q", "bf16", [4096, 4096]),
         ("w_k", "bf16", [1024, 4096]), ("w_v", "bf16", [1024, 4096])],
        [node("q", "linear", ["x", "w_q"]), node("k", "linear", ["x", "w_k"]),
         node("v", "linear", ["x", "w_v"])],
        ["q", "k", "v"], "three sibling projections of one x (GQA sizes): q [4096, 4096], "
        "k and v [4096, 1024]; all outputs")
    # fusec's GEMM alone, against cuBLAS (`fusec bench --gemm fusec`: the
    # unfused plan runs the same matmul through cuBLASLt).
    for (gm, gk, gn) in ((8192, 8192, 8192), (4096, 4096, 11008)):
        name = "gemm_%dx%dx%d" % (gm, gn, gk)
        g[name] = graph(
            name, [("x", "bf16", [gm, gk]), ("w", "bf16", [gn, gk])],
            [node("y", "linear", ["x", "w"])], ["y"],
            "x @ w^T, x [%d, %d], w [%d, %d]" % (gm, gk, gn, gk))
    # Decode linears (Llama-3-8B weights) with their epilogues, M = 1 and 32.
    for rows in (1, 32):
        for (name, n_, k_) in (("qkv", 6144, 4096), ("o_residual", 4096, 4096),
                               ("down_residual", 4096, 14336)):
            ins = [("x", "bf16", [rows, k_]), ("w", "bf16", [n_, k_])]
            nodes = [node("h", "linear", ["x", "w"])]
            out = "h"
            if name.endswith("residual"):
                ins.append(("r", "bf16", [rows, n_]))
                nodes.append(node("y", "add", ["h", "r"]))
                out = "y"
            gname = "decode_%s_m%d" % (name, rows)
            g[gname] = graph(gname, ins, nodes, [out],
                             "decode linear, M=%d: x [%d, %d] @ w^T, w [%d, %d]%s" %
                             (rows, rows, k_, n_, k_, " + residual" if out == "y" else ""))
        # Q, K and V as three weights (as a model stores them), all outputs:
        # one kernel reading x once against three library calls.
        gname = "decode_qkv_split_m%d" % rows
        g[gname] = graph(
            gname, [("x", "bf16", [rows, 4096]), ("w_q", "bf16", [4096, 4096]),
                    ("w_k", "bf16", [1024, 4096]), ("w_v", "bf16", [1024, 4096])],
            [node("q", "linear", ["x", "w_q"]), node("k", "linear", ["x", "w_k"]),
             node("v", "linear", ["x", "w_v"])], ["q", "k", "v"],
            "decode Q/K/V projections, M=%d: x @ w_q^T, x @ w_k^T, x @ w_v^T (three weights)"
            % rows)
        ins = [("x", "bf16", [rows, 4096]), ("w_gate", "bf16", [14336, 4096]),
               ("w_up", "bf16", [14336, 4096])]
        gname = "decode_gate_up_m%d" % rows
        g[gname] = graph(gname, ins,
                         [node("gate", "linear", ["x", "w_gate"]),
                          node("up", "linear", ["x", "w_up"]),
                          node("a", "silu", ["gate"]), node("h", "mul", ["a", "up"])],
                         ["h"], "decode SwiGLU gate/up, M=%d: silu(x w_gate^T) * x w_up^T" % rows)
        # An MLP up projection with bias and erf-gelu (GPT-style sizes): an
        # epilogue cuBLASLt does not apply, so at 32 rows fusec's own kernel
        # (the dot-product kernel's tensor-core form) runs it.
        gname = "decode_fc_gelu_m%d" % rows
        g[gname] = graph(
            gname, [("x", "bf16", [rows, 4096]), ("w", "bf16", [16384, 4096]),
                    ("b", "bf16", [16384])],
            [node("h", "linear", ["x", "w"]), node("hb", "add", ["h", "b"]),
             node("y", "gelu", ["hb"])], ["y"],
            "decode MLP up projection, M=%d: gelu(x @ w^T + b), w [16384, 4096]" % rows)
        # The down projection with silu(gate) * up as its prologue (gate and
        # up as separate activations); beside decode_down_residual, which
        # reads the product from memory.
        gname = "decode_swiglu_down_m%d" % rows
        g[gname] = graph(
            gname, [("gate", "bf16", [rows, 14336]), ("up", "bf16", [rows, 14336]),
                    ("w", "bf16", [4096, 14336]), ("r", "bf16", [rows, 4096])],
            [node("a", "silu", ["gate"]), node("hidden", "mul", ["a", "up"]),
             node("h", "linear", ["hidden", "w"]), node("y", "add", ["h", "r"])], ["y"],
            "decode down projection, M=%d: (silu(gate) * up) @ w^T + residual, "
            "gate and up [%d, 14336], w [4096, 14336]" % (rows, rows))
    # Four decode layers in a row, each with its own weight: what one layer
    # costs inside a stream of layers (a kernel's launch and set-up overlap
    # the previous one's tail), against its time alone between two events.
    # o: four 4096 -> 4096 + residual (32 MB weights); wide: 4096 -> 6144 ->
    # 4096 -> 6144 -> 4096, the Q/K/V weight's size (48 MB).
    for rows in (1, 32):
        gname = "decode_o_chain4_m%d" % rows
        ins = [("x", "bf16", [rows, 4096])] + [("w%d" % i, "bf16", [4096, 4096])
                                               for i in range(4)]
        nodes, prev = [], "x"
        for i in range(4):
            nodes += [node("h%d" % i, "linear", [prev, "w%d" % i]),
                      node("y%d" % i, "add", ["h%d" % i, prev])]
            prev = "y%d" % i
        g[gname] = graph(gname, ins, nodes, [prev],
                         "four decode layers in a row, M=%d: y = y @ w_i^T + y, "
                         "w_i [4096, 4096]" % rows)
        gname = "decode_wide_chain4_m%d" % rows
        widths = [4096, 6144, 4096, 6144, 4096]
        ins = [("x", "bf16", [rows, 4096])] + [("w%d" % i, "bf16", [widths[i + 1], widths[i]])
                                               for i in range(4)]
        nodes, prev = [], "x"
        for i in range(4):
            nodes.append(node("h%d" % i, "linear", [prev, "w%d" % i]))
            prev = "h%d" % i
        g[gname] = graph(gname, ins, nodes, [prev],
                         "four decode layers in a row, M=%d: 4096 -> 6144 -> 4096 -> 6144 "
                         "-> 4096 (48 MB weights, the Q/K/V weight's size)" % rows)
    g["attention"] = graph(
        "attention", [(n_, "bf16", [32, 4096, 128]) for n_ in ("q", "k", "v")],
        [node("o", "scaled_dot_product_attention", ["q", "k", "v"], causal=True)],
        ["o"], "causal sdpa, 32 heads x 4096 tokens x head dim 128, scale 1/sqrt(128)")
    return g


# Llama-3-8B sizes.
HIDDEN, HEADS, KV_HEADS, HEAD_DIM, FFN = 4096, 32, 8, 128, 14336


def llama_weights():
    kv = KV_HEADS * HEAD_DIM
    return [("w_attn_norm", "bf16", [HIDDEN]), ("w_q", "bf16", [HIDDEN, HIDDEN]),
            ("w_k", "bf16", [kv, HIDDEN]), ("w_v", "bf16", [kv, HIDDEN]),
            ("w_o", "bf16", [HIDDEN, HIDDEN]), ("w_ffn_norm", "bf16", [HIDDEN]),
            ("w_gate", "bf16", [FFN, HIDDEN]), ("w_up", "bf16", [FFN, HIDDEN]),
            ("w_down", "bf16", [HIDDEN, FFN])]


def gqa_repeat(src, lead, seq):
    """[*lead, KV_HEADS, seq, HEAD_DIM] -> [*lead, HEADS, seq, HEAD_DIM], each kv head 4 times."""
    rep = HEADS // KV_HEADS
    return [node(src + "_1", "reshape", [src], shape=lead + [KV_HEADS, 1, seq, HEAD_DIM]),
            node(src + "_x4", "broadcast_to", [src + "_1"],
                 shape=lead + [KV_HEADS, rep, seq, HEAD_DIM]),
            node(src + "_heads", "reshape", [src + "_x4"], shape=lead + [HEADS, seq, HEAD_DIM])]


def llama_ffn_tail():
    """o projection, residual, FFN norm, SwiGLU, residual: attn_flat [rows, 4096] -> out."""
    return [node("attn_out", "linear", ["attn_flat", "w_o"]),
            node("r1", "add", ["x", "attn_out"]),
            node("h2", "rms_norm", ["r1", "w_ffn_norm"], eps=1e-5),
            node("ffn_gate", "linear", ["h2", "w_gate"]),
            node("ffn_up", "linear", ["h2", "w_up"]),
            node("ffn_gate_act", "silu", ["ffn_gate"]),
            node("ffn_hidden", "mul", ["ffn_gate_act", "ffn_up"]),
            node("ffn_out", "linear", ["ffn_hidden", "w_down"]),
            node("out", "add", ["r1", "ffn_out"])]


def llama_head():
    return [node("h1", "rms_norm", ["x", "w_attn_norm"], eps=1e-5),
            node("q_proj", "linear", ["h1", "w_q"]),
            node("k_proj", "linear", ["h1", "w_k"]),
            node("v_proj", "linear", ["h1", "w_v"])]


LLAMA = ("Llama-3-8B-style decoder block (hidden 4096, 32 heads, 8 kv heads, head dim 128, "
         "FFN 14336, rms_norm eps 1e-5, SwiGLU, GQA by broadcast); no RoPE. ")


def llama_prefill(t):
    nodes = llama_head()
    for p, heads in (("q", HEADS), ("k", KV_HEADS), ("v", KV_HEADS)):
        nodes += [node(p + "_tokens", "reshape", [p + "_proj"], shape=[t, heads, HEAD_DIM]),
                  node(p + "_cache" if p != "q" else "q_heads", "transpose", [p + "_tokens"],
                       perm=[1, 0, 2])]
    nodes += gqa_repeat("k_cache", [], t) + gqa_repeat("v_cache", [], t)
    nodes += [node("attn", "scaled_dot_product_attention",
                   ["q_heads", "k_cache_heads", "v_cache_heads"], causal=True),
              node("attn_tokens", "transpose", ["attn"], perm=[1, 0, 2]),
              node("attn_flat", "reshape", ["attn_tokens"], shape=[t, HIDDEN])]
    nodes += llama_ffn_tail()
    return graph("llama_block_prefill", [("x", "bf16", [t, HIDDEN])] + llama_weights(), nodes,
                 ["out", "k_cache", "v_cache"],
                 LLAMA + "Prefill of %d tokens, causal attention; outputs the block output and "
                 "the k/v of the tokens in cache layout [8, %d, 128]" % (t, t))


def llama_decode(b, cache):
    kv_shape = [b, KV_HEADS, cache, HEAD_DIM]
    nodes = llama_head()
    nodes += [node("q_heads", "reshape", ["q_proj"], shape=[b, HEADS, 1, HEAD_DIM]),
              node("k_new", "reshape", ["k_proj"], shape=[b, KV_HEADS, 1, HEAD_DIM]),
              node("v_new", "reshape", ["v_proj"], shape=[b, KV_HEADS, 1, HEAD_DIM]),
              node("k_all", "concat", ["cache_k", "k_new"], axis=2),
              node("v_all", "concat", ["cache_v", "v_new"], axis=2)]
    nodes += gqa_repeat("k_all", [b], cache + 1) + gqa_repeat("v_all", [b], cache + 1)
    nodes += [node("attn", "scaled_dot_product_attention",
                   ["q_heads", "k_all_heads", "v_all_heads"]),
              node("attn_flat", "reshape", ["attn"], shape=[b, HIDDEN])]
    nodes += llama_ffn_tail()
    name = "llama_block_decode_b%d" % b
    return graph(name, [("x", "bf16", [b, HIDDEN])] + llama_weights() +
                 [("cache_k", "bf16", kv_shape), ("cache_v", "bf16", kv_shape)], nodes,
                 ["out", "k_new", "v_new"],
                 LLAMA + "Decode: batch %d, one new token per sequence, KV cache of %d tokens "
                 "(inputs cache_k/cache_v [%d, 8, %d, 128]); the new k/v are concatenated on "
                 "the sequence axis and the query attends to all %d keys (no mask); outputs the "
                 "block output and the new k/v" % (b, cache, b, cache, cache + 1))


def row_stats_cases():
    """Log-sum-exp over a product's rows: the logits are the largest tensor and
    only their row max and sum of exponentials are needed."""
    def lse(name, m, n, k, target, description):
        inputs = [("h", "bf16", [m, k]), ("w", "bf16", [n, k])]
        nodes = [node("wt", "transpose", ["w"], perm=[1, 0]),
                 node("logits", "matmul", ["h", "wt"]),
                 node("x", "cast", ["logits"], dtype="f32"),
                 node("mx", "max", ["x"], axes=-1, keepdims=True),
                 node("d", "sub", ["x", "mx"]), node("e", "exp", ["d"]),
                 node("l", "sum", ["e"], axes=-1, keepdims=True),
                 node("logl", "log", ["l"]), node("lse", "add", ["logl", "mx"])]
        outputs = ["lse"]
        if target:
            inputs.append(("target_logit", "f32", [m, 1]))
            nodes.append(node("loss", "sub", ["lse", "target_logit"]))
            outputs = ["loss"]
        return graph(name, inputs, nodes, outputs, description)
    return {
        "lse_retrieval": lse(
            "lse_retrieval", 4096, 131072, 128, False,
            "logsumexp(q @ keys^T, -1): 4096 queries against 131072 keys of 128 "
            "(a contrastive loss's normalizer); the 1 GB of logits need not be written"),
        "cross_entropy_gpt2": lse(
            "cross_entropy_gpt2", 8192, 50257, 768, True,
            "logsumexp(h @ wte^T, -1) - target logit: GPT-2's cross-entropy over its "
            "50257-token vocabulary for 8192 tokens (823 MB of f32-cast bf16 logits)"),
    }


def main():
    os.makedirs(OUT, exist_ok=True)
    graphs = memory_bound(8192, 8192)
    graphs["softmax_dim0"] = graph(
        "softmax_dim0", [("x", "bf16", [8192, 8192])],
        [node("y", "softmax", ["x"], axis=0)], ["y"], "softmax(x, 0): an outer reduction")
    graphs["odd_chain_f32"] = graph(
        "odd_chain_f32", [("x", "f32", [1023, 4097]), ("b", "f32", [4097])],
        [node("h", "add", ["x", "b"]), node("t", "tanh", ["h"]), node("s", "sigmoid", ["x"]),
         node("p", "mul", ["t", "s"]), node("y", "add", ["p", "x"])],
        ["y"], "tanh(x + b) * sigmoid(x) + x on odd f32 sizes")
    # Few long rows: one block per row would leave most SMs idle, so each row
    # is split over several blocks.
    graphs["sum_all"] = graph(
        "sum_all", [("x", "bf16", [8192, 8192])], [node("y", "sum", ["x"])], ["y"],
        "sum(x) over every element: a whole-tensor reduction")
    graphs["mean_rows8"] = graph(
        "mean_rows8", [("x", "bf16", [8, 8388608])], [node("y", "mean", ["x"], axes=-1)], ["y"],
        "mean(x, -1) over 8 rows of 8M elements")
    graphs["mean_pool"] = graph(
        "mean_pool", [("x", "bf16", [32, 512, 4096])], [node("y", "mean", ["x"], axes=[1])],
        ["y"], "mean(x, 1): pooling over 512 tokens, a reduction over a middle dim")
    # A transpose materialized with a bias: the output is contiguous along the
    # input's strided dim.
    graphs["transpose_bias"] = graph(
        "transpose_bias", [("x", "bf16", [8192, 8192]), ("b", "bf16", [8192])],
        [node("xt", "transpose", ["x"]), node("y", "add", ["xt", "b"])], ["y"],
        "transpose(x) + b: a transpose written out")
    # Decode-sized rows: latency, not bandwidth.
    for rows in (1, 32):
        small = memory_bound(rows, 4096, suffix="_%dx4096" % rows)
        for k in ("rms_norm", "softmax", "add_rms_norm", "gelu_bias"):
            graphs[k + "_%dx4096" % rows] = small[k + "_%dx4096" % rows]
    graphs.update(gemm_cases())
    graphs.update(row_stats_cases())
    graphs["llama_block_prefill"] = llama_prefill(4096)
    for b in (1, 32):
        graphs["llama_block_decode_b%d" % b] = llama_decode(b, 4096)
    for name, g in sorted(graphs.items()):
        with open(os.path.join(OUT, name + ".json"), "w") as f:
            json.dump(g, f, indent=2)
            f.write("\n")
    print("wrote %d graphs to %s" % (len(graphs), OUT))


if __name__ == "__main__":
    main()
