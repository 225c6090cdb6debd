"""fusec: a graph-level fusion compiler for NVIDIA GPUs.

    import fusec, torch
    program = fusec.compile("model.json")          # read, fuse, plan (no GPU needed)
    y = torch.from_dlpack(program(x))              # x: a CUDA tensor; no copies
    program.save("model.fusec")                    # an artifact ...
    graph = fusec.load("model.fusec")              # ... run without the compiler

Inputs are any GPU tensor with __dlpack__ (PyTorch, CuPy, JAX); outputs are
fusec.Tensor objects in GPU memory that those libraries take with from_dlpack.
Failures raise fusec.Error, whose `code` names the kind (no_gpu,
invalid_graph, ...). docs/python.md. A graph split over GPUs runs one process
a GPU: fusec.compile(path, ranks=N), then join_group(rank, fusec.new_group_id()
made in one process and passed on), then bind_weights (docs/tensor-parallel.md).
"""
from ._fusec import (CompiledGraph, Error, Program, Tensor, compile, compile_text, load,
                     new_group_id, version)

__all__ = ["CompiledGraph", "Error", "Program", "Tensor", "compile", "compile_text", "load",
           "new_group_id", "version"]
__version__ = version()
