// -fusec-fuse-vertical, the planner's pipeline: form groups, recompute
// producers, choose GEMM paths, form groups again, fuse siblings, outline
// (each pass has its own test beside this one).
// RUN: fusec-opt %s -split-input-file -fusec-fuse-vertical | FileCheck %s

// Producer-consumer chains merge when one kernel family takes the union:
// gelu(add(x, b)) => one pointwise kernel.
// CHECK-LABEL: func.func @gelu_bias(
// CHECK-SAME:    attributes {fusec.rejected = []}
// CHECK-COUNT-1: fusec.fusion "pointwise"
// CHECK-SAME:      name = "k0_add_gelu"
// CHECK-NOT:     fusec.fusion
func.func @gelu_bias(%x: tensor<1024x1024xbf16>, %b: tensor<1024xbf16>) -> tensor<1024x1024xbf16> {
  %0 = fusec.add %x, %b : (tensor<1024x1024xbf16>, tensor<1024xbf16>) -> tensor<1024x1024xbf16>
  %1 = fusec.gelu %0 : (tensor<1024x1024xbf16>) -> tensor<1024x1024xbf16>
  return %1 : tensor<1024x1024xbf16>
}

// -----

// softmax's max, sub, exp, sum and div share one row-reduction kernel.
// CHECK-LABEL: func.func @softmax(
// CHECK-COUNT-1: fusec.fusion "row_reduction"
// CHECK-SAME:      reduced_axes = array<i64: 1>
// CHECK-NOT:     fusec.fusion
func.func @softmax(%x: tensor<64x1024xf32>) -> tensor<64x1024xf32> {
  %m = fusec.max %x {axes = array<i64: 1>, keepdims = true} : (tensor<64x1024xf32>) -> tensor<64x1xf32>
  %d = fusec.sub %x, %m : (tensor<64x1024xf32>, tensor<64x1xf32>) -> tensor<64x1024xf32>
  %e = fusec.exp %d : (tensor<64x1024xf32>) -> tensor<64x1024xf32>
  %s = fusec.sum %e {axes = array<i64: 1>, keepdims = true} : (tensor<64x1024xf32>) -> tensor<64x1xf32>
  %y = fusec.div %e, %s : (tensor<64x1024xf32>, tensor<64x1xf32>) -> tensor<64x1024xf32>
  return %y : tensor<64x1024xf32>
}

// -----

// A product and its epilogue (bias, gelu, residual) are one matmul group;
// the planner's choice of who runs it is its kernel family, with the
// alternatives it priced.
// CHECK-LABEL: func.func @linear_gelu_residual(
// CHECK-COUNT-1: fusec.fusion "matmul"
// CHECK-SAME:      family = #fusec.family<gemm_wgmma>
// CHECK-SAME:      gemm_alternatives = "fusec GEMM (wgmma) with the epilogue: {{[0-9.]+}} us; cuBLASLt + epilogue kernel: {{[0-9.]+}} us; no cuBLASLt epilogue: gelu: cuBLASLt's GELU is the tanh form"
// CHECK-SAME:      name = "k0_matmul_add_gelu"
// CHECK-NOT:     fusec.fusion
func.func @linear_gelu_residual(%x: tensor<4096x1024xbf16>, %w: tensor<1024x1024xbf16>, %b: tensor<1024xbf16>, %r: tensor<4096x1024xbf16>) -> tensor<4096x1024xbf16> {
  %wt = fusec.transpose %w {perm = array<i64: 1, 0>} : (tensor<1024x1024xbf16>) -> tensor<1024x1024xbf16>
  %p = fusec.matmul %x, %wt : (tensor<4096x1024xbf16>, tensor<1024x1024xbf16>) -> tensor<4096x1024xbf16>
  %h = fusec.add %p, %b : (tensor<4096x1024xbf16>, tensor<1024xbf16>) -> tensor<4096x1024xbf16>
  %g = fusec.gelu %h : (tensor<4096x1024xbf16>) -> tensor<4096x1024xbf16>
  %y = fusec.add %g, %r : (tensor<4096x1024xbf16>, tensor<4096x1024xbf16>) -> tensor<4096x1024xbf16>
  return %y : tensor<4096x1024xbf16>
}

// -----

// A row sum and a column sum of one exp cannot share a kernel: the merge is
// rejected with its reason, and the exp is recomputed into the second
// group instead of being written and read back.
// CHECK-LABEL: func.func @row_then_column(
// CHECK-SAME:    fusec.recomputed = [#fusec.decision<producer = "exp", consumer = "sum", code = recomputed, reason = "{{[0-9.]+}} us recomputing vs {{[0-9.]+}} us reading it from memory", fused_us = {{[0-9.e+-]+}} : f64, apart_us = {{[0-9.e+-]+}} : f64>]
// CHECK-SAME:    fusec.rejected = [#fusec.decision<producer = "sum", consumer = "sum", code = no_kernel_family, reason = "reductions differ: sum reduces [256, 512] over [1], sum reduces [256, 512] over [0]">]
// CHECK:         fusec.fusion "row_reduction"
// CHECK:           fusec.exp
// CHECK:         fusec.fusion "column_reduction"
// CHECK:           fusec.exp {{.*}}{fusec.recomputed}
// CHECK-NOT:     fusec.fusion
func.func @row_then_column(%x: tensor<256x512xf32>) -> (tensor<256x1xf32>, tensor<1x512xf32>) {
  %e = fusec.exp %x : (tensor<256x512xf32>) -> tensor<256x512xf32>
  %r = fusec.sum %e {axes = array<i64: 1>, keepdims = true} : (tensor<256x512xf32>) -> tensor<256x1xf32>
  %c = fusec.sum %e {axes = array<i64: 0>, keepdims = true} : (tensor<256x512xf32>) -> tensor<1x512xf32>
  return %r, %c : tensor<256x1xf32>, tensor<1x512xf32>
}
