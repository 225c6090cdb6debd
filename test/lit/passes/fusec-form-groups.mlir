// -fusec-form-groups: greedy producer-consumer merges priced by the cost
// model; the groups are `fusec.group` indices on their ops, the rejected
// merges #fusec.decision records on the function.
// RUN: fusec-opt %s -split-input-file -fusec-form-groups | FileCheck %s

// gelu(add(x, b)) is one pointwise group.
// CHECK-LABEL: func.func @gelu_bias(
// CHECK-SAME:    attributes {fusec.rejected = []}
// CHECK:         fusec.add {{.*}}{fusec.group = 0 : i64}
// CHECK:         fusec.gelu {{.*}}{fusec.group = 0 : i64}
func.func @gelu_bias(%x: tensor<1024x1024xbf16>, %b: tensor<1024xbf16>) -> tensor<1024x1024xbf16> {
  %0 = fusec.add %x, %b : (tensor<1024x1024xbf16>, tensor<1024xbf16>) -> tensor<1024x1024xbf16>
  %1 = fusec.gelu %0 : (tensor<1024x1024xbf16>) -> tensor<1024x1024xbf16>
  return %1 : tensor<1024x1024xbf16>
}

// -----

// A row sum and a column sum of one exp fit no kernel family together: the
// column sum stays a group of its own and the rejection says why.
// CHECK-LABEL: func.func @row_then_column(
// CHECK-SAME:    fusec.rejected = [#fusec.decision<producer = "sum", consumer = "sum", code = no_kernel_family, reason = "reductions differ: sum reduces [256, 512] over [1], sum reduces [256, 512] over [0]">]
// CHECK:         fusec.exp {{.*}}{fusec.group = 0 : i64}
// CHECK:         fusec.sum {{.*}}fusec.group = 0 : i64
// CHECK:         fusec.sum {{.*}}fusec.group = 1 : i64
func.func @row_then_column(%x: tensor<256x512xf32>) -> (tensor<256x1xf32>, tensor<1x512xf32>) {
  %e = fusec.exp %x : (tensor<256x512xf32>) -> tensor<256x512xf32>
  %r = fusec.sum %e {axes = array<i64: 1>, keepdims = true} : (tensor<256x512xf32>) -> tensor<256x1xf32>
  %c = fusec.sum %e {axes = array<i64: 0>, keepdims = true} : (tensor<256x512xf32>) -> tensor<1x512xf32>
  return %r, %c : tensor<256x1xf32>, tensor<1x512xf32>
}

// -----

// Once a matmul has its family (-fusec-choose-gemm-paths ran), its group
// takes no more ops: the epilogue split off for cuBLASLt stays apart, and
// what follows it still merges with it.
// CHECK-LABEL: func.func @closed_matmul(
// CHECK:         fusec.matmul {{.*}}fusec.group = 0 : i64
// CHECK:         fusec.add {{.*}}{fusec.group = 1 : i64}
// CHECK:         fusec.gelu {{.*}}{fusec.group = 1 : i64}
func.func @closed_matmul(%x: tensor<4096x1024xbf16>, %w: tensor<1024x1024xbf16>, %b: tensor<1024xbf16>) -> tensor<4096x1024xbf16> {
  %p = fusec.matmul %x, %w {fusec.family = #fusec.family<cublaslt>, fusec.group = 0 : i64} : (tensor<4096x1024xbf16>, tensor<1024x1024xbf16>) -> tensor<4096x1024xbf16>
  %h = fusec.add %p, %b {fusec.group = 1 : i64} : (tensor<4096x1024xbf16>, tensor<1024xbf16>) -> tensor<4096x1024xbf16>
  %g = fusec.gelu %h : (tensor<4096x1024xbf16>) -> tensor<4096x1024xbf16>
  return %g : tensor<4096x1024xbf16>
}

// -----

// A merge the cost model prices slower is rejected with both predictions:
// decode SwiGLU at 32 rows, where the gate's group (matmul, silu) does not
// take the up product (two 14336-column dot products in one kernel).
// CHECK-LABEL: func.func @not_faster(
// CHECK-SAME:    #fusec.decision<producer = "matmul", consumer = "mul", code = not_faster, reason = "not faster: {{[0-9.]+}} us fused vs {{[0-9.]+}} us apart", fused_us = {{.*}}, apart_us = {{.*}}>
// CHECK:         fusec.matmul {{.*}}fusec.group = 0 : i64
// CHECK:         fusec.silu {{.*}}fusec.group = 0 : i64
// CHECK:         fusec.matmul {{.*}}fusec.group = 1 : i64
// CHECK:         fusec.mul {{.*}}fusec.group = 0 : i64
func.func @not_faster(%x: tensor<32x4096xbf16>, %wg: tensor<14336x4096xbf16>, %wu: tensor<14336x4096xbf16>) -> tensor<32x14336xbf16> {
  %tg = fusec.transpose %wg {perm = array<i64: 1, 0>} : (tensor<14336x4096xbf16>) -> tensor<4096x14336xbf16>
  %g = fusec.matmul %x, %tg : (tensor<32x4096xbf16>, tensor<4096x14336xbf16>) -> tensor<32x14336xbf16>
  %s = fusec.silu %g : (tensor<32x14336xbf16>) -> tensor<32x14336xbf16>
  %tu = fusec.transpose %wu {perm = array<i64: 1, 0>} : (tensor<14336x4096xbf16>) -> tensor<4096x14336xbf16>
  %u = fusec.matmul %x, %tu : (tensor<32x4096xbf16>, tensor<4096x14336xbf16>) -> tensor<32x14336xbf16>
  %h = fusec.mul %s, %u : (tensor<32x14336xbf16>, tensor<32x14336xbf16>) -> tensor<32x14336xbf16>
  return %h : tensor<32x14336xbf16>
}
