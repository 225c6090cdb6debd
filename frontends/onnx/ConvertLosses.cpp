//===- ConvertLosses.cpp - ONNX training losses as fusec graph nodes ------===//
//
// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss over [N, C] scores:
// the target's log-probability picked by an index mask and a row sum, class
// weights, ignore_index and the reduction. Written as the operators define
// it; -fusec-pick-early then picks the scores themselves where the
// log-probabilities are a log-softmax, so that a product's scores stream
// (docs/kernels.md, "Picks").
//
//===----------------------------------------------------------------------===//
#include "frontends/onnx/Converter.h"

namespace fusec::onnx_import {

void Converter::crossEntropy(const onnx::NodeProto &n) {
  const bool softmax = n.op_type() == "SoftmaxCrossEntropyLoss";
  allowAttrs(n, {"reduction", "ignore_index"});
  if (n.input_size() < 2 || n.input(0).empty() || n.input(1).empty())
    failNode(n, "needs 2 input(s)");
  if (n.output_size() < 1 || n.output(0).empty())
    failNode(n, "needs its loss output");
  if (n.output_size() > (softmax ? 2 : 1))
    failNode(n, "has more outputs than the operator defines");
  const onnx::AttributeProto *r = attr(n, "reduction");
  const std::string reduction = r ? r->s() : "mean";
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    failNode(n, "reduction '" + reduction + "' is not none, sum or mean");
  const std::vector<int64_t> s = knownShape(n, n.input(0));
  if (s.size() != 2)
    failNode(n, "takes scores of shape [N, C] (these have " + std::to_string(s.size()) +
                    " dims): extra dims are not supported");
  if (knownShape(n, n.input(1)) != std::vector<int64_t>{s[0]})
    failNode(n, "its target must be of shape [" + std::to_string(s[0]) + "]");
  const std::string out = n.output(0);
  // Log-probabilities: the scores' log-softmax, or (NLL) the input itself.
  std::string logp = n.input(0);
  if (softmax) {
    const bool logProbOut = n.output_size() > 1 && !n.output(1).empty();
    emit(logp = logProbOut ? n.output(1) : fresh(out, "log_prob"), "log_softmax", {n.input(0)},
         {{"axis", 1}});
  }
  const std::string dt = dtypeOf(logp);
  std::string target = n.input(1);
  if (dtypeOf(target) != "i64") {
    emit(fresh(out, "target64"), "cast", {target}, {{"dtype", "i64"}});
    target = fresh(out, "target64");
  }
  // -logp[i, target[i]]: the column equal to the row's target, summed (0
  // where the target is no column), taken from 0 (a row that picks nothing
  // is +0, not -0). The sum keeps its dim ([N, 1]), as a product's streamed
  // row statistics take it.
  emit(fresh(out, "target_col"), "reshape", {target}, {{"shape", std::vector<int64_t>{s[0], 1}}});
  emit(fresh(out, "zero"), "constant", {}, {{"value", 0}, {"dtype", dt}});
  emit(fresh(out, "one"), "constant", {}, {{"value", 1}, {"dtype", dt}});
  emitPick(fresh(out, "pick"), out, logp, s, fresh(out, "target_col"), 1, "i64", fresh(out, "zero"));
  const std::vector<int64_t> rows{s[0]};
  emit(fresh(out, "neg_pick"), "sub", {fresh(out, "zero"), fresh(out, "pick")});
  emit(fresh(out, "nll"), "reshape", {fresh(out, "neg_pick")}, {{"shape", rows}});
  std::string loss = fresh(out, "nll");
  // Each row's weight: its target's class weight, 0 where the target is
  // ignore_index (that row adds nothing, to the loss or to the mean's sum:
  // its loss is 0, not loss * 0, which is NaN where the log-probability
  // there is -inf).
  std::string weight;
  if (n.input_size() > 2 && !n.input(2).empty()) {
    emit(fresh(out, "row_weight"), "gather", {n.input(2), target}, {{"axis", 0}});
    weight = fresh(out, "row_weight");
    emit(fresh(out, "weighted"), "mul", {loss, weight});
    loss = fresh(out, "weighted");
  }
  if (attr(n, "ignore_index")) {
    emit(fresh(out, "ignore"), "constant", {}, {{"value", intAttr(n, "ignore_index", 0)}, {"dtype", "i64"}});
    emit(fresh(out, "ignored"), "eq", {target, fresh(out, "ignore")});
    emit(fresh(out, "kept_weight"), "where",
         {fresh(out, "ignored"), fresh(out, "zero"), weight.empty() ? fresh(out, "one") : weight});
    weight = fresh(out, "kept_weight");
    emit(fresh(out, "kept_loss"), "where", {fresh(out, "ignored"), fresh(out, "zero"), loss});
    loss = fresh(out, "kept_loss");
  }
  if (reduction == "none")
    return emit(out, "reshape", {loss}, {{"shape", std::vector<int64_t>{s[0]}}});
  emit(reduction == "sum" ? out : fresh(out, "total"), "sum", {loss}, {{"axes", std::vector<int64_t>{0}}, {"keepdims", false}});
  if (reduction == "sum")
    return;
  // The mean: over the rows' weights (their count where there are none).
  if (weight.empty()) {
    emit(fresh(out, "count"), "constant", {}, {{"value", s[0]}, {"dtype", dt}});
  } else {
    emit(fresh(out, "count"), "sum", {weight}, {{"axes", std::vector<int64_t>{0}}, {"keepdims", false}});
  }
  emit(out, "div", {fresh(out, "total"), fresh(out, "count")});
}

} // namespace fusec::onnx_import
