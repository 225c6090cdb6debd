//===- fusec_module.cpp - fusec for Python: compile, load, call on DLPack -===//
//
// The extension module fusec._fusec (the package's __init__.py re-exports it).
// Tensors cross as DLPack: inputs are any object with __dlpack__ (PyTorch,
// CuPy, JAX arrays) on the GPU, read in place; outputs are fusec.Tensor
// objects in device memory that those libraries take without a copy
// (torch.from_dlpack). Everything else goes through the public C++ API.
//
//===----------------------------------------------------------------------===//
#include <fusec/Runtime.h>
#include <fusec/fusec.h>

#include <dlpack/dlpack.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdlib>
#include <cstring>

namespace py = pybind11;

namespace {

/// fusec.Error: a RuntimeError with the Status's code as `code` (a string).
PyObject *errorType = nullptr;

const char *codeName(fusec::ErrorCode c) {
  switch (c) {
  case fusec::ErrorCode::Ok: return "ok";
  case fusec::ErrorCode::InvalidGraph: return "invalid_graph";
  case fusec::ErrorCode::CompileFailed: return "compile_failed";
  case fusec::ErrorCode::InvalidArgument: return "invalid_argument";
  case fusec::ErrorCode::NoGpu: return "no_gpu";
  case fusec::ErrorCode::WrongArchitecture: return "wrong_architecture";
  case fusec::ErrorCode::RuntimeFailed: return "runtime_failed";
  case fusec::ErrorCode::InvalidArtifact: return "invalid_artifact";
  }
  return "runtime_failed";
}

[[noreturn]] void raise(const fusec::Status &s) {
  py::object e = py::reinterpret_borrow<py::object>(errorType)(s.message());
  e.attr("code") = codeName(s.code());
  PyErr_SetObject(errorType, e.ptr());
  throw py::error_already_set();
}

void check(const fusec::Status &s) {
  if (!s)
    raise(s);
}

[[noreturn]] void invalid(const std::string &message) {
  raise(fusec::Status::error(message, fusec::ErrorCode::InvalidArgument));
}

/// The DLPack type of a fusec dtype.
DLDataType dlType(fusec::DType t) {
  switch (t) {
  case fusec::DType::F32: return {kDLFloat, 32, 1};
  case fusec::DType::F16: return {kDLFloat, 16, 1};
  case fusec::DType::BF16: return {kDLBfloat, 16, 1};
  case fusec::DType::I32: return {kDLInt, 32, 1};
  case fusec::DType::I64: return {kDLInt, 64, 1};
  case fusec::DType::Bool: return {6 /* kDLBool, DLPack 0.8 */, 8, 1};
  }
  return {kDLFloat, 32, 1};
}

bool sameType(DLDataType a, DLDataType b) {
  // Bool is also exported as uint8 by older producers.
  if (b.code == 6 && a.code == kDLUInt && a.bits == 8 && a.lanes == 1)
    return true;
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string specText(const fusec::TensorSpec &t) {
  return std::string(fusec::dtypeName(t.dtype)) + " " + shapeText(t.shape);
}

/// An output of a call: device memory fusec allocated, with its dtype and
/// shape, handed to other libraries through DLPack.
struct Tensor {
  std::shared_ptr<fusec::DeviceMemory> memory;
  fusec::DType dtype;
  std::vector<int64_t> shape;
};

/// What a DLPack capsule of a Tensor owns until its consumer lets go.
struct Exported {
  std::shared_ptr<fusec::DeviceMemory> memory;
  std::vector<int64_t> shape;
  DLManagedTensor managed;
};

void deleteExported(DLManagedTensor *t) { delete static_cast<Exported *>(t->manager_ctx); }

py::capsule toDlpack(const Tensor &t) {
  auto *e = new Exported{t.memory, t.shape, {}};
  DLTensor &d = e->managed.dl_tensor;
  d.data = reinterpret_cast<void *>(t.memory->address());
  d.device = {kDLCUDA, t.memory->device()};
  d.ndim = int(e->shape.size());
  d.dtype = dlType(t.dtype);
  d.shape = e->shape.data();
  d.strides = nullptr;  // compact, row-major
  d.byte_offset = 0;
  e->managed.manager_ctx = e;
  e->managed.deleter = deleteExported;
  // A capsule nobody consumed frees the tensor; a consumer renames it
  // "used_dltensor" and calls the deleter itself.
  return py::capsule(&e->managed, "dltensor", [](PyObject *cap) {
    if (PyCapsule_IsValid(cap, "dltensor")) {
      auto *m = static_cast<DLManagedTensor *>(PyCapsule_GetPointer(cap, "dltensor"));
      if (m && m->deleter)
        m->deleter(m);
    }
  });
}

/// The device address of `obj`, a DLPack-capable tensor that must match
/// `spec` (dtype, shape, compact row-major layout) and live on the GPU.
/// `keep` holds the capsule until the call is enqueued.
uint64_t addressOf(py::handle obj, const fusec::TensorSpec &spec, size_t index, int device,
                   std::vector<py::object> &keep) {
  // Named only where a message needs it: a call builds no strings.
  auto named = [&] { return "input " + std::to_string(index) + " ('" + spec.name + "')"; };
  if (!py::hasattr(obj, "__dlpack__"))
    invalid(named() + " is not a tensor with __dlpack__ (a PyTorch, CuPy or JAX array, or a "
                   "fusec.Tensor)");
  py::object cap = obj.attr("__dlpack__")();
  if (!PyCapsule_IsValid(cap.ptr(), "dltensor"))
    invalid(named() + ": __dlpack__ gave no unconsumed DLPack capsule");
  auto *m = static_cast<DLManagedTensor *>(PyCapsule_GetPointer(cap.ptr(), "dltensor"));
  const DLTensor &d = m->dl_tensor;
  keep.push_back(cap);
  if (d.device.device_type != kDLCUDA)
    invalid(named() + " is not in GPU memory (DLPack device type " +
            std::to_string(int(d.device.device_type)) + "); move it to the GPU first");
  if (d.device.device_id != device)
    invalid(named() + " is on GPU " + std::to_string(d.device.device_id) + ", the graph runs on GPU " +
            std::to_string(device) + " (FUSEC_DEVICE)");
  std::vector<int64_t> shape(d.shape, d.shape + d.ndim);
  if (!sameType(d.dtype, dlType(spec.dtype)) || shape != spec.shape)
    invalid(named() + " is not " + specText(spec) + " (its shape is " + shapeText(shape) + ")");
  if (d.strides) {
    int64_t expect = 1;
    for (int i = d.ndim - 1; i >= 0; --i) {
      if (d.shape[i] != 1 && d.strides[i] != expect)
        invalid(named() + " is not contiguous (row-major); pass x.contiguous()");
      expect *= d.shape[i];
    }
  }
  uint64_t address = reinterpret_cast<uint64_t>(d.data) + d.byte_offset;
  if (address % 16 != 0)
    invalid(named() + " is not 16-byte aligned (a view into another tensor?); pass a copy");
  return address;
}

/// A call of a loaded graph (Program or CompiledGraph) on DLPack tensors.
template <typename G>
py::object call(G &g, py::args args, py::object stream, bool graph) {
  // With its weights bound, a call passes the inputs that are not parameters.
  const auto &all = g.inputs();
  std::vector<size_t> passed;
  for (size_t i = 0; i < all.size(); ++i)
    if (!g.weightsBound() || !g.isParameter(i))
      passed.push_back(i);
  const auto &outs = g.outputs();
  if (args.size() != passed.size()) {
    std::string names;
    for (size_t i : passed)
      names += (names.empty() ? "" : ", ") + all[i].name;
    invalid("the graph takes " + std::to_string(passed.size()) + " input(s) (" + names + ")" +
            (g.weightsBound() ? " besides its bound weights" : "") + ", " +
            std::to_string(args.size()) + " given");
  }
  std::vector<py::object> keep;
  std::vector<uint64_t> in, out;
  // The GPU the graph runs on, as the library picks it ($FUSEC_DEVICE, else
  // 0; a value it refuses fails the allocation below with its message).
  int device = 0;
  if (const char *e = std::getenv("FUSEC_DEVICE"); e && *e)
    device = std::atoi(e);
  for (size_t k = 0; k < passed.size(); ++k) {
    const fusec::TensorSpec &spec = all[passed[k]];
    in.push_back(addressOf(args[k], spec, passed[k], device, keep));
  }
  void *s = stream.is_none() ? nullptr : reinterpret_cast<void *>(stream.cast<uintptr_t>());
  std::vector<Tensor> results;
  for (const auto &t : outs) {
    Tensor r{nullptr, t.dtype, t.shape};
    check(fusec::DeviceMemory::allocate(uint64_t(t.bytes()), r.memory, s));
    out.push_back(r.memory->address());
    results.push_back(std::move(r));
  }
  {
    py::gil_scoped_release unlocked;
    fusec::Status st = graph ? g.replay(in, out, s) : g.run(in, out, s);
    if (!st) {
      py::gil_scoped_acquire locked;
      raise(st);
    }
  }
  if (results.size() == 1)
    return py::cast(std::move(results[0]));
  py::tuple t(results.size());
  for (size_t i = 0; i < results.size(); ++i)
    t[i] = py::cast(std::move(results[i]));
  return t;
}

/// One path or a list of them (a model's shards).
std::vector<std::string> pathList(py::object files) {
  if (py::isinstance<py::str>(files) || py::hasattr(files, "__fspath__"))
    return {py::str(files.attr("__fspath__")()).cast<std::string>()};
  std::vector<std::string> out;
  for (py::handle f : files)
    out.push_back(py::isinstance<py::str>(f) ? f.cast<std::string>()
                                              : py::str(f.attr("__fspath__")()).cast<std::string>());
  return out;
}

template <typename G>
void bindWeights(G &g, py::object files) {
  std::vector<std::string> paths = pathList(files);
  fusec::Status st = fusec::Status::success();
  {
    py::gil_scoped_release unlocked;
    st = g.bindWeights(paths);
  }
  check(std::move(st));
}

py::list specs(const std::vector<fusec::TensorSpec> &v) {
  py::list l;
  for (const auto &t : v)
    l.append(py::make_tuple(t.name, std::string(fusec::dtypeName(t.dtype)), t.shape));
  return l;
}

/// Sizes that vary, Program (max_sizes) and CompiledGraph (an artifact
/// compiled with --max) alike: resize between sizes, and what calls then take.
template <typename Cls>
void addSizes(Cls &cls, const char *resizeDoc) {
  using G = typename Cls::type;
  cls.def("resize",
          [](G &g, py::kwargs sizes) {
            std::map<std::string, int64_t> m;
            for (auto [k, v] : sizes)
              m[py::str(k).cast<std::string>()] = v.template cast<int64_t>();
            fusec::Status st = fusec::Status::success();
            {
              py::gil_scoped_release unlocked;
              st = g.resize(m);
            }
            check(std::move(st));
          },
          resizeDoc)
      .def_property_readonly("sizes", &G::sizes, "the sizes of the names that vary the calls take")
      .def_property_readonly("padded_sizes", &G::paddedSizes,
                             "the padded sizes the program those calls run is compiled at")
      .def("padded_shape", &G::paddedShape, py::arg("i"),
           "input i's shape at the padded sizes the calls run at now")
      .def("set_input_padded",
           [](G &g, size_t i, bool padded) { check(g.setInputPadded(i, padded)); },
           py::arg("i"), py::arg("padded") = true,
           "calls pass input i at padded_shape(i), read in place (a KV cache kept padded, its "
           "rows past the size zero), instead of at the call's sizes, copied");
}

/// What a loaded graph offers, Program and CompiledGraph alike: its
/// parameters, their binding, and the call.
template <typename G>
void addCalls(py::class_<G> &c) {
  c.def("is_parameter", &G::isParameter, py::arg("i"), "whether input i is a parameter (a weight)")
      .def("bind_weights", &bindWeights<G>, py::arg("files"),
           "copy the parameters from safetensors file(s) to the GPU once; later calls pass "
           "only the other inputs")
      .def_property_readonly("weights_bound", &G::weightsBound)
      .def_property_readonly("ranks", &G::ranks, "the ranks (GPUs) the graph is split over")
      .def_property_readonly("rank", &G::rank, "this program's rank in its group, -1 before "
                                               "join_group")
      .def("join_group",
           [](G &g, int rank, py::bytes id) { check(g.joinGroup(rank, std::string(id))); },
           py::arg("rank"), py::arg("group_id"),
           "a split program (ranks > 1), one process a GPU: join the group made by "
           "fusec.new_group_id() in one process as `rank`, on this process's GPU; returns "
           "once every rank has joined. Bind the weights after it: each rank binds its "
           "blocks of the whole weights")
      .def("__call__",
           [](G &g, py::args args, py::object stream, bool graph) {
             return call(g, args, stream, graph);
           },
           py::arg("stream") = py::none(), py::arg("graph") = false,
           "run on GPU tensors (DLPack); returns the output (or a tuple of outputs) as "
           "fusec.Tensor; `stream`: a CUstream handle (default: the legacy default stream); "
           "`graph`: as one CUDA graph launch");
}

} // namespace

PYBIND11_MODULE(_fusec, m) {
  m.doc() = "fusec: a graph-level fusion compiler for NVIDIA GPUs";
  errorType = PyErr_NewException("fusec.Error", PyExc_RuntimeError, nullptr);
  m.attr("Error") = py::handle(errorType);
  m.def("version", &fusec::version, "the library's version");
  m.def(
      "new_group_id",
      [] {
        std::string id;
        check(fusec::Program::newGroupId(id));
        return py::bytes(id);
      },
      "a group id for the ranks of a split program (NCCL's unique id, 128 bytes): make it "
      "in one process and pass it to every rank's join_group");

  py::class_<Tensor>(m, "Tensor", "an output of a call, in GPU memory (DLPack)")
      .def_property_readonly("shape", [](const Tensor &t) { return py::tuple(py::cast(t.shape)); })
      .def_property_readonly("dtype",
                             [](const Tensor &t) { return std::string(fusec::dtypeName(t.dtype)); })
      .def_property_readonly("nbytes", [](const Tensor &t) { return t.memory->bytes(); })
      .def("__dlpack__", [](const Tensor &t, py::object /*stream*/) { return toDlpack(t); },
           py::arg("stream") = py::none(),
           "a DLPack capsule of the tensor (no copy); the work that wrote it was enqueued on "
           "the stream the call used")
      .def("__dlpack_device__",
           [](const Tensor &t) { return py::make_tuple(int(kDLCUDA), t.memory->device()); })
      .def("to_bytes",
           [](const Tensor &t) {
             std::string host(size_t(t.memory->bytes()), '\0');
             check(t.memory->copyToHost(host.data(), host.size()));
             return py::bytes(host);
           },
           "the elements as bytes (row-major, little-endian), copied to the host")
      .def("__repr__", [](const Tensor &t) {
        return "fusec.Tensor(" + std::string(fusec::dtypeName(t.dtype)) + " " +
               shapeText(t.shape) + ")";
      });

  py::class_<fusec::Program> program(m, "Program", "a compiled graph (the JIT: compiler in process)");
  program
      .def_property_readonly("inputs", [](const fusec::Program &p) { return specs(p.inputs()); })
      .def_property_readonly("outputs",
                             [](const fusec::Program &p) { return specs(p.outputs()); })
      .def("kernels",
           [](const fusec::Program &p) {
             py::list l;
             for (const fusec::KernelInfo &k : p.kernels()) {
               py::dict d;
               d["name"] = k.name;
               d["family"] = k.family;
               d["schedule"] = k.schedule;
               d["nodes"] = k.nodes;
               d["bytes"] = k.bytes;
               d["bytes_unfused"] = k.bytesUnfused;
               d["predicted_us"] = k.predictedUs;
               d["unfused_us"] = k.unfusedUs;
               d["source"] = k.source;
               l.append(d);
             }
             return l;
           },
           "each kernel (or library call): family, schedule, graph nodes, HBM bytes, "
           "predicted time, CUDA source")
      .def("fused_mlir", &fusec::Program::fusedMlir, "the fused module as MLIR text")
      .def("load", [](fusec::Program &p) { check(p.load()); },
           "compile the kernels (NVRTC, cached) and load them on the GPU")
      .def("save", [](fusec::Program &p, const std::string &path) { check(p.saveArtifact(path)); },
           py::arg("path"), "write an artifact that fusec.load runs without the compiler")
      .def_property_readonly("compiles", &fusec::Program::compiles,
                             "how many padded sizes have been compiled");
  addSizes(program, "a program compiled with max_sizes: the sizes the calls that follow take "
                    "(resize(S=1000)); compiles the padded size that serves them on its first use");
  addCalls(program);

  py::class_<fusec::CompiledGraph> compiled(m, "CompiledGraph",
                                            "an artifact loaded on the GPU (no compiler involved)");
  compiled
      .def_property_readonly("inputs",
                             [](const fusec::CompiledGraph &g) { return specs(g.inputs()); })
      .def_property_readonly("outputs",
                             [](const fusec::CompiledGraph &g) { return specs(g.outputs()); })
      .def_property_readonly("arch", &fusec::CompiledGraph::arch)
      .def_property_readonly("producer", &fusec::CompiledGraph::producer)
      .def_property_readonly("max_sizes", &fusec::CompiledGraph::maxSizes,
                             "the bounds of the sizes that vary (`fusec compile --max`)");
  addSizes(compiled, "an artifact compiled with --max: the sizes the calls that follow take "
                     "(resize(S=1000)); loads the compile that serves them on its first use");
  addCalls(compiled);

  m.def(
      "compile",
      [](const std::string &path, py::object device, py::object arch, const std::string &gemm,
         bool fuse, std::map<std::string, int64_t> sizes, py::object weights, int ranks,
         std::vector<std::string> shards, std::map<std::string, int64_t> maxSizes) {
        fusec::Options o;
        o.ranks = ranks;
        o.shards = std::move(shards);
        if (!device.is_none())
          o.device = device.cast<std::string>();
        if (!arch.is_none())
          o.arch = arch.cast<std::string>();
        o.gemm = gemm;
        o.fuse = fuse;
        o.sizes = std::move(sizes);
        o.maxSizes = std::move(maxSizes);
        std::unique_ptr<fusec::Program> p;
        check(fusec::Program::compileFile(path, o, p));
        if (!weights.is_none())
          bindWeights(*p, weights);
        return p;
      },
      py::arg("path"), py::kw_only(), py::arg("device") = py::none(),
      py::arg("arch") = py::none(), py::arg("gemm") = "auto", py::arg("fuse") = true,
      py::arg("sizes") = std::map<std::string, int64_t>(), py::arg("weights") = py::none(),
      py::arg("ranks") = 1, py::arg("shards") = std::vector<std::string>(),
      py::arg("max_sizes") = std::map<std::string, int64_t>(),
      "read, fuse and plan a graph (JSON or ONNX); device and arch default to the GPU's; "
      "`weights`: safetensors file(s) bound at once (needs the GPU); `ranks`, `shards`: "
      "split it over GPUs (tensor parallel) as --ranks and --shard NAME=DIM do, the program "
      "being one rank's (join_group); `max_sizes`: named dims that vary from call to call, "
      "with their bounds ({'S': 4096}), as --max does: one program, resize() between sizes");
  m.def(
      "compile_text",
      [](const std::string &json, const std::string &name, py::object arch) {
        fusec::Options o;
        if (!arch.is_none())
          o.arch = arch.cast<std::string>();
        std::unique_ptr<fusec::Program> p;
        check(fusec::Program::compileText(json, name, o, p));
        return p;
      },
      py::arg("json"), py::arg("name") = "graph.json", py::kw_only(),
      py::arg("arch") = py::none(), "compile a graph given as JSON text");
  m.def(
      "load",
      [](const std::string &path, py::object weights) {
        std::unique_ptr<fusec::CompiledGraph> g;
        check(fusec::CompiledGraph::load(path, g));
        if (!weights.is_none())
          bindWeights(*g, weights);
        return g;
      },
      py::arg("path"), py::kw_only(), py::arg("weights") = py::none(),
      "load an artifact (fusec compile -o model.fusec) on the GPU; `weights`: safetensors "
      "file(s) to bind (an artifact may embed its own)");
}
