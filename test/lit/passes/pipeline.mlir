// --fusec-decompose-pipeline: -fusec-decompose, then canonicalize and CSE, the
// pipeline `fusec compile --emit decomposed` runs. Each case shows what the
// clean-up adds on top of the bare decomposition (fusec-decompose.mlir).
// RUN: fusec-opt %s -split-input-file --fusec-decompose-pipeline | FileCheck %s

// Two softmaxes of one input decompose into identical chains; CSE keeps one
// and both results read it.
// CHECK-LABEL: func.func @two_softmaxes(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<4x8xf32>
// CHECK-NEXT:    %[[MAX:.*]] = fusec.max %[[X]] {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[SHIFTED:.*]] = fusec.sub %[[X]], %[[MAX]] : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[EXP:.*]] = fusec.exp %[[SHIFTED]] : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[SUM:.*]] = fusec.sum %[[EXP]] {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[P:.*]] = fusec.div %[[EXP]], %[[SUM]] : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    return %[[P]], %[[P]] : tensor<4x8xf32>, tensor<4x8xf32>
func.func @two_softmaxes(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = fusec.softmax %x {axis = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = fusec.softmax %x {axis = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// softmax and log_softmax along one axis share max, sub, exp and sum; only
// the final div and log/sub differ.
// CHECK-LABEL: func.func @softmax_and_log_softmax(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<4x8xf32>
// CHECK-NEXT:    %[[MAX:.*]] = fusec.max %[[X]] {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[SHIFTED:.*]] = fusec.sub %[[X]], %[[MAX]] : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[EXP:.*]] = fusec.exp %[[SHIFTED]] : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[SUM:.*]] = fusec.sum %[[EXP]] {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[P:.*]] = fusec.div %[[EXP]], %[[SUM]] : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[LOG:.*]] = fusec.log %[[SUM]] : (tensor<4x1xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[LOGP:.*]] = fusec.sub %[[SHIFTED]], %[[LOG]] : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    return %[[P]], %[[LOGP]] : tensor<4x8xf32>, tensor<4x8xf32>
func.func @softmax_and_log_softmax(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = fusec.softmax %x {axis = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = fusec.log_softmax %x {axis = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Softmaxes along different axes share nothing: CSE must not merge them.
// CHECK-LABEL: func.func @softmax_different_axes(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<4x8xf32>
// CHECK-NEXT:    %[[MAX1:.*]] = fusec.max %[[X]] {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[SH1:.*]] = fusec.sub %[[X]], %[[MAX1]] : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[EXP1:.*]] = fusec.exp %[[SH1]] : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[SUM1:.*]] = fusec.sum %[[EXP1]] {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[P1:.*]] = fusec.div %[[EXP1]], %[[SUM1]] : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[MAX0:.*]] = fusec.max %[[X]] {axes = array<i64: 0>, keepdims = true} : (tensor<4x8xf32>) -> tensor<1x8xf32>
// CHECK-NEXT:    %[[SH0:.*]] = fusec.sub %[[X]], %[[MAX0]] : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[EXP0:.*]] = fusec.exp %[[SH0]] : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[SUM0:.*]] = fusec.sum %[[EXP0]] {axes = array<i64: 0>, keepdims = true} : (tensor<4x8xf32>) -> tensor<1x8xf32>
// CHECK-NEXT:    %[[P0:.*]] = fusec.div %[[EXP0]], %[[SUM0]] : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    return %[[P1]], %[[P0]] : tensor<4x8xf32>, tensor<4x8xf32>
func.func @softmax_different_axes(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = fusec.softmax %x {axis = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = fusec.softmax %x {axis = 0 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Without a mask or causal, attention decomposes to matmul, scale, softmax,
// matmul and nothing else (no -inf constant).
// CHECK-LABEL: func.func @attention_drops_dead_constant(
// CHECK-SAME:    %[[Q:[^:]*]]: tensor<16x64xf32>, %[[K:[^:]*]]: tensor<32x64xf32>, %[[V:[^:]*]]: tensor<32x64xf32>
// CHECK-NEXT:    %[[KT:.*]] = fusec.transpose %[[K]] {perm = array<i64: 1, 0>} : (tensor<32x64xf32>) -> tensor<64x32xf32>
// CHECK-NEXT:    %[[QK:.*]] = fusec.matmul %[[Q]], %[[KT]] : (tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32>
// CHECK-NEXT:    %[[SCALE:.*]] = fusec.constant {value = 1.250000e-01 : f64} : tensor<f32>
// CHECK-NEXT:    %[[S:.*]] = fusec.mul %[[QK]], %[[SCALE]] : (tensor<16x32xf32>, tensor<f32>) -> tensor<16x32xf32>
// CHECK-NEXT:    %[[MAX:.*]] = fusec.max %[[S]] {axes = array<i64: 1>, keepdims = true} : (tensor<16x32xf32>) -> tensor<16x1xf32>
// CHECK-NEXT:    %[[SHIFTED:.*]] = fusec.sub %[[S]], %[[MAX]] : (tensor<16x32xf32>, tensor<16x1xf32>) -> tensor<16x32xf32>
// CHECK-NEXT:    %[[EXP:.*]] = fusec.exp %[[SHIFTED]] : (tensor<16x32xf32>) -> tensor<16x32xf32>
// CHECK-NEXT:    %[[SUM:.*]] = fusec.sum %[[EXP]] {axes = array<i64: 1>, keepdims = true} : (tensor<16x32xf32>) -> tensor<16x1xf32>
// CHECK-NEXT:    %[[P:.*]] = fusec.div %[[EXP]], %[[SUM]] : (tensor<16x32xf32>, tensor<16x1xf32>) -> tensor<16x32xf32>
// CHECK-NEXT:    %[[OUT:.*]] = fusec.matmul %[[P]], %[[V]] : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
// CHECK-NEXT:    return %[[OUT]] : tensor<16x64xf32>
func.func @attention_drops_dead_constant(%q: tensor<16x64xf32>, %k: tensor<32x64xf32>, %v: tensor<32x64xf32>) -> tensor<16x64xf32> {
  %0 = fusec.scaled_dot_product_attention %q, %k, %v : (tensor<16x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
  return %0 : tensor<16x64xf32>
}

// -----

// A composite whose result is unused disappears with all its primitives.
// CHECK-LABEL: func.func @unused_composite(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<4x8xf32>, %{{[^:]*}}: tensor<8xf32>
// CHECK-NEXT:    %[[EXP:.*]] = fusec.exp %[[X]] : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    return %[[EXP]] : tensor<4x8xf32>
func.func @unused_composite(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = fusec.layer_norm %x weight(%w) {axis = 1 : i64, eps = 1.0e-5 : f64} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = fusec.exp %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// Two linears with one weight transpose it once.
// CHECK-LABEL: func.func @linears_share_weight(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<4x8xbf16>, %[[Y:[^:]*]]: tensor<2x8xbf16>, %[[W:[^:]*]]: tensor<16x8xbf16>
// CHECK-NEXT:    %[[WT:.*]] = fusec.transpose %[[W]] {perm = array<i64: 1, 0>} : (tensor<16x8xbf16>) -> tensor<8x16xbf16>
// CHECK-NEXT:    %[[XW:.*]] = fusec.matmul %[[X]], %[[WT]] : (tensor<4x8xbf16>, tensor<8x16xbf16>) -> tensor<4x16xbf16>
// CHECK-NEXT:    %[[YW:.*]] = fusec.matmul %[[Y]], %[[WT]] : (tensor<2x8xbf16>, tensor<8x16xbf16>) -> tensor<2x16xbf16>
// CHECK-NEXT:    return %[[XW]], %[[YW]] : tensor<4x16xbf16>, tensor<2x16xbf16>
func.func @linears_share_weight(%x: tensor<4x8xbf16>, %y: tensor<2x8xbf16>, %w: tensor<16x8xbf16>) -> (tensor<4x16xbf16>, tensor<2x16xbf16>) {
  %0 = fusec.linear %x, %w : (tensor<4x8xbf16>, tensor<16x8xbf16>) -> tensor<4x16xbf16>
  %1 = fusec.linear %y, %w : (tensor<2x8xbf16>, tensor<16x8xbf16>) -> tensor<2x16xbf16>
  return %0, %1 : tensor<4x16xbf16>, tensor<2x16xbf16>
}

// -----

// layer_norm and rms_norm of different inputs with the same eps and dtype share
// one eps constant, and nothing else.
// CHECK-LABEL: func.func @norms_share_eps(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<4x8xf32>, %[[Y:[^:]*]]: tensor<4x8xf32>
// CHECK-NEXT:    %[[MEAN:.*]] = fusec.mean %[[X]] {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[D:.*]] = fusec.sub %[[X]], %[[MEAN]] : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[D2:.*]] = fusec.mul %[[D]], %[[D]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[VAR:.*]] = fusec.mean %[[D2]] {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[EPS:.*]] = fusec.constant {value = 1.000000e-05 : f64} : tensor<f32>
// CHECK-NEXT:    %[[ADD1:.*]] = fusec.add %[[VAR]], %[[EPS]] : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[INV1:.*]] = fusec.rsqrt %[[ADD1]] : (tensor<4x1xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[LN:.*]] = fusec.mul %[[D]], %[[INV1]] : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[SQ:.*]] = fusec.mul %[[Y]], %[[Y]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[MS:.*]] = fusec.mean %[[SQ]] {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[ADD2:.*]] = fusec.add %[[MS]], %[[EPS]] : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[INV2:.*]] = fusec.rsqrt %[[ADD2]] : (tensor<4x1xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[RMS:.*]] = fusec.mul %[[Y]], %[[INV2]] : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    return %[[LN]], %[[RMS]] : tensor<4x8xf32>, tensor<4x8xf32>
func.func @norms_share_eps(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = fusec.layer_norm %x {axis = 1 : i64, eps = 1.0e-5 : f64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = fusec.rms_norm %y {eps = 1.0e-5 : f64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}
