//===- OpTable.h - graph op name -> operand rules and IR builder ----------===//
//
// One row per graph op: how many inputs, which dtypes, which attrs, and the
// function that builds the fusec op once the operands are known. The reader
// checks the generic rules; each builder checks what is particular to its op.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/dialect/TypedBuilders.h"
#include "frontends/json/GraphError.h"

#include <string>
#include <vector>

namespace fusec::json {

/// Which dtypes an op's operands may have. All present operands share one
/// dtype unless the rule is Custom, in which case the builder checks.
enum class DTypeRule { Any, Numeric, Float, Custom };

struct NodeContext {
  TypedBuilder &tb;
  const Place &at;
  const Json &attrs;                      ///< the node's "attrs" (an object, maybe empty)
  const Json &node;                       ///< the whole node object
  std::vector<mlir::Value> operands;      ///< null where the input was ""
  std::vector<std::string> operandNames;  ///< as written in "inputs"

  const Json *attr(const char *key) const { return find(attrs, key); }
  std::string field(const char *key) const { return std::string("attrs.") + key; }
  int64_t intAttr(const char *key, int64_t dflt) const;
  double numberAttr(const char *key, double dflt) const;
  bool boolAttr(const char *key, bool dflt) const;
  /// Requires an attribute; the message says what it is for.
  const Json &requireAttr(const char *key) const;
  /// Normalizes an axis against the rank of operand 0 (reports under attrs.<key>).
  int64_t axisAttr(const char *key, int64_t dflt) const;
  /// Reports a failed shape rule against the node's inputs.
  void check(const std::string &err, const std::string &field = "inputs") const;
  mlir::Value in(size_t i) const { return operands[i]; }
};

using BuildFn = mlir::Value (*)(NodeContext &);

struct OpSpec {
  std::string name;
  int minInputs, maxInputs;  ///< maxInputs -1: any number
  DTypeRule dtypes;
  std::vector<std::string> attrs;
  BuildFn build;
};

const std::vector<OpSpec> &opTable();
const OpSpec *lookupOp(const std::string &name);
std::vector<std::string> opNames();

} // namespace fusec::json
