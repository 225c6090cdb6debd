//===- e2e_padded.cpp - programs over sizes up to a bound on the GPU ------===//
//
// Options::maxSizes: one program resized between sizes, each call checked
// against the interpreter of the graph compiled for its size (outputs
// poisoned first), through run, replay and runHost; a decode step whose
// cache the caller keeps padded, read in place; and the same with its
// weights bound from a file while the program moves between compiles.
//
//===----------------------------------------------------------------------===//
#include "include/fusec/fusec.h"
#include "include/fusec/Runtime.h"
#include "runtime/DeviceBuffers.h"
#include "runtime/Safetensors.h"
#include "runtime/TensorCompare.h"
#include "test/gpu/E2eChecks.h"
#include "compiler/support/LlvmError.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace fusec::e2e {

namespace {

/// Options::maxSizes: one program run at sizes up to its bound through
/// run(), replay() and runHost(), each against the interpreter of the graph
/// compiled for that size; a padded size compiles once.
const char *const kPaddedGraph = R"({"fusec": 1, "name": "padded", "inputs": [
    {"name": "x", "dtype": "bf16", "shape": [1, 4, "S", 64]}],
  "nodes": [{"name": "e", "op": "exp", "inputs": ["x"]},
    {"name": "c", "op": "scaled_dot_product_attention", "inputs": ["x", "x", "e"], "attrs": {"causal": true}},
    {"name": "a", "op": "scaled_dot_product_attention", "inputs": ["x", "e", "e"]},
    {"name": "s", "op": "sum", "inputs": ["e"], "attrs": {"axes": [2]}}],
  "outputs": ["c", "a", "s"]})";

/// Prints a failing check and counts it.
void failed(Tally &t, const std::string &label, const std::string &why) {
  std::printf("FAIL %s: %s\n", label.c_str(), why.c_str());
  ++t.failed;
}

/// The interpreter's outputs for `in` of `json` compiled at `dim` = `size`
/// (not padded): what a padded program must give there.
Status referenceAt(const std::string &json, const char *dim, int64_t size,
                   const std::vector<HostTensor> &in, std::vector<HostTensor> &ref) {
  Options exact;
  exact.sizes = {{dim, size}};
  std::unique_ptr<Program> q;
  if (Status r = Program::compileText(json, "exact.json", exact, q); !r)
    return r;
  return q->evaluateReference(in, ref);
}

/// `json` compiled once for every size of `dim` up to `bound` (maxSizes).
Status compileVarying(const std::string &json, const char *dim, int64_t bound,
                      std::unique_ptr<Program> &p) {
  Options o;
  o.maxSizes = {{dim, bound}};
  return Program::compileText(json, "padded.json", o, p);
}

/// `in` uploaded, the program (or artifact: CompiledGraph) run or replayed
/// on it, and each output against `ref`; "" where all match, else what differs.
template <typename P>
std::string runPaddedCall(CudaDriver &drv, P &p, const std::vector<HostTensor> &in,
                          const std::vector<HostTensor> &ref, bool asGraph) {
  DeviceBuffers din(drv), dout(drv);
  if (llvm::Error err = din.upload(in))
    return llvm::toString(std::move(err));
  if (llvm::Error err = dout.allocatePoisoned(p.outputs()))
    return llvm::toString(std::move(err));
  std::vector<uint64_t> ins(din.pointers().begin(), din.pointers().end());
  std::vector<uint64_t> outs(dout.pointers().begin(), dout.pointers().end());
  if (Status r = asGraph ? p.replay(ins, outs) : p.run(ins, outs); !r)
    return r.message();
  std::vector<HostTensor> got;
  if (llvm::Error err = dout.download(got, p.outputs()))  // synchronous
    return llvm::toString(std::move(err));
  for (size_t k = 0; k < got.size(); ++k)
    if (CheckResult c = compareTensors(got[k], ref[k], -1); !c.pass)
      return std::string(asGraph ? "replay" : "run") + ", output " + std::to_string(k) + ": " +
             c.describe();
  return "";
}

/// runHost, run and replay of `p` on `in`, each output against `ref`; ""
/// where all match, else what differs.
template <typename P>
std::string runEveryWay(CudaDriver &drv, P &p, const std::vector<HostTensor> &in,
                        const std::vector<HostTensor> &ref) {
  std::vector<HostTensor> host;
  if (Status r = p.runHost(in, host); !r)
    return "runHost: " + r.message();
  for (size_t k = 0; k < host.size(); ++k)
    if (CheckResult c = compareTensors(host[k], ref[k], -1); !c.pass)
      return "runHost, output " + std::to_string(k) + ": " + c.describe();
  for (bool asGraph : {false, true})
    if (std::string why = runPaddedCall(drv, p, in, ref, asGraph); !why.empty())
      return why;
  return "";
}

void checkPaddedProgram(CudaDriver &drv, Tally &t) {
  const std::string label = "padded program (maxSizes)";
  if (!selected(label))
    return;
  auto fail = [&](const std::string &why) { failed(t, label, why); };
  std::unique_ptr<Program> p;
  Status s = compileVarying(kPaddedGraph, "S", 300, p);
  if (s)
    s = p->load();
  if (!s)
    return fail(s.message());
  for (int64_t size : {77, 96, 1, 300, 200, 90}) {
    if (Status r = p->resize({{"S", size}}); !r)
      return fail(r.message());
    std::vector<HostTensor> in = p->randomInputs(uint64_t(size)), ref;
    if (Status r = referenceAt(kPaddedGraph, "S", size, in, ref); !r)
      return fail(r.message());
    if (std::string why = runEveryWay(drv, *p, in, ref); !why.empty())
      return fail("S=" + std::to_string(size) + " " + why);
  }
  // 77, 96 and 90 -> 96; 1; 300; 200 -> 256: four compiles.
  if (p->compiles() != 4)
    return fail("expected 4 padded compiles, made " + std::to_string(p->compiles()));
  ++t.passed;
}

/// A decode step over a cache of T rows (kept by the caller in the padded
/// layout and passed in place: setInputPadded) joined with this step's row.
const char *const kPaddedDecode = R"({"fusec": 1, "name": "decode", "inputs": [
    {"name": "x", "dtype": "bf16", "shape": [1, 256]},
    {"name": "w_q", "dtype": "bf16", "shape": [256, 256]},
    {"name": "w_k", "dtype": "bf16", "shape": [64, 256]},
    {"name": "w_v", "dtype": "bf16", "shape": [64, 256]},
    {"name": "cache_k", "dtype": "bf16", "shape": [1, 1, "T", 64]},
    {"name": "cache_v", "dtype": "bf16", "shape": [1, 1, "T", 64]}],
  "nodes": [{"name": "q", "op": "linear", "inputs": ["x", "w_q"]},
    {"name": "k", "op": "linear", "inputs": ["x", "w_k"]},
    {"name": "v", "op": "linear", "inputs": ["x", "w_v"]},
    {"name": "qh", "op": "reshape", "inputs": ["q"], "attrs": {"shape": [1, 4, 1, 64]}},
    {"name": "k_new", "op": "reshape", "inputs": ["k"], "attrs": {"shape": [1, 1, 1, 64]}},
    {"name": "v_new", "op": "reshape", "inputs": ["v"], "attrs": {"shape": [1, 1, 1, 64]}},
    {"name": "ka", "op": "concat", "inputs": ["cache_k", "k_new"], "attrs": {"axis": 2}},
    {"name": "va", "op": "concat", "inputs": ["cache_v", "v_new"], "attrs": {"axis": 2}},
    {"name": "k1", "op": "reshape", "inputs": ["ka"], "attrs": {"shape": [1, 1, 1, -1, 64]}},
    {"name": "k4", "op": "broadcast_to", "inputs": ["k1"], "attrs": {"shape": [1, 1, 4, -1, 64]}},
    {"name": "kh", "op": "reshape", "inputs": ["k4"], "attrs": {"shape": [1, 4, -1, 64]}},
    {"name": "v1", "op": "reshape", "inputs": ["va"], "attrs": {"shape": [1, 1, 1, -1, 64]}},
    {"name": "v4", "op": "broadcast_to", "inputs": ["v1"], "attrs": {"shape": [1, 1, 4, -1, 64]}},
    {"name": "vh", "op": "reshape", "inputs": ["v4"], "attrs": {"shape": [1, 4, -1, 64]}},
    {"name": "a", "op": "scaled_dot_product_attention", "inputs": ["qh", "kh", "vh"]},
    {"name": "af", "op": "reshape", "inputs": ["a"], "attrs": {"shape": [1, 256]}},
    {"name": "out", "op": "add", "inputs": ["x", "af"]}],
  "outputs": ["out", "k_new", "v_new"]})";

/// `t` (its last-but-one dim the call's) in zeros of `padded` (that dim larger).
HostTensor padRows(const HostTensor &t, const std::vector<int64_t> &padded) {
  HostTensor big(t.dtype(), padded);
  const std::vector<int64_t> &s = t.shape();
  const int64_t inner = s.back() * dtypeBytes(t.dtype()), rows = s[s.size() - 2];
  const int64_t outer = t.numel() / (rows * s.back()), prows = padded[padded.size() - 2];
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(big.data() + o * prows * inner, t.data() + o * rows * inner, rows * inner);
  return big;
}

void checkPaddedDecode(CudaDriver &drv, Tally &t) {
  const std::string label = "padded decode (maxSizes, cache in place)";
  if (!selected(label))
    return;
  auto fail = [&](const std::string &why) { failed(t, label, why); };
  std::unique_ptr<Program> p;
  Status s = compileVarying(kPaddedDecode, "T", 1000, p);
  if (s)
    s = p->load();
  for (size_t i : {4, 5})
    if (s)
      s = p->setInputPadded(i);
  if (!s)
    return fail(s.message());
  for (int64_t size : {700, 1, 77, 1000}) {
    if (Status r = p->resize({{"T", size}}); !r)
      return fail(r.message());
    std::vector<HostTensor> in = p->randomInputs(uint64_t(size)), ref;
    if (Status r = referenceAt(kPaddedDecode, "T", size, in, ref); !r)
      return fail(r.message());
    for (size_t i : {4, 5})
      in[i] = padRows(in[i], p->paddedShape(i));
    for (bool asGraph : {false, true})
      if (std::string why = runPaddedCall(drv, *p, in, ref, asGraph); !why.empty())
        return fail("T=" + std::to_string(size) + " " + why);
  }
  ++t.passed;
}

/// The decode step with its projections (w_q ... up to the cache) moved
/// from the inputs to the parameters.
std::string decodeWithParameters() {
  std::string json = kPaddedDecode;
  const std::string from = "{\"name\": \"w_q\"", to = "{\"name\": \"cache_k\"";
  const size_t a = json.find(from), b = json.find(to);
  std::string weightsJson = json.substr(a, b - a);
  json.erase(a, b - a);
  weightsJson.erase(weightsJson.find_last_of(','));  // the list's last entry
  json.insert(json.find("\"nodes\""), "\"parameters\": [" + weightsJson + "],\n  ");
  return json;
}

/// The parameters among `all` (p's inputs) written to `file` as safetensors;
/// "" or what failed.
template <typename P>
std::string writeWeights(const P &p, const std::vector<HostTensor> &all, const std::string &file) {
  TensorMap weights;
  for (size_t i = 0; i < all.size(); ++i)
    if (p.isParameter(i))
      weights[p.inputs()[i].name] = all[i];
  auto bytes = serializeSafetensors(weights);
  if (!bytes)
    return llvm::toString(bytes.takeError());
  FILE *f = std::fopen(file.c_str(), "wb");
  if (!f)
    return "cannot write " + file;
  std::fwrite(bytes->data(), 1, bytes->size(), f);
  std::fclose(f);
  return "";
}

/// `p` (weights bound: `all`'s parameters) resized to T = `size` and called
/// on fresh inputs against the interpreter of `json` at that size, through
/// run, or every way; "" or what failed.
template <typename P>
std::string checkBoundAt(CudaDriver &drv, P &p, const std::string &json,
                         const std::vector<HostTensor> &all, int64_t size, bool everyWay) {
  const std::string at = "T=" + std::to_string(size) + " ";
  if (Status r = p.resize({{"T", size}}); !r)
    return at + r.message();
  std::vector<HostTensor> in = p.randomInputs(uint64_t(size)), ref, call;
  for (size_t i = 0; i < in.size(); ++i)
    if (p.isParameter(i))
      in[i] = all[i];
  if (Status r = referenceAt(json, "T", size, in, ref); !r)
    return at + r.message();
  for (size_t i = 0; i < in.size(); ++i)
    if (!p.isParameter(i))
      call.push_back(in[i]);
  std::string why = everyWay ? runEveryWay(drv, p, call, ref) : runPaddedCall(drv, p, call, ref, false);
  return why.empty() ? why : at + why;
}

/// The decode step with its projections as parameters, bound once from a
/// file, while resize() moves between padded compiles: each compile, also
/// one loaded before the weights were bound, runs with them.
void checkPaddedWeights(CudaDriver &drv, Tally &t) {
  const std::string label = "padded decode with bound weights";
  if (!selected(label))
    return;
  auto fail = [&](const std::string &why) { failed(t, label, why); };
  const std::string json = decodeWithParameters();
  std::unique_ptr<Program> p;
  Status s = compileVarying(json, "T", 1000, p);
  if (s)
    s = p->resize({{"T", 700}});
  if (s)
    s = p->load();
  if (s)
    s = p->resize({{"T", 77}});  // loaded, before the weights
  if (!s)
    return fail(s.message());
  std::vector<HostTensor> all = p->randomInputs(5);
  const std::string file = "/tmp/fusec-e2e-padded-weights.safetensors";
  if (std::string why = writeWeights(*p, all, file); !why.empty())
    return fail(why);
  if (Status r = p->resize({{"T", 700}}); !r)
    return fail(r.message());
  if (Status r = p->bindWeights({file}); !r)
    return fail(r.message());
  for (int64_t size : {77, 700, 3, 77})
    if (std::string why = checkBoundAt(drv, *p, json, all, size, false); !why.empty())
      return fail(why);
  std::remove(file.c_str());
  ++t.passed;
}

/// The decode step with parameters compiled with maxSizes into an artifact
/// (every padded size of T up to 1000), loaded by the runtime alone
/// (CompiledGraph), its weights bound from a file, and resized between
/// compiles: each call through runHost, run and replay against the
/// interpreter of the graph at its size.
void checkPaddedArtifact(CudaDriver &drv, Tally &t) {
  const std::string label = "padded artifact (compile --max, CompiledGraph::resize)";
  if (!selected(label))
    return;
  auto fail = [&](const std::string &why) { failed(t, label, why); };
  const std::string json = decodeWithParameters();
  std::unique_ptr<Program> p;
  Status s = compileVarying(json, "T", 1000, p);
  const std::string path = "/tmp/fusec-e2e-padded.fusec", file = "/tmp/fusec-e2e-padded-art.safetensors";
  if (s)
    s = p->saveArtifact(path);
  if (!s)
    return fail(s.message());
  std::vector<HostTensor> all = p->randomInputs(7);
  if (std::string why = writeWeights(*p, all, file); !why.empty())
    return fail(why);
  std::unique_ptr<CompiledGraph> g;
  if (Status r = CompiledGraph::load(path, g); !r)
    return fail(r.message());
  if (g->maxSizes() != std::map<std::string, int64_t>{{"T", 1000}} ||
      g->sizes() != std::map<std::string, int64_t>{{"T", 1000}})
    return fail("an artifact of T up to 1000 loads at T=1000");
  if (Status r = g->resize({{"T", 77}}); !r)  // loaded before the weights are bound
    return fail(r.message());
  if (Status r = g->bindWeights({file}); !r)
    return fail(r.message());
  if (g->resize({{"T", 1001}}) || g->resize({{"S", 3}}))
    return fail("resize past the bound, or of a name that does not vary, succeeded");
  for (int64_t size : {77, 1000, 1, 700, 77})
    if (std::string why = checkBoundAt(drv, *g, json, all, size, true); !why.empty())
      return fail(why);
  std::remove(file.c_str());
  std::remove(path.c_str());
  ++t.passed;
}

} // namespace

void checkPaddedPrograms(CudaDriver &drv, Tally &t) {
  checkPaddedProgram(drv, t);
  checkPaddedDecode(drv, t);
  checkPaddedWeights(drv, t);
  checkPaddedArtifact(drv, t);
}

} // namespace fusec::e2e
