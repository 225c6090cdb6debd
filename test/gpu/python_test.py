"""The Python package on the GPU with PyTorch: graphs compiled with fusec.compile,
called on CUDA tensors (DLPack in and out, no copies) and compared with the
same graph run by PyTorch (bench/graph_to_torch.py); the same call as a CUDA
graph and from an artifact (fusec.load) gives the same bits. Exit 77 without
torch or a GPU. Run with PYTHONPATH holding the package (build/python)."""
import json
import os
import sys
import tempfile
import time

try:
    import torch
except ImportError:
    print("SKIP: no torch")
    sys.exit(77)
if not torch.cuda.is_available():
    print("SKIP: no GPU")
    sys.exit(77)

import fusec

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import graph_to_torch as gt  # noqa: E402

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
          "i32": torch.int32, "i64": torch.int64, "bool": torch.bool}


def random_inputs(program, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    xs = []
    for _, dtype, shape in program.inputs:
        if dtype in ("i32", "i64"):
            xs.append(torch.randint(0, 8, shape, generator=g, device="cuda", dtype=DTYPES[dtype]))
        elif dtype == "bool":
            xs.append(torch.rand(shape, generator=g, device="cuda") < 0.5)
        else:
            # Small values, as trained weights have: a product over K stays near 1.
            x = torch.randn(shape, generator=g, device="cuda") * 0.05
            xs.append(x.to(DTYPES[dtype]))
    return xs


def as_tuple(y):
    return y if isinstance(y, tuple) else (y,)


failures = 0


def fail(message):
    global failures
    failures += 1
    print("FAIL " + message)


for name in ["softmax", "rms_norm", "layer_norm", "linear_gelu_residual", "swiglu_ffn",
             "attention_gqa", "log_softmax", "qkv_projection", "llama_decoder_block"]:
    path = os.path.join(ROOT, "examples", name + ".json")
    program = fusec.compile(path)
    xs = random_inputs(program, 7)
    outs = [torch.from_dlpack(t) for t in as_tuple(program(*xs))]
    with open(path) as f:
        reference = gt.TorchGraph(json.load(f))
    expected = as_tuple(reference(*[x.clone() for x in xs]))
    ok = True
    for o, (out, ref) in enumerate(zip(outs, expected)):
        if out.shape != ref.shape or out.dtype != ref.dtype:
            fail(f"{name} output {o}: {out.dtype} {tuple(out.shape)} vs torch "
                 f"{ref.dtype} {tuple(ref.shape)}")
            ok = False
            continue
        if out.dtype.is_floating_point:
            err = ((out.double() - ref.double()).norm() / ref.double().norm().clamp_min(1e-30)).item()
            tol = 1e-5 if out.dtype == torch.float32 else 2e-2
            if not err <= tol:
                fail(f"{name} output {o}: normwise relative error {err:.2e} > {tol}")
                ok = False
        elif not torch.equal(out, ref):
            fail(f"{name} output {o}: integers differ")
            ok = False
    # The same call as one CUDA graph launch, and from an artifact.
    replayed = [torch.from_dlpack(t) for t in as_tuple(program(*xs, graph=True))]
    with tempfile.TemporaryDirectory() as d:
        program.save(os.path.join(d, name + ".fusec"))
        loaded = fusec.load(os.path.join(d, name + ".fusec"))
        from_artifact = [torch.from_dlpack(t) for t in as_tuple(loaded(*xs))]
    for o, out in enumerate(outs):
        if not torch.equal(replayed[o], out):
            fail(f"{name} output {o}: the CUDA graph's bits differ from the direct call's")
            ok = False
        if not torch.equal(from_artifact[o], out):
            fail(f"{name} output {o}: the artifact's bits differ from the JIT's")
            ok = False
    if ok:
        print(f"ok {name}: {len(outs)} output(s) match PyTorch; CUDA graph and artifact identical")

# Outputs are device memory PyTorch reads in place, and fusec reads PyTorch's.
program = fusec.compile(os.path.join(ROOT, "examples", "rms_norm.json"))
xs = random_inputs(program, 1)
y = torch.from_dlpack(program(*xs))
again = torch.from_dlpack(program(y.view(xs[0].shape).contiguous(), *xs[1:]))
if not torch.isfinite(again.float()).all():
    fail("a fusec output fed back as an input")

# Weights bound once: a linear layer whose 86 MiB weight crosses the upload's
# 32 MiB staging buffers in pieces. The call then takes x alone.
def write_safetensors(path, tensors):
    names = {torch.float32: "F32", torch.bfloat16: "BF16", torch.float16: "F16"}
    header, blobs, offset = {}, [], 0
    for key, t in tensors.items():
        raw = t.detach().cpu().contiguous().view(torch.uint8).numpy().tobytes()
        header[key] = {"dtype": names[t.dtype], "shape": list(t.shape),
                       "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little") + text + b"".join(blobs))


linear = {"fusec": 1, "name": "linear",
          "inputs": [{"name": "x", "dtype": "bf16", "shape": [32, 4096]}],
          "parameters": [{"name": "w", "dtype": "bf16", "shape": [4096, 11008]},
                         {"name": "b", "dtype": "bf16", "shape": [11008]}],
          "nodes": [{"name": "xw", "op": "matmul", "inputs": ["x", "w"]},
                    {"name": "y", "op": "add", "inputs": ["xw", "b"]}],
          "outputs": ["y"]}
g = torch.Generator(device="cuda").manual_seed(5)
w = (torch.randn(4096, 11008, generator=g, device="cuda") * 0.02).to(torch.bfloat16)
b = torch.randn(11008, generator=g, device="cuda").to(torch.bfloat16)
x = torch.randn(32, 4096, generator=g, device="cuda").to(torch.bfloat16)
expected = (x.float() @ w.float() + b.float())
with tempfile.TemporaryDirectory() as d:
    write_safetensors(os.path.join(d, "w.safetensors"), {"w": w})
    write_safetensors(os.path.join(d, "b.safetensors"), {"b": b})
    shards = [os.path.join(d, "w.safetensors"), os.path.join(d, "b.safetensors")]
    program = fusec.compile_text(json.dumps(linear), "linear.json")
    t0 = time.perf_counter()
    program.bind_weights(shards)
    bind_ms = (time.perf_counter() - t0) * 1e3
    y = torch.from_dlpack(program(x)).float()
    err = ((y - expected).norm() / expected.norm()).item()
    if not (program.weights_bound and err <= 2e-2):
        fail(f"bound weights: normwise relative error {err:.2e}")
    else:
        print(f"ok bound weights: 86 MiB bound in {bind_ms:.1f} ms (with load), "
              f"error {err:.1e}; the call takes x alone")
    program.save(os.path.join(d, "linear.fusec"))
    loaded = fusec.load(os.path.join(d, "linear.fusec"), weights=shards)
    if not torch.equal(torch.from_dlpack(loaded(x)).float(), y):
        fail("bound weights: the artifact's bits differ from the JIT's")
    try:
        program.bind_weights(shards[:1])
        fail("a missing weight was accepted")
    except fusec.Error as e:
        if "missing weight for parameter 'b'" not in str(e):
            fail(f"a missing weight: {e}")
    try:
        program(x, w, b)
        fail("a call with its bound weights passed again was accepted")
    except fusec.Error as e:
        if "besides its bound weights" not in str(e):
            fail(f"a call with weights again: {e}")

# One program for every length up to a bound (max_sizes): resized, each call
# matches PyTorch at its own length, and a padded size compiles once.
with tempfile.TemporaryDirectory() as d:
    padded_json = {"fusec": 1, "name": "padded", "inputs": [
        {"name": "x", "dtype": "bf16", "shape": [1, 4, "S", 64]}],
        "nodes": [{"name": "e", "op": "exp", "inputs": ["x"]},
                  {"name": "c", "op": "scaled_dot_product_attention", "inputs": ["x", "x", "e"],
                   "attrs": {"causal": True}},
                  {"name": "s", "op": "sum", "inputs": ["e"], "attrs": {"axes": [2]}}],
        "outputs": ["c", "s"]}
    path = os.path.join(d, "padded.json")
    with open(path, "w") as f:
        json.dump(padded_json, f)
    program = fusec.compile(path, max_sizes={"S": 200})
    for size in (77, 90, 200, 1):
        program.resize(S=size)
        if program.sizes != {"S": size} or program.inputs[0][2] != [1, 4, size, 64]:
            fail(f"resize(S={size}): sizes {program.sizes}, inputs {program.inputs}")
        x = torch.rand((1, 4, size, 64), device="cuda").to(torch.bfloat16) - 0.5
        ref = gt.TorchGraph(json.loads(json.dumps(padded_json).replace('"S"', str(size))))(x)
        for graph in (False, True):
            got = as_tuple(program(x, graph=graph))
            for k, (g, r) in enumerate(zip(got, ref)):
                g = torch.from_dlpack(g).float()
                err = ((g - r.float()).norm() / r.float().norm()).item()
                if not err < 1e-2:
                    fail(f"max_sizes S={size} output {k}{' (graph)' if graph else ''}: "
                         f"rel err {err:.2e}")
    if program.compiles != 3:  # 77 and 90 -> 96, 200 -> 200, 1 -> 1
        fail(f"max_sizes: {program.compiles} padded compiles, expected 3")
    print(f"max_sizes: S=77, 90, 200, 1 from {program.compiles} padded compiles")
    # The same from an artifact (every padded size's compile in the file):
    # the bits of the JIT program's at each size.
    program.save(os.path.join(d, "padded.fusec"))
    loaded = fusec.load(os.path.join(d, "padded.fusec"))
    if loaded.max_sizes != {"S": 200} or loaded.sizes != {"S": 200}:
        fail(f"padded artifact: loads at {loaded.sizes} of {loaded.max_sizes}")
    for size in (90, 1, 200, 77):
        program.resize(S=size)
        loaded.resize(S=size)
        x = torch.rand((1, 4, size, 64), device="cuda").to(torch.bfloat16) - 0.5
        for k, (a, b) in enumerate(zip(as_tuple(program(x)), as_tuple(loaded(x)))):
            if not torch.equal(torch.from_dlpack(a), torch.from_dlpack(b)):
                fail(f"padded artifact S={size} output {k}: bits differ from the JIT's")
    try:
        loaded.resize(S=201)
        fail("padded artifact: a size past its bound was accepted")
    except fusec.Error as e:
        if "outside 1..200" not in str(e):
            fail(f"padded artifact, past its bound: {e}")
    print(f"padded artifact: S=90, 1, 200, 77 as the program's, at padded sizes {loaded.padded_sizes}")

# Host time of a call from Python (a decode block: many kernels).
program = fusec.compile(os.path.join(ROOT, "bench", "graphs", "llama_block_decode_b1.json"))
xs = random_inputs(program, 3)
for graph in (False, True):
    for _ in range(5):
        program(*xs, graph=graph)
    torch.cuda.synchronize()
    times, kept = [], []  # outputs kept: freeing one waits for the GPU
    for _ in range(50):
        t0 = time.perf_counter()
        kept.append(program(*xs, graph=graph))
        times.append((time.perf_counter() - t0) * 1e6)
    torch.cuda.synchronize()
    del kept
    times.sort()
    print(f"llama_block_decode_b1 from Python, {'CUDA graph' if graph else 'direct'}: "
          f"median host time of a call {times[len(times) // 2]:.1f} us (outputs allocated)")

print("python package: %d failure(s)" % failures)
sys.exit(1 if failures else 0)
