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
  }];
  let dependentDialects = ["::fusec::FusecDialect"];
}

#endif // FUSEC_PASSES_TD
