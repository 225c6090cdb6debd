//===- ConvertLosses.cpp - ONNX training losses as fusec graph nodes ------===//
//
// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss over [N, C] scores:
// the target's log-probability picked by an index mask and a row sum, class
// weights, ignore_index and the reduction; written as lse(x) - x[t] where a
// product's scores can stream through it (docs/kernels.md, "Picks").
//
//===----------------------------------------------------------------------===//
#include "frontends/onnx/Converter.h"

namespace fusec::onnx_import {

std::string Converter::logSoftmaxInputReadOnce(const std::string &logp) {
  const onnx::GraphProto &g = model.graph();
  for (const onnx::ValueInfoProto &o : g.output())
    if (o.name() == logp)
      return "";
  const onnx::NodeProto *producer = nullptr;
  int readers = 0;
  for (const onnx::NodeProto &node : g.node()) {
    for (const std::string &o : node.output())
      if (o == logp)
        producer = &node;
    for (const std::string &i : node.input())
      readers += i == logp;
  }
  if (!producer || producer->op_type() != "LogSoftmax" || readers != 1 ||
      producer->input_size() < 1 || knownShape(*producer, producer->input(0)).size() != 2)
    return "";
  const int64_t axis = intAttr(*producer, "axis", -1);
  if (axis != 1 && axis != -1)
    return "";
  // The log-softmax was written when its node was converted: it is read by
  // nothing now.
  Json &nodes = graph["nodes"];
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].value("name", "") == logp && nodes[i].value("op", "") == "log_softmax") {
      nodes.erase(nodes.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
  return producer->input(0);
}

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
  // Without its log-probabilities as an output, SoftmaxCrossEntropyLoss
  // picks the target's score instead: -logp[t] = lse(x) - x[t], so that a
  // product's scores stream (schedule/RowStatsForm.h: the row max, the sum
  // of exponentials and the pick in its epilogue) and are never written.
  // NegativeLogLikelihoodLoss over a LogSoftmax that nothing else reads (as
  // PyTorch's dynamo exporter writes F.cross_entropy) picks the scores alike,
  // and the log-softmax, then unread, is dropped.
  const bool logProbOut = n.output_size() > 1 && !n.output(1).empty();
  std::string scores = softmax && !logProbOut ? n.input(0) : std::string();
  if (!softmax)
    scores = logSoftmaxInputReadOnce(n.input(0));
  const bool pickScores = !scores.empty();
  std::string logp = pickScores ? scores : n.input(0);
  if (softmax && logProbOut)
    emit(logp = n.output(1), "log_softmax", {n.input(0)}, {{"axis", 1}});
  const std::string dt = dtypeOf(logp);
  std::string target = n.input(1);
  if (dtypeOf(target) != "i64") {
    emit(fresh(out, "target64"), "cast", {target}, {{"dtype", "i64"}});
    target = fresh(out, "target64");
  }
  // logp[i, target[i]] (or the score): the column equal to the row's
  // target, summed.
  emit(fresh(out, "cols"), "iota", {}, {{"shape", s}, {"dim", 1}});
  emit(fresh(out, "target_col"), "reshape", {target}, {{"shape", std::vector<int64_t>{s[0], 1}}});
  emit(fresh(out, "hit"), "eq", {fresh(out, "cols"), fresh(out, "target_col")});
  emit(fresh(out, "zero"), "constant", {}, {{"value", 0}, {"dtype", dt}});
  emit(fresh(out, "one"), "constant", {}, {{"value", 1}, {"dtype", dt}});
  emit(fresh(out, "picked"), "where", {fresh(out, "hit"), logp, fresh(out, "zero")});
  const std::vector<int64_t> axis{1}, rows{s[0]};
  // The rows' reductions keep their dim ([N, 1]) where what follows them
  // fuses (the streamed epilogue's tail), and drop it at the end.
  emit(fresh(out, "pick"), "sum", {fresh(out, "picked")}, {{"axes", axis}, {"keepdims", pickScores}});
  if (pickScores) {
    // lse(x) = log(sum(exp(x - m))) + m over each row, counted only where
    // the target is a column (-logp[t] picks 0 elsewhere, as above).
    emit(fresh(out, "row_max"), "max", {logp}, {{"axes", axis}, {"keepdims", true}});
    emit(fresh(out, "shifted"), "sub", {logp, fresh(out, "row_max")});
    emit(fresh(out, "exps"), "exp", {fresh(out, "shifted")});
    emit(fresh(out, "exp_sum"), "sum", {fresh(out, "exps")}, {{"axes", axis}, {"keepdims", true}});
    emit(fresh(out, "log_sum"), "log", {fresh(out, "exp_sum")});
    emit(fresh(out, "lse"), "add", {fresh(out, "log_sum"), fresh(out, "row_max")});
    emit(fresh(out, "first_col"), "constant", {}, {{"value", 0}, {"dtype", "i64"}});
    emit(fresh(out, "classes"), "constant", {}, {{"value", s[1]}, {"dtype", "i64"}});
    emit(fresh(out, "from_first"), "ge", {fresh(out, "target_col"), fresh(out, "first_col")});
    emit(fresh(out, "below_end"), "lt", {fresh(out, "target_col"), fresh(out, "classes")});
    emit(fresh(out, "in_range"), "where", {fresh(out, "from_first"), fresh(out, "below_end"), fresh(out, "from_first")});
    emit(fresh(out, "lse_kept"), "where", {fresh(out, "in_range"), fresh(out, "lse"), fresh(out, "zero")});
    emit(fresh(out, "row_loss"), "sub", {fresh(out, "lse_kept"), fresh(out, "pick")});
    emit(fresh(out, "nll"), "reshape", {fresh(out, "row_loss")}, {{"shape", rows}});
  } else {
    emit(fresh(out, "nll"), "neg", {fresh(out, "pick")});
  }
  std::string loss = fresh(out, "nll");
  // Each row's weight: its target's class weight, 0 where the target is
  // ignore_index (that row adds nothing, to the loss or to the mean's sum).
  std::string weight;
  if (n.input_size() > 2 && !n.input(2).empty()) {
    emit(fresh(out, "row_weight"), "gather", {n.input(2), target}, {{"axis", 0}});
    weight = fresh(out, "row_weight");
  }
  if (attr(n, "ignore_index")) {
    emit(fresh(out, "ignore"), "constant", {}, {{"value", intAttr(n, "ignore_index", 0)}, {"dtype", "i64"}});
    emit(fresh(out, "ignored"), "eq", {target, fresh(out, "ignore")});
    emit(fresh(out, "kept_weight"), "where",
         {fresh(out, "ignored"), fresh(out, "zero"), weight.empty() ? fresh(out, "one") : weight});
    weight = fresh(out, "kept_weight");
  }
  if (!weight.empty()) {
    emit(fresh(out, "weighted"), "mul", {loss, weight});
    loss = fresh(out, "weighted");
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
