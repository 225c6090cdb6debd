//===- CollectiveOps.td - all_reduce, all_gather, reduce_scatter ----------===//
//
// A program split over `ranks` GPUs runs the same ops on every rank (SPMD),
// each on its own shard; these ops are where the ranks meet. Every rank must
// reach the same collectives in the same order, as NCCL requires. They are
// not Pure: the planner keeps each one a step of its own, and nothing moves,
// merges or drops them.
//
//===----------------------------------------------------------------------===//
#ifndef FUSEC_COLLECTIVE_OPS_TD
#define FUSEC_COLLECTIVE_OPS_TD

include "compiler/dialect/FusecBase.td"

def Fusec_AllReduceOp : Fusec_Op<"all_reduce", [SameOperandsAndResultType]> {
  let summary = "elementwise sum (or max, min) of every rank's tensor, on every rank";
  let description = [{
    `kind` is `sum`, `max` or `min`. The sum accumulates in fp64 in rank
    order and rounds once to the dtype (the reference; NCCL's order differs).

    ```mlir
    %y = fusec.all_reduce %x {kind = "sum", ranks = 2 : i64} : (tensor<1x4096xbf16>) -> tensor<1x4096xbf16>
    ```
  }];
  let arguments = (ins Fusec_NumericTensor:$input, StrAttr:$kind, I64Attr:$ranks);
  let results = (outs Fusec_NumericTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Fusec_AllGatherOp : Fusec_Op<"all_gather"> {
  let summary = "every rank's tensor joined along an axis in rank order, on every rank";
  let description = [{
    ```mlir
    %y = fusec.all_gather %x {axis = 1 : i64, ranks = 2 : i64} : (tensor<4x8xf32>) -> tensor<4x16xf32>
    ```
  }];
  let arguments = (ins Fusec_Tensor:$input, I64Attr:$axis, I64Attr:$ranks);
  let results = (outs Fusec_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Fusec_ReduceScatterOp : Fusec_Op<"reduce_scatter"> {
  let summary = "the sum of every rank's tensor, rank r keeping the r-th block along an axis";
  let description = [{
    ```mlir
    %y = fusec.reduce_scatter %x {axis = 0 : i64, ranks = 2 : i64} : (tensor<8x4xf32>) -> tensor<4x4xf32>
    ```
  }];
  let arguments = (ins Fusec_NumericTensor:$input, I64Attr:$axis, I64Attr:$ranks);
  let results = (outs Fusec_NumericTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

#endif // FUSEC_COLLECTIVE_OPS_TD
