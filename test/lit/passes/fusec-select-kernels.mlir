// -fusec-select-kernels: each fused group gets the first kernel family of its
// kind (compiler/families/Registry.cpp) that takes it; the families asked
// before it are recorded with their reasons. A group that already has a
// family (a matmul, as the planner chose) keeps it.
// RUN: fusec-opt %s -split-input-file -fusec-select-kernels | FileCheck %s
// RUN: fusec-opt %s -split-input-file '-fusec-select-kernels=arch=sm_80' | FileCheck %s --check-prefix=AMPERE

// A one-phase column sum streams with its rows split; the cluster softmax
// declines it (Hopper) or needs clusters the target lacks (sm_80).
// CHECK-LABEL: func.func @column_sum(
// CHECK:         fusec.fusion "column_reduction"
// CHECK-SAME:      family = #fusec.family<column_streamed>
// CHECK-SAME:      family_rejections = [{family = #fusec.family<column_online_softmax>, reason = "not a softmax over the reduced dims"}]
// AMPERE-LABEL: func.func @column_sum(
// AMPERE:         family = #fusec.family<column_streamed>
// AMPERE-SAME:    family_rejections = [{family = #fusec.family<column_online_softmax>, reason = "needs thread block clusters (sm_90 or newer; target sm_80)"}]
func.func @column_sum(%x: tensor<4096x256xf32>) -> tensor<1x256xf32> {
  %0 = fusec.fusion "column_reduction"(%x) {domain = array<i64: 4096, 256>, name = "k0_sum", reduced_axes = array<i64: 0>} : (tensor<4096x256xf32>) -> tensor<1x256xf32> {
  ^bb0(%a: tensor<4096x256xf32>):
    %s = fusec.sum %a {axes = array<i64: 0>, keepdims = true} : (tensor<4096x256xf32>) -> tensor<1x256xf32>
    fusec.yield %s : tensor<1x256xf32>
  }
  return %0 : tensor<1x256xf32>
}

// -----

// Softmax over dim 0: one pass in a cluster on Hopper; before it, the
// streamed form declines (two phases) and the cooperative team keeps the
// column on chip.
// CHECK-LABEL: func.func @softmax_dim0(
// CHECK:         family = #fusec.family<column_online_softmax>
// CHECK-NOT:     family_rejections
// AMPERE-LABEL: func.func @softmax_dim0(
// AMPERE:         family = #fusec.family<column_cooperative>
// AMPERE-SAME:    family_rejections = [{family = #fusec.family<column_online_softmax>, reason = "needs thread block clusters {{.*}}"}, {family = #fusec.family<column_streamed>, reason = "reads its data more than once {{.*}}"}]
func.func @softmax_dim0(%x: tensor<8192x8192xbf16>) -> tensor<8192x8192xbf16> {
  %0 = fusec.fusion "column_reduction"(%x) {domain = array<i64: 8192, 8192>, name = "k0_softmax", reduced_axes = array<i64: 0>} : (tensor<8192x8192xbf16>) -> tensor<8192x8192xbf16> {
  ^bb0(%a: tensor<8192x8192xbf16>):
    %m = fusec.max %a {axes = array<i64: 0>, keepdims = true} : (tensor<8192x8192xbf16>) -> tensor<1x8192xbf16>
    %d = fusec.sub %a, %m : (tensor<8192x8192xbf16>, tensor<1x8192xbf16>) -> tensor<8192x8192xbf16>
    %e = fusec.exp %d : (tensor<8192x8192xbf16>) -> tensor<8192x8192xbf16>
    %s = fusec.sum %e {axes = array<i64: 0>, keepdims = true} : (tensor<8192x8192xbf16>) -> tensor<1x8192xbf16>
    %y = fusec.div %e, %s : (tensor<8192x8192xbf16>, tensor<1x8192xbf16>) -> tensor<8192x8192xbf16>
    fusec.yield %y : tensor<8192x8192xbf16>
  }
  return %0 : tensor<8192x8192xbf16>
}

// -----

// A pointwise group reads and writes along one contiguous dim: the plain
// family, after the tiled transpose declines.
// CHECK-LABEL: func.func @add(
// CHECK:         family = #fusec.family<pointwise>
// CHECK-SAME:    family_rejections = [{family = #fusec.family<pointwise_transpose>, reason = "no input is contiguous along another dim than the outputs"}]
func.func @add(%x: tensor<64x64xf32>, %b: tensor<64xf32>) -> tensor<64x64xf32> {
  %0 = fusec.fusion "pointwise"(%x, %b) {domain = array<i64: 64, 64>, name = "k0_add"} : (tensor<64x64xf32>, tensor<64xf32>) -> tensor<64x64xf32> {
  ^bb0(%a: tensor<64x64xf32>, %c: tensor<64xf32>):
    %y = fusec.add %a, %c : (tensor<64x64xf32>, tensor<64xf32>) -> tensor<64x64xf32>
    fusec.yield %y : tensor<64x64xf32>
  }
  return %0 : tensor<64x64xf32>
}

// -----

// A transposed input: the tiled family takes it first.
// CHECK-LABEL: func.func @transpose_add(
// CHECK:         family = #fusec.family<pointwise_transpose>
// CHECK-NOT:     family_rejections
func.func @transpose_add(%x: tensor<64x128xf32>, %y: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %0 = fusec.fusion "pointwise"(%x, %y) {domain = array<i64: 128, 64>, name = "k0_transpose_add"} : (tensor<64x128xf32>, tensor<128x64xf32>) -> tensor<128x64xf32> {
  ^bb0(%a: tensor<64x128xf32>, %c: tensor<128x64xf32>):
    %t = fusec.transpose %a {perm = array<i64: 1, 0>} : (tensor<64x128xf32>) -> tensor<128x64xf32>
    %r = fusec.add %t, %c : (tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
    fusec.yield %r : tensor<128x64xf32>
  }
  return %0 : tensor<128x64xf32>
}

// -----

// A matmul group keeps the family the planner gave it.
// CHECK-LABEL: func.func @planned(
// CHECK:         family = #fusec.family<gemm_wgmma>
// CHECK-NOT:     family_rejections
func.func @planned(%a: tensor<256x64xbf16>, %b: tensor<64x256xbf16>) -> tensor<256x256xbf16> {
  %0 = fusec.fusion "matmul"(%a, %b) {domain = array<i64: 256, 256>, family = #fusec.family<gemm_wgmma>, name = "k0_matmul"} : (tensor<256x64xbf16>, tensor<64x256xbf16>) -> tensor<256x256xbf16> {
  ^bb0(%x: tensor<256x64xbf16>, %w: tensor<64x256xbf16>):
    %y = fusec.matmul %x, %w : (tensor<256x64xbf16>, tensor<64x256xbf16>) -> tensor<256x256xbf16>
    fusec.yield %y : tensor<256x256xbf16>
  }
  return %0 : tensor<256x256xbf16>
}
