//===- Passes.td - fusec passes -------------------------------------------===//
#ifndef FUSEC_PASSES_TD
#define FUSEC_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Decomposition
//===----------------------------------------------------------------------===//

def FusecDecompose : Pass<"fusec-decompose", "mlir::func::FuncOp"> {
  let summary = "Rewrite composite ops into primitive ops";
  let description = [{
    Fusion works on primitives only and must rediscover the fused kernels:

    ```
    softmax(x, a)      => div(exp(sub(x, max(x, a))), sum(exp(sub(x, max(x, a))), a))
    log_softmax(x, a)  => sub(sub(x, max(x, a)), log(sum(exp(sub(x, max(x, a))), a)))
    rms_norm(x, w)     => mul(mul(x, rsqrt(add(mean(mul(x, x), -1), eps))), w)
    layer_norm(x,w,b)  => add(mul(mul(d, rsqrt(add(mean(mul(d, d)), eps))), w), b)
                          where d = sub(x, mean(x))
    linear(x, w, b)    => add(matmul(x, transpose(w)), b)
    sdpa(q, k, v)      => matmul(softmax(mask(mul(matmul(q, transpose(k)), scale))), v)
    ```
    Reductions keep their dims so the following ops broadcast over them.
    A reduction over one element per result (a scalar, dims of size 1), or
    with no results at all, becomes a reshape of its input (a view).
  }];
  let dependentDialects = ["::fusec::FusecDialect"];
}

def FusecFoldRepeatedHeads : Pass<"fusec-fold-repeated-heads", "mlir::func::FuncOp"> {
  let summary = "Read grouped-query K/V once instead of materializing their repeats";
  let description = [{
    Grouped-query attention repeats each K/V head R times (reshape, broadcast,
    reshape) before a batched matmul, which then needs the repeat in memory
    (R times the bytes, written by a copy kernel). The R query heads that
    share a K/V head are instead taken as R times more rows of one matmul:

    ```
    matmul(A[.., G*R, M, K], rep(kv)[.., G*R, K, N])
      => reshape(matmul(reshape(A)[.., G, R*M, K], kv[.., G, K, N]), [.., G*R, M, N])
    ```
    (kv possibly transposed). Only where A's reshape is a view of its data.
    When kv is a concat along K's rows of a cache and this step's new rows
    (decode), the products read the pieces: for the scores (kv transposed)
    one product per piece joined by a concat along N; for probabilities @ V
    the sum over K split at the join, `matmul(A[.., :S0], cache) +
    matmul(A[.., S0:], new)`, a one-row piece as a broadcast multiply.
  }];
  let dependentDialects = ["::fusec::FusecDialect"];
}

//===----------------------------------------------------------------------===//
// Fusion
//===----------------------------------------------------------------------===//

def FusecFuseVertical : Pass<"fusec-fuse-vertical", "mlir::func::FuncOp"> {
  let summary = "Group producer-consumer chains into fusec.fusion kernels";
  let description = [{
    Walks compute ops in program order and merges each op's group with the
    groups of its producers when the union fits one kernel family
    (compiler/schedule/GroupSchedule.h), creates no cycle, and the cost model
    predicts it faster:

    ```
    gelu(add(x, b))                 => fusion<pointwise>(x, b) { add; gelu }
    div(exp(sub(x, max(x))), sum)   => fusion<row_reduction>(x) { max; sub; exp; sum; div }
    ```
    Views (reshape, transpose, broadcast_to, slice) and generators (constant,
    iota) are cloned into every group that reads them. Every merge that was
    considered and rejected is recorded in the function's `fusec.rejected`
    attribute for `fusec explain`, as a `#fusec.decision` (the reason's code
    and sentence, and the predicted times where the cost model decided).
  }];
  let options = [
    Option<"device", "device", "std::string", /*default=*/"\"h100\"",
           "device profile for the cost model (h100, h200, a100, l40s)">,
    Option<"copyBytesPerSec", "copy-bytes-per-sec", "double", /*default=*/"0",
           "copy bandwidth measured on this machine (0: the profile's)">,
    Option<"smCount", "sm-count", "int", /*default=*/"0",
           "SM count of the GPU at hand (0: the profile's)">,
    Option<"arch", "arch", "std::string", /*default=*/"\"\"",
           "NVRTC target the kernels are for (empty: the profile's); decides which "
           "GEMM kernels exist">,
    Option<"gemm", "gemm", "std::string", /*default=*/"\"auto\"",
           "how matmul groups run: auto (the cost model picks), fusec (fusec's GEMM "
           "with the epilogue fused), cublaslt (cuBLASLt, applying the epilogue itself where it can, else the epilogue as its own kernel)">
  ];
  let dependentDialects = ["::fusec::FusecDialect"];
}

def FusecSelectKernels : Pass<"fusec-select-kernels", "mlir::func::FuncOp"> {
  let summary = "Choose each fused group's kernel family from the registry";
  let description = [{
    For every fusec.fusion without a `family`, asks the kernel families of
    its kind (compiler/families/Registry.cpp) in order; the first that takes
    the group runs it, and the ones asked before it are recorded with their
    reasons in `family_rejections`:

    ```
    fusion "column_reduction" (...) {name = "k0_sum"}
      => fusion "column_reduction" (...) {family = #fusec.family<column_streamed>,
           family_rejections = [{family = #fusec.family<column_online_softmax>,
                                 reason = "needs thread block clusters ..."} ],
           name = "k0_sum"}
    ```
    Matmul groups carry the planner's choice (MatmulPaths.cpp) from
    outlining; a cublaslt_epilogue group gets the call cuBLASLt makes of it
    (`library_epilogue = #fusec.library_epilogue<...>`: scale, residual and
    bias inputs, gelu). Code generation emits every group with its family
    alone, and plan building reads the recorded call.
  }];
  let options = [
    Option<"device", "device", "std::string", /*default=*/"\"h100\"",
           "device profile (h100, h200, a100, l40s)">,
    Option<"copyBytesPerSec", "copy-bytes-per-sec", "double", /*default=*/"0",
           "copy bandwidth measured on this machine (0: the profile's)">,
    Option<"smCount", "sm-count", "int", /*default=*/"0",
           "SM count of the GPU at hand (0: the profile's)">,
    Option<"arch", "arch", "std::string", /*default=*/"\"\"",
           "NVRTC target the kernels are for (empty: the profile's)">
  ];
  let dependentDialects = ["::fusec::FusecDialect"];
}

def FusecOutlineSingleOps : Pass<"fusec-outline-single-ops", "mlir::func::FuncOp"> {
  let summary = "One fusec.fusion per compute op: the unfused baseline (--no-fuse)";
  let description = [{
    `op => fusion(op)` for every compute op. Views and generators still fold
    into the kernels that read them, as in eager frameworks, so the baseline
    pays one HBM round trip per compute op and nothing else.
  }];
  let options = [
    Option<"copyBytesPerSec", "copy-bytes-per-sec", "double", /*default=*/"0",
           "copy bandwidth measured on this machine (0: the profile's)">,
    Option<"smCount", "sm-count", "int", /*default=*/"0",
           "SM count of the GPU at hand (0: the profile's)">,
    Option<"device", "device", "std::string", /*default=*/"\"h100\"",
           "device profile for the cost model">
  ];
  let dependentDialects = ["::fusec::FusecDialect"];
}

#endif // FUSEC_PASSES_TD
