"""Turns a fusec JSON graph (docs/graph-format.md, version 1) into a function of torch tensors.

The JSON file is the one source of truth: every op is mapped to the PyTorch call a user would
write, with the semantics the format document gives it (NumPy broadcasting, ONNX slices,
truncating integer division, saturating float->int casts, top-left causal masks).

    g = TorchGraph(load_graph("bench/graphs/swiglu_ffn.json"))
    (y,) = g(x, w_gate, w_up, w_down)          # inputs in graph order, outputs as a tuple
    outs = g.run_dict({"x": x, ...})           # or by name

One rewrite is made, because it is what a PyTorch user writes: grouped-query attention
spelled as reshape -> broadcast_to -> reshape of k and v (each kv head repeated) is handed to
scaled_dot_product_attention(..., enable_gqa=True) on the un-repeated k and v
(`fast_gqa=False` keeps the literal graph). Nodes that nothing needs afterwards are dropped.
"""
import functools
import json
import math

import torch
import torch.nn.functional as F

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
          "i32": torch.int32, "i64": torch.int64, "bool": torch.bool}
DTYPE_NAMES = {v: k for k, v in DTYPES.items()}
VIEW_OPS = ("reshape", "transpose", "broadcast_to", "slice")


def load_graph(path):
    with open(path) as f:
        return json.load(f)


# ---------------------------------------------------------------------------------------------
# Elementwise
# ---------------------------------------------------------------------------------------------

def _float_to_int(x, dtype):
    """Truncates toward zero, saturates, NaN -> 0 (float64 holds every i32 exactly)."""
    info = torch.iinfo(dtype)
    r = x.double()
    top = float(info.max) if dtype == torch.int32 else 9223372036854774784.0  # < 2^63
    out = r.clamp(float(info.min), top).trunc().to(dtype)
    if dtype == torch.int64:
        out = torch.where(r >= 2.0 ** 63, torch.full_like(out, info.max), out)
    return torch.where(torch.isnan(r), torch.zeros_like(out), out)


def cast(x, dtype):
    if x.dtype == dtype:
        return x
    if dtype == torch.bool:
        return x != 0
    if x.is_floating_point() and not dtype.is_floating_point:
        return _float_to_int(x, dtype)
    return x.to(dtype)


def relu(x):
    return torch.clamp_min(x, 0)


def div(a, b):
    if a.is_floating_point():
        return torch.div(a, b)
    # Integers: truncate toward zero, x / 0 = 0; x / -1 is negation (wraps, never traps).
    special = (b == 0) | (b == -1)
    q = torch.div(a, torch.where(special, torch.ones_like(b), b), rounding_mode="trunc")
    q = torch.where(b == -1, torch.neg(a), q)
    return torch.where(b == 0, torch.zeros_like(q), q)


UNARY = {"neg": torch.neg, "abs": torch.abs, "relu": relu, "exp": torch.exp, "log": torch.log,
         "sqrt": torch.sqrt, "rsqrt": torch.rsqrt, "reciprocal": torch.reciprocal,
         "tanh": torch.tanh, "sigmoid": torch.sigmoid, "silu": F.silu, "sin": torch.sin,
         "cos": torch.cos, "erf": torch.erf}
BINARY = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": div, "pow": torch.pow,
          "maximum": torch.maximum, "minimum": torch.minimum, "eq": torch.eq, "ne": torch.ne,
          "lt": torch.lt, "le": torch.le, "gt": torch.gt, "ge": torch.ge}


def constant(value, dtype, shape, device):
    """Every element holds value, converted to dtype as by cast."""
    if isinstance(value, str):
        value = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}[value]
    if isinstance(value, bool):
        src = torch.full(shape, value, dtype=torch.bool, device=device)
    elif isinstance(value, int) and dtype in (torch.int32, torch.int64):
        return torch.full(shape, value, dtype=dtype, device=device)
    else:
        src = torch.full(shape, float(value), dtype=torch.float64, device=device)
    return cast(src, dtype)


def iota(shape, dim, dtype, device):
    """Each element's index along dim (a broadcast view, as fusec's iota)."""
    view = [1] * len(shape)
    view[dim] = shape[dim]
    return torch.arange(shape[dim], dtype=dtype, device=device).reshape(view).expand(shape)


# ---------------------------------------------------------------------------------------------
# Reductions and layout
# ---------------------------------------------------------------------------------------------

def _axes(attrs, rank):
    axes = attrs.get("axes")
    if axes is None:
        return tuple(range(rank))
    axes = [axes] if isinstance(axes, int) else axes
    return tuple(sorted(a % rank for a in axes))


def reduce(op, x, axes, keepdims):
    if not axes:  # a scalar: nothing to reduce (torch would read dim=() as "all")
        return x
    if op == "sum":
        return torch.sum(x, dim=axes, keepdim=keepdims).to(x.dtype)
    if op == "mean":
        return torch.mean(x, dim=axes, keepdim=keepdims)
    fn = torch.amax if op == "max" else torch.amin
    return fn(x, dim=axes, keepdim=keepdims)


def slice_onnx(x, starts, ends, axes, steps):
    index = [slice(None)] * x.dim()
    for start, end, axis, step in zip(starts, ends, axes, steps):
        d = x.shape[axis]
        start = min(max(start + d if start < 0 else start, 0), d)
        end = min(max(end + d if end < 0 else end, 0), d)
        index[axis] = slice(start, end, step)
    return x[tuple(index)]


def layer_norm(x, weight=None, bias=None, *, axis=-1, eps=1e-5):
    return F.layer_norm(x, x.shape[axis % x.dim():], weight, bias, eps)


def rms_norm(x, weight=None, *, eps=1e-6):
    return F.rms_norm(x, (x.shape[-1],), weight, eps)


# ---------------------------------------------------------------------------------------------
# Attention
# ---------------------------------------------------------------------------------------------

def _as_4d(t):
    if t.dim() == 4:
        return t
    if t.dim() < 4:
        return t.reshape((1,) * (4 - t.dim()) + tuple(t.shape))
    return t.reshape((-1,) + tuple(t.shape[-3:]))


def sdpa(q, k, v, mask=None, *, causal=False, scale=None, gqa=False):
    """softmax(q k^T * scale + mask) v; bool mask: false = masked; causal: key j > query i."""
    if causal and mask is not None:  # PyTorch takes one or the other: combine them here
        L, S = q.shape[-2], k.shape[-2]
        keep = torch.ones(L, S, dtype=torch.bool, device=q.device).tril()
        mask = mask & keep if mask.dtype == torch.bool else \
            torch.where(keep, mask, torch.full((), -math.inf, dtype=mask.dtype, device=q.device))
        causal = False
    extra = {"enable_gqa": True} if gqa else {}
    lead = tuple(q.shape[:-2])
    same_lead = gqa or (tuple(k.shape[:-2]) == lead and tuple(v.shape[:-2]) == lead)
    if q.dim() == 4 or not same_lead:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal,
                                              scale=scale, **extra)
    # The fused kernels want [batch, heads, seq, dim]: fold the leading dims into that form.
    if mask is not None:
        if mask.dim() > 4:
            mask = mask.expand(lead + tuple(mask.shape[-2:]))
        mask = _as_4d(mask)
    o = F.scaled_dot_product_attention(_as_4d(q), _as_4d(k), _as_4d(v), attn_mask=mask,
                                       is_causal=causal, scale=scale, **extra)
    return o.reshape(lead + (q.shape[-2], v.shape[-1]))


# ---------------------------------------------------------------------------------------------
# Graph -> steps
# ---------------------------------------------------------------------------------------------

def op_function(node):
    """The torch callable for one node; its positional arguments are the node's operands."""
    op, a = node["op"], node.get("attrs", {})
    if op in UNARY:
        return UNARY[op]
    if op in BINARY:
        return BINARY[op]
    if op == "gelu":
        return functools.partial(F.gelu, approximate=a.get("approximate", "none"))
    if op == "cast":
        return functools.partial(cast, dtype=DTYPES[a["dtype"]])
    if op == "where":
        return torch.where
    if op == "constant":
        dtype = DTYPES[a.get("dtype", node.get("dtype", "f32"))]
        shape = tuple(a.get("shape", node.get("shape", [])))
        return functools.partial(constant, a["value"], dtype, shape)
    if op == "iota":
        return functools.partial(iota, tuple(a["shape"]), a.get("dim", 0),
                                 DTYPES[a.get("dtype", "i64")])
    if op in ("sum", "mean", "max", "min"):
        keep = a.get("keepdims", False)
        return lambda x: reduce(op, x, _axes(a, x.dim()), keep)
    if op == "reshape":
        return lambda x: x.reshape(a["shape"])
    if op == "transpose":
        return lambda x: x.permute(a["perm"] if "perm" in a else tuple(range(x.dim()))[::-1])
    if op == "broadcast_to":
        return lambda x: x.broadcast_to(a["shape"])
    if op == "slice":
        def sliced(x):
            n = len(a["starts"])
            axes = [ax % x.dim() for ax in a.get("axes", range(n))]
            return slice_onnx(x, a["starts"], a["ends"], axes, a.get("steps", [1] * n))
        return sliced
    if op == "concat":
        return lambda *xs: torch.cat(xs, dim=a.get("axis", 0))
    if op == "matmul":
        return torch.matmul
    if op in ("softmax", "log_softmax"):
        fn = F.softmax if op == "softmax" else F.log_softmax
        return functools.partial(fn, dim=a.get("axis", -1))
    if op == "layer_norm":
        return functools.partial(layer_norm, axis=a.get("axis", -1), eps=a.get("eps", 1e-5))
    if op == "rms_norm":
        return functools.partial(rms_norm, eps=a.get("eps", 1e-6))
    if op == "linear":
        return F.linear
    if op == "scaled_dot_product_attention":
        return functools.partial(sdpa, causal=a.get("causal", False), scale=a.get("scale"))
    raise ValueError("node '%s': op '%s' has no PyTorch mapping" % (node["name"], op))


class TorchGraph:
    """A JSON graph as a callable on torch tensors (inputs in graph order)."""

    def __init__(self, graph, fast_gqa=True):
        self.graph = graph
        self.name = graph.get("name", "graph")
        self.input_names = [t["name"] for t in graph["inputs"]]
        self.output_names = list(graph["outputs"])
        self.nodes = {n["name"]: n for n in graph["nodes"]}
        # (name, callable, operand names, takes_device); operands "" are left out (None).
        self.steps = [(n["name"], op_function(n), list(n.get("inputs", [])),
                       n["op"] in ("constant", "iota")) for n in graph["nodes"]]
        self.shapes = None
        if fast_gqa:
            self.shapes = infer_shapes(self)
            self._rewrite_gqa()
        self._drop_dead_steps()
        self._compile_slots()

    # -- rewrites -------------------------------------------------------------------------

    def _gqa_source(self, name):
        """For name = reshape(broadcast_to(reshape(src))) repeating heads: (src, repeat)."""
        chain, cur = [], name
        for op in ("reshape", "broadcast_to", "reshape"):
            node = self.nodes.get(cur)
            if node is None or node["op"] != op:
                return None
            chain.append(cur)
            cur = node["inputs"][0]
        src = self.shapes[cur][1]
        if len(src) < 3:
            return None
        *lead, kv, s, e = src
        repeated, widened, one = (self.shapes[n][1] for n in chain)
        rep = widened[-3] if len(widened) == len(src) + 1 else 0
        if one != lead + [kv, 1, s, e] or widened != lead + [kv, rep, s, e] or \
                repeated != lead + [kv * rep, s, e] or rep < 2:
            return None
        return cur, rep

    def _rewrite_gqa(self):
        for i, (name, fn, ins, takes_device) in enumerate(self.steps):
            if self.nodes[name]["op"] != "scaled_dot_product_attention":
                continue
            k, v = self._gqa_source(ins[1]), self._gqa_source(ins[2])
            if k and v and k[1] == v[1]:
                self.steps[i] = (name, functools.partial(fn, gqa=True),
                                 [ins[0], k[0], v[0]] + ins[3:], takes_device)

    def _drop_dead_steps(self):
        live = set(self.output_names)
        kept = []
        for step in reversed(self.steps):
            if step[0] in live:
                kept.append(step)
                live.update(n for n in step[2] if n)
        self.steps = kept[::-1]

    def _compile_slots(self):
        slot = {n: i for i, n in enumerate(self.input_names)}
        self._program = []
        for name, fn, ins, dev in self.steps:
            self._program.append((len(slot), fn, [slot[n] if n else None for n in ins], dev))
            slot[name] = len(slot)
        self._outputs = [slot[n] for n in self.output_names]
        self._num_slots = len(slot)

    # -- running --------------------------------------------------------------------------

    def __call__(self, *inputs):
        if len(inputs) != len(self.input_names):
            raise TypeError("%s takes %d inputs, got %d" % (self.name, len(self.input_names),
                                                            len(inputs)))
        values = list(inputs) + [None] * (self._num_slots - len(inputs))
        device = inputs[0].device if inputs else torch.device("cpu")
        for out, fn, ins, takes_device in self._program:
            if takes_device:
                values[out] = fn(device)
            else:
                values[out] = fn(*[values[i] if i is not None else None for i in ins])
        return tuple(values[i] for i in self._outputs)

    def run_dict(self, inputs):
        outs = self(*[inputs[n] for n in self.input_names])
        return dict(zip(self.output_names, outs))


def infer_shapes(graph):
    """{name: (dtype name, shape)} for every input and node, evaluated on the meta device."""
    g = graph if isinstance(graph, TorchGraph) else TorchGraph(graph, fast_gqa=False)
    if g.shapes is not None:
        return g.shapes
    values = {t["name"]: torch.empty(t["shape"], dtype=DTYPES[t["dtype"]], device="meta")
              for t in g.graph["inputs"]}
    for name, fn, ins, takes_device in g.steps:
        values[name] = fn(torch.device("meta")) if takes_device else \
            fn(*[values[n] if n else None for n in ins])
    return {n: (DTYPE_NAMES[t.dtype], list(t.shape)) for n, t in values.items()}
