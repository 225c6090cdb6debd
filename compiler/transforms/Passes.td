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

def FusecPadSizes : Pass<"fusec-pad-sizes", "mlir::func::FuncOp"> {
  let summary = "Make a graph compiled at padded sizes exact at every size up to them";
  let description = [{
    Reads the dims marked `fusec.size_dims` (SizeDims.h: which dims of each
    value are a named size) and adds an i32 argument a name, the size a call
    runs at (`fusec.size_of`). Positions past it are padding: the runtime
    pads the inputs with zeros and drops them from the outputs. Ops that
    move or map elements leave them in place; ops that combine positions
    along a padded dim see them masked to the combination's identity:

    ```
    sum/max/min/argmax(x) over S  => the same of where(iota < size, x, identity)
    mean(x) over S                => sum(masked x) / (size * fixed dims)
    softmax(x) over S             => softmax(where(iota < size, x, -inf))
    matmul contracting S          => matmul of both operands zeroed past S
    sdpa, keys over S             => mask and(iota < size); v zeroed past S
    ```
    An operand known to be zero past the size (an input, a masked value, a
    softmax over its only padded dim) is not masked again. Causal attention
    over its own padded queries needs no mask. An op that cannot be made
    exact (a concat or a gather along a padded dim, a reshape that merges
    one, a normalization over one) is an error naming the node. The marks
    leave the ops; the function's arguments and results keep theirs.
  }];
  let dependentDialects = ["::fusec::FusecDialect"];
}

def FusecCloneIndexMath : Pass<"fusec-clone-index-math", "mlir::func::FuncOp"> {
  let summary = "Give every reader of index math (iotas, constants, one-element arguments) its own copy";
  let description = [{
    Index math (views and elementwise ops over iotas, constants and
    one-element arguments, such as a causal mask's comparison or a padded
    program's key mask against its size) reads no memory, but one value read
    by several groups would be written and read back. Each op that reads
    index math another reader also reaches gets a copy of all the index math
    it reads, placed just ahead of it, undoing what CSE merged across a
    model's layers:

    ```
    %m = fusec.ge %rows, %cols        %m0 = fusec.ge %rows, %cols
    %a = use(%m)                      %a = use(%m0)
    %b = use(%m)                 =>   %m1 = fusec.ge %rows, %cols
                                      %b = use(%m1)
    ```
  }];
  let dependentDialects = ["::fusec::FusecDialect"];
}

def FusecSplitWideConcats : Pass<"fusec-split-wide-concats", "mlir::func::FuncOp"> {
  let summary = "Join many tensors in rounds, so that no kernel takes more buffers than it may";
  let description = [{
    A kernel's parameters are its buffers, and a launch takes a bounded
    number (kMaxKernelBuffers, GroupSchedule.h). A concat of more inputs than
    that becomes concats of at most kConcatInputsPerKernel inputs each,
    joined by concats of their results, along the same axis:

    ```
    concat(x0, ..., x99) => concat(concat(x0..x31), concat(x32..x63), ...)
    ```
  }];
  let dependentDialects = ["::fusec::FusecDialect"];
}

def FusecPickEarly : Pass<"fusec-pick-early", "mlir::func::FuncOp"> {
  let summary = "Pick a row's element before the row's statistics are applied to it";
  let description = [{
    A pick sums one element a row, `sum(where(iota == t, T, 0))` over the
    iota's axis with t the same along it. Where T is an elementwise op
    (add, sub, mul, div, neg) of one operand that varies along the row and
    others that do not, at least one computed from a reduction (a row
    statistic), the pick moves to the varying operand:

    ```
    sum(where(iota == t, f(a, r), 0)) => where(0 <= t < n, f(sum(where(iota == t, a, 0)), r) + 0, 0)
    ```
    exactly: one term or none, and + 0 gives a zero the sign the sum gives
    it. (The divisor of a div stays in the row: its pick would be +0 where
    the term is -0.) Runs with fusion only, like -fusec-fold-repeated-heads,
    so explain's unfused figures count the rewritten ops. A cross-entropy written as log-softmax
    then a pick, `x - m - log(l)`, then picks x itself, which a product's
    streamed row statistics take (schedule/RowStatsForm.h).
  }];
  let dependentDialects = ["::fusec::FusecDialect"];
}

def FusecPartition : Pass<"fusec-partition", "mlir::func::FuncOp"> {
  let summary = "Split a graph over ranks by its sharded arguments, inserting the collectives";
  let description = [{
    Arguments marked `fusec.shard = A` (a parameter's or an input's split
    dim, from the graph's `shard` fields or `--shard`) hold on each rank
    the rank's block of dim A, 1/ranks of it. Every value then has a
    layout: replicated (all of it on every rank), sharded along a dim, or
    partial (each rank holds a term of a sum). Going through the ops in
    order, each op keeps its operands' shards where its rule allows and
    computes on local shapes:

    ```
    elementwise      operands sharded on the same result dim, the others
                     of extent 1 (or missing) there       -> sharded
    matmul           A[.., M, K] x B[.., K, N]: B split on N -> split on N;
                     A split on M or a batch dim            -> split there;
                     both split on K                        -> partial
    sum over the split dim -> partial; max, min -> all_reduce(max, min)
    reshape, transpose, broadcast_to, slice, concat, gather: the split dim
                     followed where it stays one dim of whole blocks
    ```
    Anything else gets its operands whole first: a sharded operand through
    `all_gather`, a partial one through `all_reduce(sum)`, once per value.
    The results of the graph are made whole the same way, except those
    asked to stay split (`fusec.shard` on the result) that are split so:
    each rank returns its block (a rank's heads of a KV cache). The function
    is then the program of every rank (`fusec.ranks` on it); each rank runs
    it on its shards.
  }];
  let options = [
    Option<"ranks", "ranks", "int", /*default=*/"1", "ranks to split over (1: leave the graph whole)">,
  ];
  let dependentDialects = ["::fusec::FusecDialect"];
}

//===----------------------------------------------------------------------===//
// Fusion
//===----------------------------------------------------------------------===//

// The planner's passes share one set of options: the device the cost model
// prices for, the target (which fusec GEMM kernels exist) and the GEMM choice.
defvar GroupingOptions = [
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
         "with the epilogue fused; row statistics always streamed), cublaslt (cuBLASLt, applying the epilogue itself where it can, else the epilogue as its own kernel; nothing streamed)">
];

// Until outlining, a group is the compute ops that carry the same
// `fusec.group` index (groups in index order, ops in program order); each
// planner pass reads the groups, changes them, and writes them back.
// Decisions accumulate in the function's `fusec.rejected` and
// `fusec.recomputed` lists (#fusec.decision records for `fusec explain`).

def FusecFormAttention : Pass<"fusec-form-attention", "mlir::func::FuncOp"> {
  let summary = "Group each softmax that rescales a contraction, and each row log-sum-exp of a product, into one streamed kernel";
  let description = [{
    The streaming-reduction rule (compiler/schedule/AttentionForm.h): a row
    softmax over the last axis of a product's scores, after elementwise ops
    (a scale, a mask), whose probabilities feed a second product over that
    axis, becomes one group that the attention family streams, S and P
    never in memory. It fires on attention written from primitives and on
    the decomposed scaled_dot_product_attention alike:

    ```
    s = matmul(q, transpose(k)); x = where(mask, mul(s, c), -inf)
    p = div(exp(sub(x, max(x))), sum(exp(sub(x, max(x)))))
    o = matmul(p, v)
      => every op above {fusec.group = N}, every other compute op a group
         of its own
    ```
    The same rule without the second product (RowStatsForm.h): the row max
    and sum of exponentials over a product's output, and the elementwise ops
    on them (a log-sum-exp), become one group streamed in the product's
    epilogue, where nothing else reads the product and the cost model
    predicts it faster than the product followed by a row reduction:

    ```
    x = matmul(h, w); m = max(x); l = sum(exp(sub(x, m))); lse = add(log(l), m)
      => every op above {fusec.group = N}
    ```
    Where the structure matches but the kernel declines (head dim, dtype,
    layout, few query rows; or streaming is predicted slower), the reason is
    recorded in `fusec.rejected`. A function without either is left as it is.
  }];
  let options = GroupingOptions;
  let dependentDialects = ["::fusec::FusecDialect"];
}

def FusecFormGroups : Pass<"fusec-form-groups", "mlir::func::FuncOp"> {
  let summary = "Merge producer-consumer chains into groups the cost model prices faster";
  let description = [{
    Walks compute ops in program order and merges each op's group with the
    groups of its producers (largest operand first) when the union fits one
    kernel family (compiler/schedule/GroupSchedule.h), creates no cycle, and
    the cost model predicts it faster than the two apart:

    ```
    gelu(add(x, b))                 => add {fusec.group = 0}; gelu {fusec.group = 0}
    div(exp(sub(x, max(x))), sum)   => max, sub, exp, sum, div all {fusec.group = 0}
    ```
    Ops without a group start in one of their own. Once matmul groups have
    chosen how they run (`-fusec-choose-gemm-paths`, a `fusec.family` on
    the matmul), they take no more ops: the second run only lets split-off
    epilogues join their consumers. Every merge considered and rejected is
    recorded with its reason code, sentence and, where the cost model
    decided, both predicted times.
  }];
  let options = GroupingOptions;
  let dependentDialects = ["::fusec::FusecDialect"];
}

def FusecRecomputeProducers : Pass<"fusec-recompute-producers", "mlir::func::FuncOp"> {
  let summary = "Clone cheap elementwise producers into the groups that read them";
  let description = [{
    An elementwise op whose result another group reads from HBM (a
    multi-consumer intermediate) is cloned into that group, alone or with
    the elementwise chain behind it in its group, when the cost model
    predicts both groups faster that way: the consumer reads the op's
    inputs instead of its result, and the producer group may stop writing
    it. Clones carry `fusec.recomputed` (the unfused baseline counts each
    graph op once); both outcomes are recorded (`fusec.recomputed`,
    `fusec.rejected`).
  }];
  let options = GroupingOptions;
  let dependentDialects = ["::fusec::FusecDialect"];
}

def FusecChooseGemmPaths : Pass<"fusec-choose-gemm-paths", "mlir::func::FuncOp"> {
  let summary = "Choose how each matmul group runs: fusec's GEMM kernels or cuBLASLt";
  let description = [{
    Each matmul group is [prologue] matmul [epilogue]. The cost model prices
    fusec's kernel with the whole group, with the prologue as a kernel of its
    own, cuBLASLt with the epilogue as a kernel of its own (or in its
    consumer's), and cuBLASLt applying the epilogue itself where it
    expresses it exactly. The choice is a `fusec.family` on the matmul, the
    priced alternatives `fusec.gemm_alternatives`; a group that does not run
    whole is split (the prologue's ops and the epilogue become groups of
    their own).
  }];
  let options = GroupingOptions;
  let dependentDialects = ["::fusec::FusecDialect"];
}

def FusecFuseSiblings : Pass<"fusec-fuse-siblings", "mlir::func::FuncOp"> {
  let summary = "One kernel for sibling matmuls that read the same A";
  let description = [{
    At decode sizes fusec's dot-product kernel streams the weights of all
    matmuls of one A with A read once; 9-64 row products of one A join in
    one tensor-core dot-product kernel; on Hopper, products written as they
    are (Q/K/V) become one wgmma kernel over their tiles side by side. Each
    merge is taken when the cost model predicts it faster than the parts on
    their chosen paths.
  }];
  let options = GroupingOptions;
  let dependentDialects = ["::fusec::FusecDialect"];
}

def FusecOutlineGroups : Pass<"fusec-outline-groups", "mlir::func::FuncOp"> {
  let summary = "Turn each group into a fusec.fusion op with its schedule and cost";
  let description = [{
    Each group (compute ops with one `fusec.group` index) becomes one
    isolated fusec.fusion region op, with the views and generators that feed
    it cloned in; matmul operands a library cannot read in place, and graph
    outputs that no kernel writes, get copy groups of their own. The fusion
    carries its domain, bytes fused and unfused, flops and predicted times;
    a matmul group carries the planner's family.

    ```
    add {fusec.group = 0}; gelu {fusec.group = 0}
      => fusion "pointwise" (x, b) { add; gelu } {name = "k0_add_gelu", ...}
    ```
  }];
  let options = GroupingOptions;
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
