// -fusec-outline-single-ops: the unfused baseline (--no-fuse), one fusion a
// compute op; views fold into the kernel that reads them, and a product runs
// on cuBLASLt.
// RUN: fusec-opt %s -fusec-outline-single-ops | FileCheck %s

// CHECK-LABEL: func.func @linear_gelu(
// CHECK:         fusec.fusion "matmul"
// CHECK-SAME:      family = #fusec.family<cublaslt>
// CHECK-SAME:      launches_unfused = 1
// CHECK-SAME:      name = "k0_matmul"
// CHECK:           fusec.transpose
// CHECK:           fusec.matmul
// CHECK:         fusec.fusion "pointwise"
// CHECK-SAME:      name = "k1_add"
// CHECK:         fusec.fusion "pointwise"
// CHECK-SAME:      name = "k2_gelu"
// CHECK-NOT:     fusec.fusion
func.func @linear_gelu(%x: tensor<64x256xbf16>, %w: tensor<128x256xbf16>, %b: tensor<128xbf16>) -> tensor<64x128xbf16> {
  %wt = fusec.transpose %w {perm = array<i64: 1, 0>} : (tensor<128x256xbf16>) -> tensor<256x128xbf16>
  %p = fusec.matmul %x, %wt : (tensor<64x256xbf16>, tensor<256x128xbf16>) -> tensor<64x128xbf16>
  %h = fusec.add %p, %b : (tensor<64x128xbf16>, tensor<128xbf16>) -> tensor<64x128xbf16>
  %g = fusec.gelu %h : (tensor<64x128xbf16>) -> tensor<64x128xbf16>
  return %g : tensor<64x128xbf16>
}
