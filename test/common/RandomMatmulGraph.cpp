//===- RandomMatmulGraph.cpp - random GEMM + epilogue graphs --------------===//
#include "test/common/RandomGraph.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <vector>

namespace fusec::test {

std::string randomMatmulGraph(uint64_t seed, bool libraryEpilogue) {
  using Json = nlohmann::json;
  Rng rng{seed * 6364136223846793005ull + 1442695040888963407ull};
  auto pick = [&](int n) { return rng.pick(n); };
  const std::vector<int64_t> sizes = {1, 3, 8, 16, 33, 64, 100, 128, 257, 520};
  int64_t m = sizes[pick(sizes.size())], n = sizes[pick(sizes.size())];
  int64_t k = std::vector<int64_t>{8, 16, 24, 64, 136, 512, 7, 33}[pick(8)];
  std::string dt = pick(2) ? "bf16" : "f16";
  std::vector<int64_t> batch;
  if (pick(3) == 0)
    batch = pick(2) ? std::vector<int64_t>{3} : std::vector<int64_t>{2, 2};
  auto with = [&](std::vector<int64_t> tail) {
    std::vector<int64_t> r = batch;
    r.insert(r.end(), tail.begin(), tail.end());
    return r;
  };
  Json g;
  g["fusec"] = 1;
  g["name"] = "random_matmul_" + std::to_string(seed);
  Json inputs = Json::array(), nodes = Json::array();
  // A: M x K, or stored K x M and transposed; B: K x N, or stored N x K
  // (a linear layer's weight, shared by every batch) and transposed.
  bool transA = pick(3) == 0, transB = pick(2) == 0, sharedB = pick(2) == 0;
  std::vector<int64_t> permA, permB;
  inputs.push_back({{"name", "a"}, {"dtype", dt}, {"shape", transA ? with({k, m}) : with({m, k})}});
  std::vector<int64_t> bShape = transB ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n};
  inputs.push_back({{"name", "b"}, {"dtype", dt}, {"shape", sharedB ? bShape : with(bShape)}});
  auto perm = [](size_t rank) {
    std::vector<int64_t> p;
    for (size_t i = 0; i < rank; ++i)
      p.push_back(i);
    std::swap(p[rank - 1], p[rank - 2]);
    return p;
  };
  std::string aName = "a", bName = "b";
  if (transA) {
    nodes.push_back({{"name", "at"}, {"op", "transpose"}, {"inputs", {"a"}},
                     {"attrs", {{"perm", perm(batch.size() + 2)}}}});
    aName = "at";
  }
  if (transB) {
    nodes.push_back({{"name", "bt"}, {"op", "transpose"}, {"inputs", {"b"}},
                     {"attrs", {{"perm", perm(sharedB ? 2 : batch.size() + 2)}}}});
    bName = "bt";
  }
  nodes.push_back({{"name", "mm"}, {"op", "matmul"}, {"inputs", {aName, bName}}});
  std::string cur = "mm";
  Json outputs = Json::array();
  if (libraryEpilogue) {
    // What cuBLASLt's epilogues express: a scale by a constant, then a
    // residual and/or a bias in either order, then gelu(tanh).
    auto node = [&](const std::string &name, const char *op, Json ins, Json attrs = nullptr) {
      Json n = {{"name", name}, {"op", op}, {"inputs", ins}};
      if (!attrs.is_null())
        n["attrs"] = attrs;
      nodes.push_back(n);
      cur = name;
    };
    if (pick(2)) {
      nodes.push_back({{"name", "alpha"}, {"op", "constant"},
                       {"attrs", {{"value", std::vector<double>{0.5, 0.125, 2.0}[pick(3)]},
                                  {"dtype", dt}}}});
      node("scaled", "mul", {cur, "alpha"});
    }
    bool residualFirst = pick(2);
    int adds = 1 + pick(3);  // 1 residual, 2 bias, 3 both
    for (int i = 0; i < 2; ++i) {
      bool residual = (i == 0) == residualFirst;
      if (!(adds & (residual ? 1 : 2)))
        continue;
      std::string in = residual ? "res" : "bias";
      inputs.push_back({{"name", in}, {"dtype", dt},
                        {"shape", residual ? with({m, n}) : std::vector<int64_t>{n}}});
      node("plus_" + in, "add", {cur, in});
    }
    if (pick(2))
      node("act", "gelu", {cur}, {{"approximate", "tanh"}});
    outputs.push_back(cur);
    g["inputs"] = inputs;
    g["nodes"] = nodes;
    g["outputs"] = outputs;
    return g.dump(2);
  }
  // An epilogue of 0-4 elementwise ops, some with operands read from memory.
  int steps = pick(5);
  for (int i = 0; i < steps; ++i) {
    std::string name = "e" + std::to_string(i);
    switch (pick(8)) {
    case 0:
      inputs.push_back({{"name", "bias" + std::to_string(i)}, {"dtype", dt}, {"shape", {n}}});
      nodes.push_back({{"name", name}, {"op", "add"}, {"inputs", {cur, "bias" + std::to_string(i)}}});
      break;
    case 1:
      inputs.push_back({{"name", "res" + std::to_string(i)}, {"dtype", dt}, {"shape", with({m, n})}});
      nodes.push_back({{"name", name}, {"op", "add"}, {"inputs", {cur, "res" + std::to_string(i)}}});
      break;
    case 2:
      nodes.push_back({{"name", name}, {"op", "gelu"}, {"inputs", {cur}}});
      break;
    case 3:
      nodes.push_back({{"name", name}, {"op", "silu"}, {"inputs", {cur}}});
      break;
    case 4:
      nodes.push_back({{"name", name}, {"op", "relu"}, {"inputs", {cur}}});
      break;
    case 5:
      inputs.push_back({{"name", "scale" + std::to_string(i)}, {"dtype", dt}, {"shape", with({m, 1})}});
      nodes.push_back({{"name", name}, {"op", "mul"}, {"inputs", {cur, "scale" + std::to_string(i)}}});
      break;
    case 6:
      nodes.push_back({{"name", name}, {"op", "tanh"}, {"inputs", {cur}}});
      break;
    default:
      // A second output: the value so far.
      outputs.push_back(cur);
      nodes.push_back({{"name", name}, {"op", "sigmoid"}, {"inputs", {cur}}});
      break;
    }
    cur = name;
  }
  if (pick(4) == 0) {
    nodes.push_back({{"name", "out_f32"}, {"op", "cast"}, {"inputs", {cur}},
                     {"attrs", {{"dtype", "f32"}}}});
    cur = "out_f32";
  }
  // A prologue on A and/or B as stored, drawn last so that every other draw
  // (shapes, layouts, epilogue) is what it was before prologues existed. Its
  // ops go in front; the stored operand's name now means their result.
  Json prologue = Json::array();
  auto addPrologue = [&](const std::string &x) {
    auto it = std::find_if(inputs.begin(), inputs.end(),
                           [&](const Json &in) { return in["name"] == x; });
    std::vector<int64_t> shape = (*it)["shape"].get<std::vector<int64_t>>();
    std::string stored = x + "_in", v = stored;
    (*it)["name"] = stored;
    int ops = 1 + pick(2);
    for (int i = 0; i < ops; ++i) {
      std::string name = i + 1 == ops ? x : x + "_p" + std::to_string(i);
      switch (pick(5)) {
      case 0:  // a scale along the rows (one per column)
        inputs.push_back({{"name", name + "_scale"}, {"dtype", dt},
                          {"shape", std::vector<int64_t>{shape.back()}}});
        prologue.push_back({{"name", name}, {"op", "mul"}, {"inputs", {v, name + "_scale"}}});
        break;
      case 1:
        inputs.push_back({{"name", name + "_plus"}, {"dtype", dt}, {"shape", shape}});
        prologue.push_back({{"name", name}, {"op", "add"}, {"inputs", {v, name + "_plus"}}});
        break;
      case 2:
        prologue.push_back({{"name", name}, {"op", "silu"}, {"inputs", {v}}});
        break;
      case 3:
        prologue.push_back({{"name", name}, {"op", "relu"}, {"inputs", {v}}});
        break;
      default:  // stored in f32, cast to the matmul's type
        if (v == stored)
          (*it)["dtype"] = "f32";
        else
          prologue.push_back({{"name", name + "_wide"}, {"op", "cast"}, {"inputs", {v}},
                              {"attrs", {{"dtype", "f32"}}}});
        prologue.push_back({{"name", name}, {"op", "cast"},
                            {"inputs", {v == stored ? v : name + "_wide"}},
                            {"attrs", {{"dtype", dt}}}});
        break;
      }
      v = name;
    }
  };
  if (pick(3) == 0)
    addPrologue("a");
  if (pick(4) == 0)
    addPrologue("b");
  nodes.insert(nodes.begin(), prologue.begin(), prologue.end());
  outputs.push_back(cur);
  g["inputs"] = inputs;
  g["nodes"] = nodes;
  g["outputs"] = outputs;
  return g.dump(2);
}

/// A graph input's JSON: {"name": ..., "dtype": ..., "shape": [shape]}.
static std::string tensorJson(const std::string &name, const std::string &dtype,
                              const std::string &shape) {
  return "{\"name\": \"" + name + "\", \"dtype\": \"" + dtype + "\", \"shape\": [" + shape +
         "]}";
}

std::string linearGeluGraph(int m, int n, int k, const std::string &dtype, bool residual) {
  auto tensor = [&](const char *name, const std::string &shape) {
    return tensorJson(name, dtype, shape);
  };
  std::string M = std::to_string(m), N = std::to_string(n), K = std::to_string(k);
  return "{\"fusec\": 1, \"name\": \"gemm_tiles\", \"inputs\": [" + tensor("x", M + ", " + K) +
         ", " + tensor("w", N + ", " + K) + ", " + tensor("b", N) +
         (residual ? ", " + tensor("r", M + ", " + N) : "") +
         "], \"nodes\": ["
         "{\"name\": \"h\", \"op\": \"linear\", \"inputs\": [\"x\", \"w\", \"b\"]}, "
         "{\"name\": \"y\", \"op\": \"gelu\", \"inputs\": [\"h\"]}" +
         (residual ? ", {\"name\": \"z\", \"op\": \"add\", \"inputs\": [\"y\", \"r\"]}" : "") +
         "], \"outputs\": [\"" + (residual ? "z" : "y") + "\"]}";
}

std::string swigluGraph(int m, int n, int k, const std::string &dtype, bool residual) {
  auto tensor = [&](const char *name, const std::string &shape) {
    return tensorJson(name, dtype, shape);
  };
  std::string M = std::to_string(m), N = std::to_string(n), K = std::to_string(k);
  return "{\"fusec\": 1, \"name\": \"swiglu\", \"inputs\": [" + tensor("x", M + ", " + K) +
         ", " + tensor("w_gate", N + ", " + K) + ", " + tensor("w_up", N + ", " + K) +
         (residual ? ", " + tensor("r", M + ", " + N) : "") + "], \"nodes\": ["
         "{\"name\": \"gate\", \"op\": \"linear\", \"inputs\": [\"x\", \"w_gate\"]}, "
         "{\"name\": \"up\", \"op\": \"linear\", \"inputs\": [\"x\", \"w_up\"]}, "
         "{\"name\": \"a\", \"op\": \"silu\", \"inputs\": [\"gate\"]}, "
         "{\"name\": \"y\", \"op\": \"mul\", \"inputs\": [\"a\", \"up\"]}" +
         std::string(residual ? ", {\"name\": \"z\", \"op\": \"add\", \"inputs\": [\"y\", \"r\"]}"
                              : "") +
         "], \"outputs\": [\"" + (residual ? "z" : "y") + "\"]}";
}

std::string siblingProductsGraph(int m, const std::vector<int> &ns, int k,
                                 const std::string &dtype) {
  auto tensor = [&](const std::string &name, int rows, int cols) {
    return tensorJson(name, dtype, std::to_string(rows) + ", " + std::to_string(cols));
  };
  std::string inputs = tensor("x", m, k), nodes, outputs;
  for (size_t p = 0; p < ns.size(); ++p) {
    std::string w = "w" + std::to_string(p), y = "y" + std::to_string(p);
    inputs += ", " + tensor(w, ns[p], k);
    nodes += std::string(p ? ", " : "") + "{\"name\": \"" + y +
             "\", \"op\": \"linear\", \"inputs\": [\"x\", \"" + w + "\"]}";
    outputs += std::string(p ? ", " : "") + "\"" + y + "\"";
  }
  return "{\"fusec\": 1, \"name\": \"siblings\", \"inputs\": [" + inputs +
         "], \"nodes\": [" + nodes + "], \"outputs\": [" + outputs + "]}";
}

std::string outerSoftmaxGraph(const std::vector<int64_t> &shape, int reducedDims,
                              const std::string &dtype, bool maskNegatives) {
  auto list = [](const std::vector<int64_t> &v) {
    std::string s;
    for (int64_t d : v)
      s += (s.empty() ? "" : ", ") + std::to_string(d);
    return "[" + s + "]";
  };
  std::vector<int64_t> axes, kept = shape;
  for (int d = 0; d < reducedDims; ++d) {
    axes.push_back(d);
    kept[d] = 1;
  }
  std::string reduce = "\"attrs\": {\"axes\": " + list(axes) + ", \"keepdims\": true}";
  // Spelled out (max, sub, exp, sum, div), as the frontend lowers softmax,
  // so that several leading dims can be reduced at once.
  // Masked: the negative entries become -inf (about half of every column).
  std::string mask =
      maskNegatives
          ? "{\"name\": \"zero\", \"op\": \"constant\", \"attrs\": {\"value\": 0, \"dtype\": \"" +
                dtype + "\"}}, {\"name\": \"ninf\", \"op\": \"constant\", \"attrs\": {\"value\": "
                "\"-inf\", \"dtype\": \"" + dtype + "\"}}, {\"name\": \"pos\", \"op\": \"gt\", "
                "\"inputs\": [\"x\", \"zero\"]}, {\"name\": \"xm\", \"op\": \"where\", "
                "\"inputs\": [\"pos\", \"x\", \"ninf\"]}, "
          : "";
  std::string v = maskNegatives ? "xm" : "x";
  return "{\"fusec\": 1, \"name\": \"outer_softmax\", \"inputs\": [{\"name\": \"x\", "
         "\"dtype\": \"" + dtype + "\", \"shape\": " + list(shape) + "}], \"nodes\": [" + mask +
         "{\"name\": \"m\", \"op\": \"max\", \"inputs\": [\"" + v + "\"], " + reduce + "}, "
         "{\"name\": \"d\", \"op\": \"sub\", \"inputs\": [\"" + v + "\", \"m\"]}, "
         "{\"name\": \"e\", \"op\": \"exp\", \"inputs\": [\"d\"]}, "
         "{\"name\": \"s\", \"op\": \"sum\", \"inputs\": [\"e\"], " + reduce + "}, "
         "{\"name\": \"y\", \"op\": \"div\", \"inputs\": [\"e\", \"s\"]}], "
         "\"outputs\": [\"y\", \"m\"]}";
}

} // namespace fusec::test
