//===- GraphReader.cpp - JSON op-graph (format v1) -> fusec dialect -------===//
//
// Checks a graph top-down (document, inputs, names, order, nodes, outputs) and
// builds one func.func. Nodes may be listed in any order: they are emitted in a
// stable topological order and a cycle is reported with its path. After each op
// is built its verifier runs, and a verifier message is reported against the
// node that produced it, so every error reads in graph terms.
//
//===----------------------------------------------------------------------===//
#include "frontends/json/GraphReader.h"
#include "compiler/support/ReadFile.h"
#include "compiler/support/Printable.h"
#include "compiler/support/StrictJson.h"

#include "frontends/json/OpTable.h"
#include "frontends/json/SizeBindings.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <map>
#include <set>

using namespace mlir;

namespace fusec {
namespace json {

struct LineCol {
  unsigned line = 0, col = 0;
};

/// Line and column of a byte offset, from the offsets where lines start.
LineCol lineColAt(const std::vector<size_t> &lineStarts, size_t offset) {
  auto it = std::upper_bound(lineStarts.begin(), lineStarts.end(), offset);
  size_t line = it - lineStarts.begin();
  return {static_cast<unsigned>(line), static_cast<unsigned>(offset - lineStarts[line - 1] + 1)};
}

/// The first place `token` stands as a value (after ':', '[' or ','), not
/// inside a string such as a description; npos when nowhere.
size_t valueOffset(llvm::StringRef text, llvm::StringRef token) {
  for (size_t at = text.find(token); at != llvm::StringRef::npos; at = text.find(token, at + 1)) {
    size_t before = text.substr(0, at).find_last_not_of(" \t\r\n");
    if (before == llvm::StringRef::npos || llvm::StringRef(":[,").contains(text[before]))
      return at;
  }
  return llvm::StringRef::npos;
}

std::vector<size_t> lineStartsOf(llvm::StringRef text) {
  std::vector<size_t> starts{0};
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n')
      starts.push_back(i + 1);
  return starts;
}

namespace {

/// Why `op` would reduce over no elements where its reduction has results (a
/// sum over an empty axis, a softmax over an empty last dim, whose max and
/// sum would be, attention with no keys): no kernel family takes that, so the
/// graph is refused by name. A reduction with no results is fine: it is a
/// view of its empty input (DecomposeComposites). `field` names the input at
/// fault: the reduced one, for attention the keys.
std::string reducesOverNothing(Operation *op, std::string &field) {
  field = "inputs[0]";
  if (auto att = dyn_cast<AttentionOp>(op)) {
    field = "inputs[1]";
    ArrayRef<int64_t> k = shapeOf(att.getKey()), q = shapeOf(att.getQuery());
    int64_t keys = k.size() >= 2 ? k[k.size() - 2] : 1;
    int64_t rows = shape::numElements(q) / std::max<int64_t>(1, q.empty() ? 1 : q.back());
    if (keys == 0 && rows > 0 && (q.empty() || q.back() > 0))
      return "attention over no keys (key " + shape::str(k) + ") is not supported";
    return {};
  }
  if (op->getNumOperands() == 0)
    return {};
  ArrayRef<int64_t> shape = shapeOf(op->getOperand(0));
  int64_t rank = int64_t(shape.size());
  SmallVector<int64_t> axes;
  if (isa<SumOp, MeanOp, MaxOp, MinOp>(op)) {
    ArrayRef<int64_t> a = op->getAttrOfType<DenseI64ArrayAttr>("axes").asArrayRef();
    axes.assign(a.begin(), a.end());
  } else if (isa<SoftmaxOp, LogSoftmaxOp, LayerNormOp>(op)) {
    // softmax: its one axis; layer_norm: axis..last
    int64_t a = op->getAttrOfType<IntegerAttr>("axis").getInt(), first = a < 0 ? a + rank : a;
    for (int64_t d = first; d < (isa<LayerNormOp>(op) ? rank : first + 1); ++d)
      axes.push_back(d);
  } else if (isa<RmsNormOp>(op) && rank > 0) {
    axes.push_back(rank - 1);
  } else {
    return {};
  }
  int64_t reduced = 1, kept = 1;
  for (int64_t d = 0; d < rank; ++d)
    (llvm::is_contained(axes, d) ? reduced : kept) *= shape[d];
  if (reduced != 0 || kept == 0)
    return {};
  return op->getName().stripDialect().str() + " over an empty dim of " + shape::str(shape) +
         " is not supported: it would reduce over nothing";
}

/// Position of each `"name": "<value>"` in the text, for op locations. Names are
/// unique in a valid graph, so the first occurrence is the definition.
std::map<std::string, LineCol> namePositions(llvm::StringRef text) {
  std::vector<size_t> lineStarts = lineStartsOf(text);
  std::map<std::string, LineCol> out;
  for (size_t pos = 0; (pos = text.find("\"name\"", pos)) != llvm::StringRef::npos;) {
    size_t keyPos = pos;
    pos = text.find_first_not_of(" \t\r\n", pos + 6);
    if (pos == llvm::StringRef::npos || text[pos] != ':')
      continue;
    pos = text.find_first_not_of(" \t\r\n", pos + 1);
    if (pos == llvm::StringRef::npos || text[pos] != '"')
      continue;
    size_t end = text.find('"', pos + 1);
    if (end == llvm::StringRef::npos)
      break;
    out.emplace(text.slice(pos + 1, end).str(), lineColAt(lineStarts, keyPos));
    pos = end + 1;
  }
  return out;
}


/// The argument attribute that marks a parameter (isParameter).
constexpr const char *kParameterAttr = "fusec.parameter";

class GraphBuilder {
public:
  GraphBuilder(llvm::StringRef fileName, llvm::StringRef text, MLIRContext &ctx)
      : fileName(fileName.str()), positions(namePositions(text)), ctx(ctx) {}

  OwningOpRef<ModuleOp> build(const Json &doc);

private:
  void readHeader(const Json &doc);
  void readInputs(const Json &doc);
  /// `inputs` or `parameters`: graph arguments, parameters after inputs.
  void readTensorList(const Json &doc, const char *key, bool parameters);
  std::vector<size_t> readNodesInOrder(const Json &nodes);
  void buildNode(const Json &node, size_t index, OpBuilder &b);
  std::vector<Value> readOutputs(const Json &doc);
  Location locFor(const std::string &name, size_t index);
  Place nodePlace(const Json &node, size_t index) const;

  std::string fileName;
  std::map<std::string, LineCol> positions;
  MLIRContext &ctx;
  std::string graphName;
  std::vector<std::pair<std::string, RankedTensorType>> inputs;  ///< then parameters
  std::vector<bool> isParameter;  ///< per entry of `inputs`
  std::vector<std::optional<int64_t>> shards;  ///< per entry: the dim split over ranks
  std::map<std::string, Value> values;  ///< defined names -> SSA values
};

Place GraphBuilder::nodePlace(const Json &node, size_t index) const {
  const Json *n = node.is_object() ? find(node, "name") : nullptr;
  std::string label = n && n->is_string() ? singleQuoted(n->get<std::string>()) + " " : "";
  return Place("node " + label + "(nodes[" + std::to_string(index) + "])");
}

/// `name`(fused<nodes[index]>[file:line:col]): the node's name (diagnostics and
/// `fusec explain` print it), its index in "nodes", and where it is in the file.
Location GraphBuilder::locFor(const std::string &name, size_t index) {
  LineCol lc = positions.count(name) ? positions[name] : LineCol{};
  Location file = FileLineColLoc::get(&ctx, fileName, lc.line, lc.col);
  Attribute where = StringAttr::get(&ctx, "nodes[" + std::to_string(index) + "]");
  return NameLoc::get(StringAttr::get(&ctx, name), FusedLoc::get(&ctx, {file}, where));
}

void GraphBuilder::readHeader(const Json &doc) {
  Place top;
  if (!doc.is_object())
    top.fail("a graph must be a JSON object, got " + jsonTypeName(doc));
  rejectUnknownKeys(top, doc,
                    {"fusec", "name", "description", "inputs", "parameters", "nodes", "outputs"}, "");
  int64_t version = asInt(top, require(top, doc, "fusec", "fusec"), "fusec");
  if (version != 1)
    top.fail("fusec", "unsupported format version " + std::to_string(version) +
                          " (this fusec reads version 1)");
  graphName = printable(llvm::sys::path::stem(fileName));
  if (const Json *n = find(doc, "name"))
    graphName = asString(top, *n, "name");
  if (graphName.empty())
    graphName = "graph";
  if (const Json *d = find(doc, "description"))  // free text, never printed: any string
    if (!d->is_string())
      top.fail("description", "expected a string, got " + jsonTypeName(*d));
}

void GraphBuilder::readInputs(const Json &doc) {
  readTensorList(doc, "inputs", /*parameters=*/false);
  if (find(doc, "parameters"))
    readTensorList(doc, "parameters", /*parameters=*/true);
}

void GraphBuilder::readTensorList(const Json &doc, const char *key, bool parameters) {
  Place top;
  const Json &list = require(top, doc, key, key);
  if (!list.is_array())
    top.fail(key, "expected an array of {name, dtype, shape}, got " + jsonTypeName(list));
  for (size_t i = 0; i < list.size(); ++i) {
    const Json &spec = list[i];
    const std::string item = std::string(key) + "[" + std::to_string(i) + "]";
    Place at(item);
    if (!spec.is_object())
      at.fail("expected an object {name, dtype, shape}, got " + jsonTypeName(spec));
    std::string name = asString(at, require(at, spec, "name", "name"), "name");
    at = Place(item + " " + singleQuoted(name));
    rejectUnknownKeys(at, spec, {"name", "dtype", "shape", "shard"}, "");
    if (name.empty())
      at.fail("name", "must not be empty");
    DType dt = asDType(at, require(at, spec, "dtype", "dtype"), "dtype");
    std::vector<int64_t> shape = asShape(at, require(at, spec, "shape", "shape"), "shape");
    for (size_t j = 0; j < inputs.size(); ++j)
      if (inputs[j].first == name)
        at.fail("name", std::string("duplicate name ") + singleQuoted(name) + " (already " +
                            (isParameter[j] ? "a parameter" : "a graph input") + ")");
    std::optional<int64_t> shard;
    if (const Json *split = find(spec, "shard")) {
      int64_t axis = asInt(at, *split, "shard"), normalized = 0;
      std::string err = shape::normalizeAxis(axis, shape.size(), normalized);
      if (!err.empty())
        at.fail("shard", err);
      shard = normalized;
    }
    inputs.emplace_back(name, RankedTensorType::get(shape, toMlirType(dt, &ctx)));
    isParameter.push_back(parameters);
    shards.push_back(shard);
  }
}

std::vector<size_t> GraphBuilder::readNodesInOrder(const Json &nodes) {
  // Names and their defining node index; graph inputs map to npos.
  std::map<std::string, size_t> defined;
  for (const auto &[name, type] : inputs)
    defined[name] = std::string::npos;
  for (size_t i = 0; i < nodes.size(); ++i) {
    Place at = nodePlace(nodes[i], i);
    if (!nodes[i].is_object())
      at.fail("expected a node object {name, op, inputs, attrs}, got " + jsonTypeName(nodes[i]));
    std::string name = asString(at, require(at, nodes[i], "name", "name"), "name");
    if (name.empty())
      at.fail("name", "must not be empty");
    auto [it, fresh] = defined.emplace(name, i);
    if (!fresh)
      at.fail("name", "duplicate name " + singleQuoted(name) + " (already defined by " +
                          (it->second == std::string::npos
                               ? std::string("a graph input or parameter")
                               : "nodes[" + std::to_string(it->second) + "]") + ")");
  }
  std::vector<std::string> allNames;
  for (const auto &[name, idx] : defined)
    allNames.push_back(name);
  // Dependencies between nodes, checked for unknown names.
  std::vector<std::vector<size_t>> deps(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    Place at = nodePlace(nodes[i], i);
    const Json *ins = find(nodes[i], "inputs");
    if (!ins)
      continue;  // reported when the node is built
    if (!ins->is_array())
      at.fail("inputs", "expected an array of names, got " + jsonTypeName(*ins));
    for (size_t k = 0; k < ins->size(); ++k) {
      std::string field = "inputs[" + std::to_string(k) + "]";
      std::string ref = asString(at, (*ins)[k], field);
      if (ref.empty())
        continue;  // an omitted optional operand
      auto it = defined.find(ref);
      if (it == defined.end())
        at.fail(field, "unknown name " + singleQuoted(ref) + suggest(ref, allNames));
      if (it->second != std::string::npos)
        deps[i].push_back(it->second);
    }
  }
  // Stable topological order: always the lowest ready index first.
  std::vector<size_t> pending(nodes.size(), 0), order;
  std::vector<std::vector<size_t>> users(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i)
    for (size_t d : deps[i]) {
      ++pending[i];
      users[d].push_back(i);
    }
  std::set<size_t> ready;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (pending[i] == 0)
      ready.insert(i);
  while (!ready.empty()) {
    size_t i = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(i);
    for (size_t u : users[i])
      if (--pending[u] == 0)
        ready.insert(u);
  }
  if (order.size() == nodes.size())
    return order;
  // Walk back along unfinished dependencies until a node repeats: that is a cycle.
  size_t start = 0;
  while (pending[start] == 0)
    ++start;
  std::vector<size_t> path{start};
  std::vector<int> seenAt(nodes.size(), -1);
  seenAt[start] = 0;
  for (;;) {
    size_t cur = path.back(), next = cur;
    for (size_t d : deps[cur])
      if (pending[d] != 0) {
        next = d;
        break;
      }
    if (seenAt[next] >= 0) {
      std::string text;
      for (size_t k = seenAt[next]; k < path.size(); ++k)
        text += singleQuoted(nodes[path[k]]["name"].get<std::string>()) + " <- ";
      text += singleQuoted(nodes[next]["name"].get<std::string>());
      nodePlace(nodes[next], next).fail("inputs", "cycle: " + text +
                                                      " (each node uses the next one)");
    }
    seenAt[next] = path.size();
    path.push_back(next);
  }
}

std::string dtypeList(const std::vector<Value> &vs, const std::vector<std::string> &names) {
  std::string out;
  for (size_t i = 0; i < vs.size(); ++i)
    if (vs[i])
      out += (out.empty() ? "" : ", ") + singleQuoted(names[i]) + " is " +
             std::string(dtypeName(dtypeOf(vs[i])));
  return out;
}

/// Checks the op's generic dtype rule over its present operands.
void checkDTypes(const Place &at, const OpSpec &spec, const std::vector<Value> &vs,
                 const std::vector<std::string> &names) {
  if (spec.dtypes == DTypeRule::Custom)
    return;
  std::optional<DType> common;
  for (size_t i = 0; i < vs.size(); ++i) {
    if (!vs[i])
      continue;
    DType t = dtypeOf(vs[i]);
    if (common && *common != t)
      at.fail("inputs", "dtype mismatch: " + dtypeList(vs, names) + " (insert a cast)");
    common = t;
    std::string field = "inputs[" + std::to_string(i) + "]";
    if (spec.dtypes == DTypeRule::Float && !isFloat(t))
      at.fail(field, "op '" + spec.name + "' takes f32, f16 or bf16, but " + singleQuoted(names[i]) +
                         " is " + std::string(dtypeName(t)));
    if (spec.dtypes == DTypeRule::Numeric && t == DType::Bool)
      at.fail(field, "op '" + spec.name + "' takes numbers, but " + singleQuoted(names[i]) +
                         " is bool (cast it first)");
  }
}

void GraphBuilder::buildNode(const Json &node, size_t index, OpBuilder &b) {
  Place at = nodePlace(node, index);
  std::string name = node["name"].get<std::string>();
  rejectUnknownKeys(at, node, {"name", "op", "inputs", "attrs", "dtype", "shape"}, "");
  std::string opName = asString(at, require(at, node, "op", "op"), "op");
  const OpSpec *spec = lookupOp(opName);
  if (!spec)
    at.fail("op", "unknown op '" + opName + "'" + suggest(opName, opNames()));
  static const Json emptyArray = Json::array(), emptyObject = Json::object();
  const Json *ins = find(node, "inputs");
  if (!ins && spec->minInputs > 0)
    at.fail("inputs", "missing required field");
  if (!ins)
    ins = &emptyArray;
  int n = static_cast<int>(ins->size());
  if (n < spec->minInputs || (spec->maxInputs >= 0 && n > spec->maxInputs)) {
    std::string want = spec->minInputs == spec->maxInputs
                           ? std::to_string(spec->minInputs)
                           : spec->maxInputs < 0
                                 ? "at least " + std::to_string(spec->minInputs)
                                 : std::to_string(spec->minInputs) + " to " +
                                       std::to_string(spec->maxInputs);
    at.fail("inputs", "op '" + opName + "' takes " + want + " input" +
                          (want == "1" ? "" : "s") + ", got " + std::to_string(n));
  }
  const Json *attrs = find(node, "attrs");
  if (attrs && !attrs->is_object())
    at.fail("attrs", "expected an object, got " + jsonTypeName(*attrs));
  if (!attrs)
    attrs = &emptyObject;
  rejectUnknownKeys(at, *attrs, spec->attrs, "attrs.");

  TypedBuilder tb(b, locFor(name, index));
  NodeContext c{tb, at, *attrs, node, {}, {}};
  for (int k = 0; k < n; ++k) {
    std::string ref = (*ins)[k].get<std::string>();
    if (ref.empty() && k < spec->minInputs)
      at.fail("inputs[" + std::to_string(k) + "]", "required input may not be \"\"");
    c.operandNames.push_back(ref);
    c.operands.push_back(ref.empty() ? Value() : values.at(ref));
  }
  checkDTypes(at, *spec, c.operands, c.operandNames);

  // Verifier messages (e.g. a layer_norm weight of the wrong shape) become node errors.
  std::string diag;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    if (diag.empty())
      diag = d.str();
    return success();
  });
  Value result = spec->build(c);
  if (failed(verify(result.getDefiningOp()))) {
    llvm::StringRef msg(diag);
    size_t opPrefix = msg.find(" op ");
    if (msg.starts_with("'fusec.") && opPrefix != llvm::StringRef::npos)
      msg = msg.drop_front(opPrefix + 4);
    at.fail(msg.str());
  }
  if (std::string field, why = reducesOverNothing(result.getDefiningOp(), field); !why.empty())
    at.fail(field, why);
  if (const Json *dt = find(node, "dtype")) {
    DType stated = asDType(at, *dt, "dtype");
    if (stated != dtypeOf(result))
      at.fail("dtype", "stated " + std::string(dtypeName(stated)) + " but the result is " +
                           std::string(dtypeName(dtypeOf(result))));
  }
  if (const Json *sh = find(node, "shape")) {
    std::vector<int64_t> stated = asShape(at, *sh, "shape");
    if (llvm::ArrayRef<int64_t>(stated) != shapeOf(result))
      at.fail("shape", "stated " + shape::str(stated) + " but the result is " +
                           shape::str(shapeOf(result)));
  }
  values[name] = result;
}

std::vector<Value> GraphBuilder::readOutputs(const Json &doc) {
  Place top;
  const Json &outs = require(top, doc, "outputs", "outputs");
  if (!outs.is_array())
    top.fail("outputs", "expected an array of names, got " + jsonTypeName(outs));
  if (outs.empty())
    top.fail("outputs", "the graph has no outputs");
  std::vector<std::string> known;
  for (const auto &[name, v] : values)
    known.push_back(name);
  std::vector<Value> results;
  for (size_t i = 0; i < outs.size(); ++i) {
    std::string field = "outputs[" + std::to_string(i) + "]";
    std::string name = asString(top, outs[i], field);
    auto it = values.find(name);
    if (it == values.end())
      top.fail(field, singleQuoted(name) + " is never defined (not an input or node name)" +
                          suggest(name, known));
    results.push_back(it->second);
  }
  return results;
}

OwningOpRef<ModuleOp> GraphBuilder::build(const Json &doc) {
  readHeader(doc);
  readInputs(doc);
  Place top;
  const Json &nodes = require(top, doc, "nodes", "nodes");
  if (!nodes.is_array())
    top.fail("nodes", "expected an array of nodes, got " + jsonTypeName(nodes));
  if (nodes.empty())
    top.fail("nodes", "the graph is empty (no nodes)");
  std::vector<size_t> order = readNodesInOrder(nodes);

  OpBuilder b(&ctx);
  Location fileLoc = FileLineColLoc::get(&ctx, fileName, 1, 1);
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  b.setInsertionPointToEnd(module->getBody());
  SmallVector<Type> argTypes;
  for (const auto &[name, type] : inputs)
    argTypes.push_back(type);
  auto func = b.create<func::FuncOp>(fileLoc, graphName, b.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  for (size_t i = 0; i < inputs.size(); ++i) {
    values[inputs[i].first] = entry->getArgument(i);
    func.setArgAttr(i, "fusec.name", b.getStringAttr(inputs[i].first));
    if (isParameter[i])  // bound from weights files when a program is loaded
      func.setArgAttr(i, kParameterAttr, b.getUnitAttr());
    if (shards[i])  // split over ranks by -fusec-partition
      func.setArgAttr(i, kShardAttr, b.getI64IntegerAttr(*shards[i]));
  }
  b.setInsertionPointToEnd(entry);
  for (size_t i : order)
    buildNode(nodes[i], i, b);
  std::vector<Value> results = readOutputs(doc);
  b.create<func::ReturnOp>(fileLoc, results);
  SmallVector<Type> resultTypes;
  for (Value v : results)
    resultTypes.push_back(v.getType());
  func.setType(b.getFunctionType(argTypes, resultTypes));
  const Json &outs = doc["outputs"];
  for (size_t i = 0; i < outs.size(); ++i)
    func.setResultAttr(i, "fusec.name", b.getStringAttr(outs[i].get<std::string>()));
  return module;
}

} // namespace
} // namespace json

llvm::Expected<OwningOpRef<ModuleOp>> importGraphText(llvm::StringRef text,
                                                       llvm::StringRef fileName,
                                                       MLIRContext &ctx,
                                                       const SizeBindings &sizes) {
  ctx.loadDialect<FusecDialect, func::FuncDialect>();
  json::Json doc;
  try {
    doc = parseStrictJson(text.begin(), text.end());
  } catch (const StrictJsonError &e) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s: invalid JSON: %s",
                                   fileName.str().c_str(), e.what());
  } catch (const json::Json::parse_error &e) {
    // nlohmann's text starts "[json.exception.parse_error.101] parse error at ...: ".
    std::string what = e.what();
    size_t colon = what.find(": ");
    std::string reason = colon == std::string::npos ? what : what.substr(colon + 2);
    size_t offset = e.byte > 0 ? e.byte - 1 : 0;
    json::LineCol lc = json::lineColAt(json::lineStartsOf(text), offset);
    if (text.empty() || offset >= text.size())
      reason += " (the file is empty or truncated)";
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "%s:%u:%u: invalid JSON: %s", fileName.str().c_str(),
                                   lc.line, lc.col, reason.c_str());
  } catch (const json::Json::exception &e) {
    // A number out of a double's range ("[json.exception.out_of_range.406]
    // number overflow parsing '1e400'"): no byte offset, so the quoted token
    // is looked up in the text for its place.
    std::string what = e.what();
    size_t close = what.rfind('\''), open = close == std::string::npos ? close : what.rfind('\'', close - 1);
    size_t bracket = what.find("] ");
    std::string reason = bracket == std::string::npos ? what : what.substr(bracket + 2);
    size_t at = open != std::string::npos && close > open + 1
                    ? json::valueOffset(text, what.substr(open + 1, close - open - 1))
                    : llvm::StringRef::npos;
    if (at != llvm::StringRef::npos) {
      json::LineCol lc = json::lineColAt(json::lineStartsOf(text), at);
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "%s:%u:%u: invalid JSON: %s", fileName.str().c_str(),
                                     lc.line, lc.col, reason.c_str());
    }
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s: invalid JSON: %s",
                                   fileName.str().c_str(), reason.c_str());
  }
  try {
    json::bindSizes(doc, sizes);
    json::GraphBuilder builder(fileName, text, ctx);
    return builder.build(doc);
  } catch (const json::GraphError &e) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s: %s",
                                   fileName.str().c_str(), e.what());
  } catch (const json::Json::exception &e) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "%s: unexpected JSON value: %s", fileName.str().c_str(),
                                   e.what());
  }
}

llvm::Expected<OwningOpRef<ModuleOp>> importGraphFile(llvm::StringRef path,
                                                       MLIRContext &ctx,
                                                       const SizeBindings &sizes) {
  auto buffer = readFileBounded(path, "graph", FileLimits::kGraph);
  if (!buffer)
    return buffer.takeError();
  return importGraphText((*buffer)->getBuffer(), path, ctx, sizes);
}

bool isParameter(func::FuncOp func, unsigned i) {
  return func.getArgAttr(i, json::kParameterAttr) != nullptr;
}

func::FuncOp graphFunction(ModuleOp module) {
  for (auto f : module.getOps<func::FuncOp>())
    return f;
  return {};
}

} // namespace fusec
