// -fusec-outline-groups: each recorded group becomes one fusec.fusion with
// its schedule and cost; the planner's marks leave the IR.
// RUN: fusec-opt %s -split-input-file -fusec-outline-groups | FileCheck %s

// Two groups in index order, the second reading the first.
// CHECK-LABEL: func.func @two_groups(
// CHECK:         %[[A:.*]] = fusec.fusion "pointwise"(%arg0, %arg1)
// CHECK-SAME:      bytes_fused = 4196352
// CHECK-SAME:      name = "k0_add_gelu"
// CHECK:           fusec.add
// CHECK-NOT:       fusec.group
// CHECK:           fusec.gelu
// CHECK:         fusec.fusion "row_reduction"(%[[A]])
// CHECK-SAME:      name = "k1_sum"
// CHECK-SAME:      reduced_axes = array<i64: 1>
// CHECK-NOT:     fusec.group
func.func @two_groups(%x: tensor<1024x1024xbf16>, %b: tensor<1024xbf16>) -> tensor<1024x1xbf16> {
  %0 = fusec.add %x, %b {fusec.group = 0 : i64} : (tensor<1024x1024xbf16>, tensor<1024xbf16>) -> tensor<1024x1024xbf16>
  %1 = fusec.gelu %0 {fusec.group = 0 : i64} : (tensor<1024x1024xbf16>) -> tensor<1024x1024xbf16>
  %2 = fusec.sum %1 {axes = array<i64: 1>, fusec.group = 1 : i64, keepdims = true} : (tensor<1024x1024xbf16>) -> tensor<1024x1xbf16>
  return %2 : tensor<1024x1xbf16>
}

// -----

// A recomputed copy is a member of its group; its marks are dropped and
// fusec.recomputed stays (the unfused baseline counts the op once).
// CHECK-LABEL: func.func @with_copy(
// CHECK:         fusec.fusion "row_reduction"
// CHECK:         fusec.fusion "column_reduction"
// CHECK:           fusec.exp %{{.*}} {fusec.recomputed}
func.func @with_copy(%x: tensor<256x512xf32>) -> (tensor<256x1xf32>, tensor<1x512xf32>) {
  %e = fusec.exp %x {fusec.group = 0 : i64} : (tensor<256x512xf32>) -> tensor<256x512xf32>
  %r = fusec.sum %e {axes = array<i64: 1>, fusec.group = 0 : i64, keepdims = true} : (tensor<256x512xf32>) -> tensor<256x1xf32>
  %c2 = fusec.exp %x {fusec.copy, fusec.group = 1 : i64, fusec.recomputed} : (tensor<256x512xf32>) -> tensor<256x512xf32>
  %c = fusec.sum %c2 {axes = array<i64: 0>, fusec.group = 1 : i64, keepdims = true} : (tensor<256x512xf32>) -> tensor<1x512xf32>
  return %r, %c : tensor<256x1xf32>, tensor<1x512xf32>
}

// -----

// A graph output that no group writes (here an input) gets a copy kernel.
// CHECK-LABEL: func.func @passthrough(
// CHECK:         fusec.fusion "pointwise"(%arg0) {{.*}}name = "k0_exp"
// CHECK:         fusec.fusion "pointwise"(%arg0) {{.*}}name = "k1_copy"
// CHECK:           fusec.reshape
func.func @passthrough(%x: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %0 = fusec.exp %x {fusec.group = 0 : i64} : (tensor<64xf32>) -> tensor<64xf32>
  return %0, %x : tensor<64xf32>, tensor<64xf32>
}
