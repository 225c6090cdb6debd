// -fusec-decompose rewrites each composite op into exactly the primitive sequence
// written in Passes.td. CHECK-NEXT pins the whole sequence: no op may be added,
// dropped or reordered without this test noticing.
// RUN: fusec-opt %s -split-input-file -fusec-decompose | FileCheck %s

// softmax(x, a) => div(exp(sub(x, max(x, a))), sum(exp(sub(x, max(x, a))), a))
// CHECK-LABEL: func.func @softmax_last_axis(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<4x8xf32>
// CHECK-NEXT:    %[[MAX:.*]] = fusec.max %[[X]] {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[SHIFTED:.*]] = fusec.sub %[[X]], %[[MAX]] : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[EXP:.*]] = fusec.exp %[[SHIFTED]] : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[SUM:.*]] = fusec.sum %[[EXP]] {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[DIV:.*]] = fusec.div %[[EXP]], %[[SUM]] : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    return %[[DIV]] : tensor<4x8xf32>
func.func @softmax_last_axis(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = fusec.softmax %x {axis = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// The statistics keep the reduced dim as 1, whatever the axis.
// CHECK-LABEL: func.func @softmax_middle_axis(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<2x3x4xbf16>
// CHECK-NEXT:    %[[MAX:.*]] = fusec.max %[[X]] {axes = array<i64: 1>, keepdims = true} : (tensor<2x3x4xbf16>) -> tensor<2x1x4xbf16>
// CHECK-NEXT:    %[[SHIFTED:.*]] = fusec.sub %[[X]], %[[MAX]] : (tensor<2x3x4xbf16>, tensor<2x1x4xbf16>) -> tensor<2x3x4xbf16>
// CHECK-NEXT:    %[[EXP:.*]] = fusec.exp %[[SHIFTED]] : (tensor<2x3x4xbf16>) -> tensor<2x3x4xbf16>
// CHECK-NEXT:    %[[SUM:.*]] = fusec.sum %[[EXP]] {axes = array<i64: 1>, keepdims = true} : (tensor<2x3x4xbf16>) -> tensor<2x1x4xbf16>
// CHECK-NEXT:    %[[DIV:.*]] = fusec.div %[[EXP]], %[[SUM]] : (tensor<2x3x4xbf16>, tensor<2x1x4xbf16>) -> tensor<2x3x4xbf16>
// CHECK-NEXT:    return %[[DIV]] : tensor<2x3x4xbf16>
func.func @softmax_middle_axis(%x: tensor<2x3x4xbf16>) -> tensor<2x3x4xbf16> {
  %0 = fusec.softmax %x {axis = 1 : i64} : (tensor<2x3x4xbf16>) -> tensor<2x3x4xbf16>
  return %0 : tensor<2x3x4xbf16>
}

// -----

// log_softmax(x, a) => sub(sub(x, max(x, a)), log(sum(exp(sub(x, max(x, a))), a)))
// CHECK-LABEL: func.func @log_softmax(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<4x8xf16>
// CHECK-NEXT:    %[[MAX:.*]] = fusec.max %[[X]] {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf16>) -> tensor<4x1xf16>
// CHECK-NEXT:    %[[SHIFTED:.*]] = fusec.sub %[[X]], %[[MAX]] : (tensor<4x8xf16>, tensor<4x1xf16>) -> tensor<4x8xf16>
// CHECK-NEXT:    %[[EXP:.*]] = fusec.exp %[[SHIFTED]] : (tensor<4x8xf16>) -> tensor<4x8xf16>
// CHECK-NEXT:    %[[SUM:.*]] = fusec.sum %[[EXP]] {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf16>) -> tensor<4x1xf16>
// CHECK-NEXT:    %[[LOG:.*]] = fusec.log %[[SUM]] : (tensor<4x1xf16>) -> tensor<4x1xf16>
// CHECK-NEXT:    %[[OUT:.*]] = fusec.sub %[[SHIFTED]], %[[LOG]] : (tensor<4x8xf16>, tensor<4x1xf16>) -> tensor<4x8xf16>
// CHECK-NEXT:    return %[[OUT]] : tensor<4x8xf16>
func.func @log_softmax(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %0 = fusec.log_softmax %x {axis = 1 : i64} : (tensor<4x8xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

// rms_norm(x, w) => mul(mul(x, rsqrt(add(mean(mul(x, x), -1), eps))), w)
// eps becomes a rank-0 constant of the input dtype.
// CHECK-LABEL: func.func @rms_norm(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<4x8xbf16>, %[[W:[^:]*]]: tensor<8xbf16>
// CHECK-NEXT:    %[[SQ:.*]] = fusec.mul %[[X]], %[[X]] : (tensor<4x8xbf16>, tensor<4x8xbf16>) -> tensor<4x8xbf16>
// CHECK-NEXT:    %[[MS:.*]] = fusec.mean %[[SQ]] {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xbf16>) -> tensor<4x1xbf16>
// CHECK-NEXT:    %[[EPS:.*]] = fusec.constant {value = 9.9999999999999995E-7 : f64} : tensor<bf16>
// CHECK-NEXT:    %[[ADD:.*]] = fusec.add %[[MS]], %[[EPS]] : (tensor<4x1xbf16>, tensor<bf16>) -> tensor<4x1xbf16>
// CHECK-NEXT:    %[[INV:.*]] = fusec.rsqrt %[[ADD]] : (tensor<4x1xbf16>) -> tensor<4x1xbf16>
// CHECK-NEXT:    %[[NORM:.*]] = fusec.mul %[[X]], %[[INV]] : (tensor<4x8xbf16>, tensor<4x1xbf16>) -> tensor<4x8xbf16>
// CHECK-NEXT:    %[[OUT:.*]] = fusec.mul %[[NORM]], %[[W]] : (tensor<4x8xbf16>, tensor<8xbf16>) -> tensor<4x8xbf16>
// CHECK-NEXT:    return %[[OUT]] : tensor<4x8xbf16>
func.func @rms_norm(%x: tensor<4x8xbf16>, %w: tensor<8xbf16>) -> tensor<4x8xbf16> {
  %0 = fusec.rms_norm %x weight(%w) {eps = 1.0e-6 : f64} : (tensor<4x8xbf16>, tensor<8xbf16>) -> tensor<4x8xbf16>
  return %0 : tensor<4x8xbf16>
}

// -----

// Without a weight the last multiply is left out; the mean is over the last dim only.
// CHECK-LABEL: func.func @rms_norm_no_weight(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<2x3x16xf32>
// CHECK-NEXT:    %[[SQ:.*]] = fusec.mul %[[X]], %[[X]] : (tensor<2x3x16xf32>, tensor<2x3x16xf32>) -> tensor<2x3x16xf32>
// CHECK-NEXT:    %[[MS:.*]] = fusec.mean %[[SQ]] {axes = array<i64: 2>, keepdims = true} : (tensor<2x3x16xf32>) -> tensor<2x3x1xf32>
// CHECK-NEXT:    %[[EPS:.*]] = fusec.constant {value = 1.000000e-05 : f64} : tensor<f32>
// CHECK-NEXT:    %[[ADD:.*]] = fusec.add %[[MS]], %[[EPS]] : (tensor<2x3x1xf32>, tensor<f32>) -> tensor<2x3x1xf32>
// CHECK-NEXT:    %[[INV:.*]] = fusec.rsqrt %[[ADD]] : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32>
// CHECK-NEXT:    %[[NORM:.*]] = fusec.mul %[[X]], %[[INV]] : (tensor<2x3x16xf32>, tensor<2x3x1xf32>) -> tensor<2x3x16xf32>
// CHECK-NEXT:    return %[[NORM]] : tensor<2x3x16xf32>
func.func @rms_norm_no_weight(%x: tensor<2x3x16xf32>) -> tensor<2x3x16xf32> {
  %0 = fusec.rms_norm %x {eps = 1.0e-5 : f64} : (tensor<2x3x16xf32>) -> tensor<2x3x16xf32>
  return %0 : tensor<2x3x16xf32>
}

// -----

// layer_norm(x, w, b) => add(mul(mul(d, rsqrt(add(mean(mul(d, d)), eps))), w), b)
//   where d = sub(x, mean(x))
// CHECK-LABEL: func.func @layer_norm(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<4x8xf32>, %[[W:[^:]*]]: tensor<8xf32>, %[[B:[^:]*]]: tensor<8xf32>
// CHECK-NEXT:    %[[MEAN:.*]] = fusec.mean %[[X]] {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[D:.*]] = fusec.sub %[[X]], %[[MEAN]] : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[D2:.*]] = fusec.mul %[[D]], %[[D]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[VAR:.*]] = fusec.mean %[[D2]] {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[EPS:.*]] = fusec.constant {value = 1.000000e-05 : f64} : tensor<f32>
// CHECK-NEXT:    %[[ADD:.*]] = fusec.add %[[VAR]], %[[EPS]] : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[INV:.*]] = fusec.rsqrt %[[ADD]] : (tensor<4x1xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[NORM:.*]] = fusec.mul %[[D]], %[[INV]] : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[SCALED:.*]] = fusec.mul %[[NORM]], %[[W]] : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[OUT:.*]] = fusec.add %[[SCALED]], %[[B]] : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    return %[[OUT]] : tensor<4x8xf32>
func.func @layer_norm(%x: tensor<4x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = fusec.layer_norm %x weight(%w) bias(%b) {axis = 1 : i64, eps = 1.0e-5 : f64} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @layer_norm_weight_only(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<4x8xf32>, %[[W:[^:]*]]: tensor<8xf32>
// CHECK-NEXT:    %[[MEAN:.*]] = fusec.mean %[[X]] {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[D:.*]] = fusec.sub %[[X]], %[[MEAN]] : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[D2:.*]] = fusec.mul %[[D]], %[[D]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[VAR:.*]] = fusec.mean %[[D2]] {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[EPS:.*]] = fusec.constant {value = 1.000000e-05 : f64} : tensor<f32>
// CHECK-NEXT:    %[[ADD:.*]] = fusec.add %[[VAR]], %[[EPS]] : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[INV:.*]] = fusec.rsqrt %[[ADD]] : (tensor<4x1xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[NORM:.*]] = fusec.mul %[[D]], %[[INV]] : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[SCALED:.*]] = fusec.mul %[[NORM]], %[[W]] : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    return %[[SCALED]] : tensor<4x8xf32>
func.func @layer_norm_weight_only(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = fusec.layer_norm %x weight(%w) {axis = 1 : i64, eps = 1.0e-5 : f64} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @layer_norm_bias_only(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<4x8xf32>, %[[B:[^:]*]]: tensor<8xf32>
// CHECK-NEXT:    %[[MEAN:.*]] = fusec.mean %[[X]] {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[D:.*]] = fusec.sub %[[X]], %[[MEAN]] : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[D2:.*]] = fusec.mul %[[D]], %[[D]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[VAR:.*]] = fusec.mean %[[D2]] {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[EPS:.*]] = fusec.constant {value = 1.000000e-05 : f64} : tensor<f32>
// CHECK-NEXT:    %[[ADD:.*]] = fusec.add %[[VAR]], %[[EPS]] : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[INV:.*]] = fusec.rsqrt %[[ADD]] : (tensor<4x1xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[NORM:.*]] = fusec.mul %[[D]], %[[INV]] : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[OUT:.*]] = fusec.add %[[NORM]], %[[B]] : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    return %[[OUT]] : tensor<4x8xf32>
func.func @layer_norm_bias_only(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = fusec.layer_norm %x bias(%b) {axis = 1 : i64, eps = 1.0e-5 : f64} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @layer_norm_plain(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<4x8xf32>
// CHECK-NEXT:    %[[MEAN:.*]] = fusec.mean %[[X]] {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[D:.*]] = fusec.sub %[[X]], %[[MEAN]] : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[D2:.*]] = fusec.mul %[[D]], %[[D]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[VAR:.*]] = fusec.mean %[[D2]] {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[EPS:.*]] = fusec.constant {value = 1.000000e-05 : f64} : tensor<f32>
// CHECK-NEXT:    %[[ADD:.*]] = fusec.add %[[VAR]], %[[EPS]] : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[INV:.*]] = fusec.rsqrt %[[ADD]] : (tensor<4x1xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[NORM:.*]] = fusec.mul %[[D]], %[[INV]] : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    return %[[NORM]] : tensor<4x8xf32>
func.func @layer_norm_plain(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = fusec.layer_norm %x {axis = 1 : i64, eps = 1.0e-5 : f64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Normalizing over dims 1..2: both statistics reduce axes [1, 2] and keep them.
// CHECK-LABEL: func.func @layer_norm_two_dims(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<2x4x8xbf16>, %[[W:[^:]*]]: tensor<4x8xbf16>, %[[B:[^:]*]]: tensor<4x8xbf16>
// CHECK-NEXT:    %[[MEAN:.*]] = fusec.mean %[[X]] {axes = array<i64: 1, 2>, keepdims = true} : (tensor<2x4x8xbf16>) -> tensor<2x1x1xbf16>
// CHECK-NEXT:    %[[D:.*]] = fusec.sub %[[X]], %[[MEAN]] : (tensor<2x4x8xbf16>, tensor<2x1x1xbf16>) -> tensor<2x4x8xbf16>
// CHECK-NEXT:    %[[D2:.*]] = fusec.mul %[[D]], %[[D]] : (tensor<2x4x8xbf16>, tensor<2x4x8xbf16>) -> tensor<2x4x8xbf16>
// CHECK-NEXT:    %[[VAR:.*]] = fusec.mean %[[D2]] {axes = array<i64: 1, 2>, keepdims = true} : (tensor<2x4x8xbf16>) -> tensor<2x1x1xbf16>
// CHECK-NEXT:    %[[EPS:.*]] = fusec.constant {value = 1.000000e-05 : f64} : tensor<bf16>
// CHECK-NEXT:    %[[ADD:.*]] = fusec.add %[[VAR]], %[[EPS]] : (tensor<2x1x1xbf16>, tensor<bf16>) -> tensor<2x1x1xbf16>
// CHECK-NEXT:    %[[INV:.*]] = fusec.rsqrt %[[ADD]] : (tensor<2x1x1xbf16>) -> tensor<2x1x1xbf16>
// CHECK-NEXT:    %[[NORM:.*]] = fusec.mul %[[D]], %[[INV]] : (tensor<2x4x8xbf16>, tensor<2x1x1xbf16>) -> tensor<2x4x8xbf16>
// CHECK-NEXT:    %[[SCALED:.*]] = fusec.mul %[[NORM]], %[[W]] : (tensor<2x4x8xbf16>, tensor<4x8xbf16>) -> tensor<2x4x8xbf16>
// CHECK-NEXT:    %[[OUT:.*]] = fusec.add %[[SCALED]], %[[B]] : (tensor<2x4x8xbf16>, tensor<4x8xbf16>) -> tensor<2x4x8xbf16>
// CHECK-NEXT:    return %[[OUT]] : tensor<2x4x8xbf16>
func.func @layer_norm_two_dims(%x: tensor<2x4x8xbf16>, %w: tensor<4x8xbf16>, %b: tensor<4x8xbf16>) -> tensor<2x4x8xbf16> {
  %0 = fusec.layer_norm %x weight(%w) bias(%b) {axis = 1 : i64, eps = 1.0e-5 : f64} : (tensor<2x4x8xbf16>, tensor<4x8xbf16>, tensor<4x8xbf16>) -> tensor<2x4x8xbf16>
  return %0 : tensor<2x4x8xbf16>
}

// -----

// linear(x, w, b) => add(matmul(x, transpose(w)), b)
// CHECK-LABEL: func.func @linear(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<4x8xbf16>, %[[W:[^:]*]]: tensor<16x8xbf16>, %[[B:[^:]*]]: tensor<16xbf16>
// CHECK-NEXT:    %[[WT:.*]] = fusec.transpose %[[W]] {perm = array<i64: 1, 0>} : (tensor<16x8xbf16>) -> tensor<8x16xbf16>
// CHECK-NEXT:    %[[MM:.*]] = fusec.matmul %[[X]], %[[WT]] : (tensor<4x8xbf16>, tensor<8x16xbf16>) -> tensor<4x16xbf16>
// CHECK-NEXT:    %[[OUT:.*]] = fusec.add %[[MM]], %[[B]] : (tensor<4x16xbf16>, tensor<16xbf16>) -> tensor<4x16xbf16>
// CHECK-NEXT:    return %[[OUT]] : tensor<4x16xbf16>
func.func @linear(%x: tensor<4x8xbf16>, %w: tensor<16x8xbf16>, %b: tensor<16xbf16>) -> tensor<4x16xbf16> {
  %0 = fusec.linear %x, %w bias(%b) : (tensor<4x8xbf16>, tensor<16x8xbf16>, tensor<16xbf16>) -> tensor<4x16xbf16>
  return %0 : tensor<4x16xbf16>
}

// -----

// A batched input multiplies the 2-D transposed weight directly (matmul broadcasts).
// CHECK-LABEL: func.func @linear_no_bias(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<2x3x8xf32>, %[[W:[^:]*]]: tensor<16x8xf32>
// CHECK-NEXT:    %[[WT:.*]] = fusec.transpose %[[W]] {perm = array<i64: 1, 0>} : (tensor<16x8xf32>) -> tensor<8x16xf32>
// CHECK-NEXT:    %[[MM:.*]] = fusec.matmul %[[X]], %[[WT]] : (tensor<2x3x8xf32>, tensor<8x16xf32>) -> tensor<2x3x16xf32>
// CHECK-NEXT:    return %[[MM]] : tensor<2x3x16xf32>
func.func @linear_no_bias(%x: tensor<2x3x8xf32>, %w: tensor<16x8xf32>) -> tensor<2x3x16xf32> {
  %0 = fusec.linear %x, %w : (tensor<2x3x8xf32>, tensor<16x8xf32>) -> tensor<2x3x16xf32>
  return %0 : tensor<2x3x16xf32>
}

// -----

// sdpa(q, k, v) => matmul(softmax(mul(matmul(q, transpose(k)), scale)), v)
// The default scale is 1/sqrt(64) = 0.125. Without a boolean mask or `causal`
// there is no -inf constant.
// CHECK-LABEL: func.func @attention(
// CHECK-SAME:    %[[Q:[^:]*]]: tensor<2x16x64xf16>, %[[K:[^:]*]]: tensor<2x32x64xf16>, %[[V:[^:]*]]: tensor<2x32x48xf16>
// CHECK-NEXT:    %[[KT:.*]] = fusec.transpose %[[K]] {perm = array<i64: 0, 2, 1>} : (tensor<2x32x64xf16>) -> tensor<2x64x32xf16>
// CHECK-NEXT:    %[[QK:.*]] = fusec.matmul %[[Q]], %[[KT]] : (tensor<2x16x64xf16>, tensor<2x64x32xf16>) -> tensor<2x16x32xf16>
// CHECK-NEXT:    %[[SCALE:.*]] = fusec.constant {value = 1.250000e-01 : f64} : tensor<f16>
// CHECK-NEXT:    %[[S:.*]] = fusec.mul %[[QK]], %[[SCALE]] : (tensor<2x16x32xf16>, tensor<f16>) -> tensor<2x16x32xf16>
// CHECK-NEXT:    %[[MAX:.*]] = fusec.max %[[S]] {axes = array<i64: 2>, keepdims = true} : (tensor<2x16x32xf16>) -> tensor<2x16x1xf16>
// CHECK-NEXT:    %[[SHIFTED:.*]] = fusec.sub %[[S]], %[[MAX]] : (tensor<2x16x32xf16>, tensor<2x16x1xf16>) -> tensor<2x16x32xf16>
// CHECK-NEXT:    %[[EXP:.*]] = fusec.exp %[[SHIFTED]] : (tensor<2x16x32xf16>) -> tensor<2x16x32xf16>
// CHECK-NEXT:    %[[SUM:.*]] = fusec.sum %[[EXP]] {axes = array<i64: 2>, keepdims = true} : (tensor<2x16x32xf16>) -> tensor<2x16x1xf16>
// CHECK-NEXT:    %[[P:.*]] = fusec.div %[[EXP]], %[[SUM]] : (tensor<2x16x32xf16>, tensor<2x16x1xf16>) -> tensor<2x16x32xf16>
// CHECK-NEXT:    %[[OUT:.*]] = fusec.matmul %[[P]], %[[V]] : (tensor<2x16x32xf16>, tensor<2x32x48xf16>) -> tensor<2x16x48xf16>
// CHECK-NEXT:    return %[[OUT]] : tensor<2x16x48xf16>
func.func @attention(%q: tensor<2x16x64xf16>, %k: tensor<2x32x64xf16>, %v: tensor<2x32x48xf16>) -> tensor<2x16x48xf16> {
  %0 = fusec.scaled_dot_product_attention %q, %k, %v : (tensor<2x16x64xf16>, tensor<2x32x64xf16>, tensor<2x32x48xf16>) -> tensor<2x16x48xf16>
  return %0 : tensor<2x16x48xf16>
}

// -----

// An explicit scale replaces 1/sqrt(E); rank-2 operands transpose with perm [1, 0].
// CHECK-LABEL: func.func @attention_scale(
// CHECK-SAME:    %[[Q:[^:]*]]: tensor<16x64xbf16>, %[[K:[^:]*]]: tensor<32x64xbf16>, %[[V:[^:]*]]: tensor<32x64xbf16>
// CHECK-NEXT:    %[[KT:.*]] = fusec.transpose %[[K]] {perm = array<i64: 1, 0>} : (tensor<32x64xbf16>) -> tensor<64x32xbf16>
// CHECK-NEXT:    %[[QK:.*]] = fusec.matmul %[[Q]], %[[KT]] : (tensor<16x64xbf16>, tensor<64x32xbf16>) -> tensor<16x32xbf16>
// CHECK-NEXT:    %[[SCALE:.*]] = fusec.constant {value = 5.000000e-01 : f64} : tensor<bf16>
// CHECK-NEXT:    %[[S:.*]] = fusec.mul %[[QK]], %[[SCALE]] : (tensor<16x32xbf16>, tensor<bf16>) -> tensor<16x32xbf16>
// CHECK-NEXT:    %[[MAX:.*]] = fusec.max %[[S]] {axes = array<i64: 1>, keepdims = true} : (tensor<16x32xbf16>) -> tensor<16x1xbf16>
// CHECK-NEXT:    %[[SHIFTED:.*]] = fusec.sub %[[S]], %[[MAX]] : (tensor<16x32xbf16>, tensor<16x1xbf16>) -> tensor<16x32xbf16>
// CHECK-NEXT:    %[[EXP:.*]] = fusec.exp %[[SHIFTED]] : (tensor<16x32xbf16>) -> tensor<16x32xbf16>
// CHECK-NEXT:    %[[SUM:.*]] = fusec.sum %[[EXP]] {axes = array<i64: 1>, keepdims = true} : (tensor<16x32xbf16>) -> tensor<16x1xbf16>
// CHECK-NEXT:    %[[P:.*]] = fusec.div %[[EXP]], %[[SUM]] : (tensor<16x32xbf16>, tensor<16x1xbf16>) -> tensor<16x32xbf16>
// CHECK-NEXT:    %[[OUT:.*]] = fusec.matmul %[[P]], %[[V]] : (tensor<16x32xbf16>, tensor<32x64xbf16>) -> tensor<16x64xbf16>
// CHECK-NEXT:    return %[[OUT]] : tensor<16x64xbf16>
func.func @attention_scale(%q: tensor<16x64xbf16>, %k: tensor<32x64xbf16>, %v: tensor<32x64xbf16>) -> tensor<16x64xbf16> {
  %0 = fusec.scaled_dot_product_attention %q, %k, %v {scale = 0.5 : f64} : (tensor<16x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>) -> tensor<16x64xbf16>
  return %0 : tensor<16x64xbf16>
}

// -----

// A bool mask selects: where(mask, scores, -inf), broadcast over the batch dims.
// CHECK-LABEL: func.func @attention_bool_mask(
// CHECK-SAME:    %[[Q:[^:]*]]: tensor<1x4x16x64xbf16>, %[[K:[^:]*]]: tensor<1x4x32x64xbf16>, %[[V:[^:]*]]: tensor<1x4x32x64xbf16>, %[[M:[^:]*]]: tensor<16x32xi1>
// CHECK-NEXT:    %[[KT:.*]] = fusec.transpose %[[K]] {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x4x32x64xbf16>) -> tensor<1x4x64x32xbf16>
// CHECK-NEXT:    %[[QK:.*]] = fusec.matmul %[[Q]], %[[KT]] : (tensor<1x4x16x64xbf16>, tensor<1x4x64x32xbf16>) -> tensor<1x4x16x32xbf16>
// CHECK-NEXT:    %[[SCALE:.*]] = fusec.constant {value = 1.250000e-01 : f64} : tensor<bf16>
// CHECK-NEXT:    %[[S:.*]] = fusec.mul %[[QK]], %[[SCALE]] : (tensor<1x4x16x32xbf16>, tensor<bf16>) -> tensor<1x4x16x32xbf16>
// CHECK-NEXT:    %[[NEGINF:.*]] = fusec.constant {value = 0xFFF0000000000000 : f64} : tensor<bf16>
// CHECK-NEXT:    %[[MASKED:.*]] = fusec.where %[[M]], %[[S]], %[[NEGINF]] : (tensor<16x32xi1>, tensor<1x4x16x32xbf16>, tensor<bf16>) -> tensor<1x4x16x32xbf16>
// CHECK-NEXT:    %[[MAX:.*]] = fusec.max %[[MASKED]] {axes = array<i64: 3>, keepdims = true} : (tensor<1x4x16x32xbf16>) -> tensor<1x4x16x1xbf16>
// CHECK-NEXT:    %[[SHIFTED:.*]] = fusec.sub %[[MASKED]], %[[MAX]] : (tensor<1x4x16x32xbf16>, tensor<1x4x16x1xbf16>) -> tensor<1x4x16x32xbf16>
// CHECK-NEXT:    %[[EXP:.*]] = fusec.exp %[[SHIFTED]] : (tensor<1x4x16x32xbf16>) -> tensor<1x4x16x32xbf16>
// CHECK-NEXT:    %[[SUM:.*]] = fusec.sum %[[EXP]] {axes = array<i64: 3>, keepdims = true} : (tensor<1x4x16x32xbf16>) -> tensor<1x4x16x1xbf16>
// CHECK-NEXT:    %[[P:.*]] = fusec.div %[[EXP]], %[[SUM]] : (tensor<1x4x16x32xbf16>, tensor<1x4x16x1xbf16>) -> tensor<1x4x16x32xbf16>
// CHECK-NEXT:    %[[OUT:.*]] = fusec.matmul %[[P]], %[[V]] : (tensor<1x4x16x32xbf16>, tensor<1x4x32x64xbf16>) -> tensor<1x4x16x64xbf16>
// CHECK-NEXT:    return %[[OUT]] : tensor<1x4x16x64xbf16>
func.func @attention_bool_mask(%q: tensor<1x4x16x64xbf16>, %k: tensor<1x4x32x64xbf16>, %v: tensor<1x4x32x64xbf16>, %m: tensor<16x32xi1>) -> tensor<1x4x16x64xbf16> {
  %0 = fusec.scaled_dot_product_attention %q, %k, %v mask(%m) : (tensor<1x4x16x64xbf16>, tensor<1x4x32x64xbf16>, tensor<1x4x32x64xbf16>, tensor<16x32xi1>) -> tensor<1x4x16x64xbf16>
  return %0 : tensor<1x4x16x64xbf16>
}

// -----

// A float mask is added to the scaled scores.
// CHECK-LABEL: func.func @attention_float_mask(
// CHECK-SAME:    %[[Q:[^:]*]]: tensor<1x4x16x64xbf16>, %[[K:[^:]*]]: tensor<1x4x32x64xbf16>, %[[V:[^:]*]]: tensor<1x4x32x64xbf16>, %[[M:[^:]*]]: tensor<1x1x1x32xbf16>
// CHECK-NEXT:    %[[KT:.*]] = fusec.transpose %[[K]] {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x4x32x64xbf16>) -> tensor<1x4x64x32xbf16>
// CHECK-NEXT:    %[[QK:.*]] = fusec.matmul %[[Q]], %[[KT]] : (tensor<1x4x16x64xbf16>, tensor<1x4x64x32xbf16>) -> tensor<1x4x16x32xbf16>
// CHECK-NEXT:    %[[SCALE:.*]] = fusec.constant {value = 1.250000e-01 : f64} : tensor<bf16>
// CHECK-NEXT:    %[[S:.*]] = fusec.mul %[[QK]], %[[SCALE]] : (tensor<1x4x16x32xbf16>, tensor<bf16>) -> tensor<1x4x16x32xbf16>
// CHECK-NEXT:    %[[MASKED:.*]] = fusec.add %[[S]], %[[M]] : (tensor<1x4x16x32xbf16>, tensor<1x1x1x32xbf16>) -> tensor<1x4x16x32xbf16>
// CHECK-NEXT:    %[[MAX:.*]] = fusec.max %[[MASKED]] {axes = array<i64: 3>, keepdims = true} : (tensor<1x4x16x32xbf16>) -> tensor<1x4x16x1xbf16>
// CHECK-NEXT:    %[[SHIFTED:.*]] = fusec.sub %[[MASKED]], %[[MAX]] : (tensor<1x4x16x32xbf16>, tensor<1x4x16x1xbf16>) -> tensor<1x4x16x32xbf16>
// CHECK-NEXT:    %[[EXP:.*]] = fusec.exp %[[SHIFTED]] : (tensor<1x4x16x32xbf16>) -> tensor<1x4x16x32xbf16>
// CHECK-NEXT:    %[[SUM:.*]] = fusec.sum %[[EXP]] {axes = array<i64: 3>, keepdims = true} : (tensor<1x4x16x32xbf16>) -> tensor<1x4x16x1xbf16>
// CHECK-NEXT:    %[[P:.*]] = fusec.div %[[EXP]], %[[SUM]] : (tensor<1x4x16x32xbf16>, tensor<1x4x16x1xbf16>) -> tensor<1x4x16x32xbf16>
// CHECK-NEXT:    %[[OUT:.*]] = fusec.matmul %[[P]], %[[V]] : (tensor<1x4x16x32xbf16>, tensor<1x4x32x64xbf16>) -> tensor<1x4x16x64xbf16>
// CHECK-NEXT:    return %[[OUT]] : tensor<1x4x16x64xbf16>
func.func @attention_float_mask(%q: tensor<1x4x16x64xbf16>, %k: tensor<1x4x32x64xbf16>, %v: tensor<1x4x32x64xbf16>, %m: tensor<1x1x1x32xbf16>) -> tensor<1x4x16x64xbf16> {
  %0 = fusec.scaled_dot_product_attention %q, %k, %v mask(%m) : (tensor<1x4x16x64xbf16>, tensor<1x4x32x64xbf16>, tensor<1x4x32x64xbf16>, tensor<1x1x1x32xbf16>) -> tensor<1x4x16x64xbf16>
  return %0 : tensor<1x4x16x64xbf16>
}

// -----

// causal keeps key j <= query i: where(iota(rows, dim 0) >= iota(cols, dim 1), s, -inf),
// built on an L x S index space, never a materialized mask.
// CHECK-LABEL: func.func @attention_causal(
// CHECK-SAME:    %[[Q:[^:]*]]: tensor<1x4x16x64xbf16>, %[[K:[^:]*]]: tensor<1x4x32x64xbf16>, %[[V:[^:]*]]: tensor<1x4x32x64xbf16>
// CHECK-NEXT:    %[[KT:.*]] = fusec.transpose %[[K]] {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x4x32x64xbf16>) -> tensor<1x4x64x32xbf16>
// CHECK-NEXT:    %[[QK:.*]] = fusec.matmul %[[Q]], %[[KT]] : (tensor<1x4x16x64xbf16>, tensor<1x4x64x32xbf16>) -> tensor<1x4x16x32xbf16>
// CHECK-NEXT:    %[[SCALE:.*]] = fusec.constant {value = 1.250000e-01 : f64} : tensor<bf16>
// CHECK-NEXT:    %[[S:.*]] = fusec.mul %[[QK]], %[[SCALE]] : (tensor<1x4x16x32xbf16>, tensor<bf16>) -> tensor<1x4x16x32xbf16>
// CHECK-NEXT:    %[[NEGINF:.*]] = fusec.constant {value = 0xFFF0000000000000 : f64} : tensor<bf16>
// CHECK-NEXT:    %[[ROWS:.*]] = fusec.iota {dim = 0 : i64} : tensor<16x32xi32>
// CHECK-NEXT:    %[[COLS:.*]] = fusec.iota {dim = 1 : i64} : tensor<16x32xi32>
// CHECK-NEXT:    %[[KEEP:.*]] = fusec.ge %[[ROWS]], %[[COLS]] : (tensor<16x32xi32>, tensor<16x32xi32>) -> tensor<16x32xi1>
// CHECK-NEXT:    %[[MASKED:.*]] = fusec.where %[[KEEP]], %[[S]], %[[NEGINF]] : (tensor<16x32xi1>, tensor<1x4x16x32xbf16>, tensor<bf16>) -> tensor<1x4x16x32xbf16>
// CHECK-NEXT:    %[[MAX:.*]] = fusec.max %[[MASKED]] {axes = array<i64: 3>, keepdims = true} : (tensor<1x4x16x32xbf16>) -> tensor<1x4x16x1xbf16>
// CHECK-NEXT:    %[[SHIFTED:.*]] = fusec.sub %[[MASKED]], %[[MAX]] : (tensor<1x4x16x32xbf16>, tensor<1x4x16x1xbf16>) -> tensor<1x4x16x32xbf16>
// CHECK-NEXT:    %[[EXP:.*]] = fusec.exp %[[SHIFTED]] : (tensor<1x4x16x32xbf16>) -> tensor<1x4x16x32xbf16>
// CHECK-NEXT:    %[[SUM:.*]] = fusec.sum %[[EXP]] {axes = array<i64: 3>, keepdims = true} : (tensor<1x4x16x32xbf16>) -> tensor<1x4x16x1xbf16>
// CHECK-NEXT:    %[[P:.*]] = fusec.div %[[EXP]], %[[SUM]] : (tensor<1x4x16x32xbf16>, tensor<1x4x16x1xbf16>) -> tensor<1x4x16x32xbf16>
// CHECK-NEXT:    %[[OUT:.*]] = fusec.matmul %[[P]], %[[V]] : (tensor<1x4x16x32xbf16>, tensor<1x4x32x64xbf16>) -> tensor<1x4x16x64xbf16>
// CHECK-NEXT:    return %[[OUT]] : tensor<1x4x16x64xbf16>
func.func @attention_causal(%q: tensor<1x4x16x64xbf16>, %k: tensor<1x4x32x64xbf16>, %v: tensor<1x4x32x64xbf16>) -> tensor<1x4x16x64xbf16> {
  %0 = fusec.scaled_dot_product_attention %q, %k, %v {causal = true} : (tensor<1x4x16x64xbf16>, tensor<1x4x32x64xbf16>, tensor<1x4x32x64xbf16>) -> tensor<1x4x16x64xbf16>
  return %0 : tensor<1x4x16x64xbf16>
}

// -----

// mask and causal together: the mask is applied first, then the causal select,
// both with the one -inf constant.
// CHECK-LABEL: func.func @attention_causal_bool_mask(
// CHECK-SAME:    %[[Q:[^:]*]]: tensor<2x16x64xf16>, %[[K:[^:]*]]: tensor<2x32x64xf16>, %[[V:[^:]*]]: tensor<2x32x48xf16>, %[[M:[^:]*]]: tensor<16x32xi1>
// CHECK-NEXT:    %[[KT:.*]] = fusec.transpose %[[K]] {perm = array<i64: 0, 2, 1>} : (tensor<2x32x64xf16>) -> tensor<2x64x32xf16>
// CHECK-NEXT:    %[[QK:.*]] = fusec.matmul %[[Q]], %[[KT]] : (tensor<2x16x64xf16>, tensor<2x64x32xf16>) -> tensor<2x16x32xf16>
// CHECK-NEXT:    %[[SCALE:.*]] = fusec.constant {value = 1.250000e-01 : f64} : tensor<f16>
// CHECK-NEXT:    %[[S:.*]] = fusec.mul %[[QK]], %[[SCALE]] : (tensor<2x16x32xf16>, tensor<f16>) -> tensor<2x16x32xf16>
// CHECK-NEXT:    %[[NEGINF:.*]] = fusec.constant {value = 0xFFF0000000000000 : f64} : tensor<f16>
// CHECK-NEXT:    %[[MASKED:.*]] = fusec.where %[[M]], %[[S]], %[[NEGINF]] : (tensor<16x32xi1>, tensor<2x16x32xf16>, tensor<f16>) -> tensor<2x16x32xf16>
// CHECK-NEXT:    %[[ROWS:.*]] = fusec.iota {dim = 0 : i64} : tensor<16x32xi32>
// CHECK-NEXT:    %[[COLS:.*]] = fusec.iota {dim = 1 : i64} : tensor<16x32xi32>
// CHECK-NEXT:    %[[KEEP:.*]] = fusec.ge %[[ROWS]], %[[COLS]] : (tensor<16x32xi32>, tensor<16x32xi32>) -> tensor<16x32xi1>
// CHECK-NEXT:    %[[CAUSAL:.*]] = fusec.where %[[KEEP]], %[[MASKED]], %[[NEGINF]] : (tensor<16x32xi1>, tensor<2x16x32xf16>, tensor<f16>) -> tensor<2x16x32xf16>
// CHECK-NEXT:    %[[MAX:.*]] = fusec.max %[[CAUSAL]] {axes = array<i64: 2>, keepdims = true} : (tensor<2x16x32xf16>) -> tensor<2x16x1xf16>
// CHECK-NEXT:    %[[SHIFTED:.*]] = fusec.sub %[[CAUSAL]], %[[MAX]] : (tensor<2x16x32xf16>, tensor<2x16x1xf16>) -> tensor<2x16x32xf16>
// CHECK-NEXT:    %[[EXP:.*]] = fusec.exp %[[SHIFTED]] : (tensor<2x16x32xf16>) -> tensor<2x16x32xf16>
// CHECK-NEXT:    %[[SUM:.*]] = fusec.sum %[[EXP]] {axes = array<i64: 2>, keepdims = true} : (tensor<2x16x32xf16>) -> tensor<2x16x1xf16>
// CHECK-NEXT:    %[[P:.*]] = fusec.div %[[EXP]], %[[SUM]] : (tensor<2x16x32xf16>, tensor<2x16x1xf16>) -> tensor<2x16x32xf16>
// CHECK-NEXT:    %[[OUT:.*]] = fusec.matmul %[[P]], %[[V]] : (tensor<2x16x32xf16>, tensor<2x32x48xf16>) -> tensor<2x16x48xf16>
// CHECK-NEXT:    return %[[OUT]] : tensor<2x16x48xf16>
func.func @attention_causal_bool_mask(%q: tensor<2x16x64xf16>, %k: tensor<2x32x64xf16>, %v: tensor<2x32x48xf16>, %m: tensor<16x32xi1>) -> tensor<2x16x48xf16> {
  %0 = fusec.scaled_dot_product_attention %q, %k, %v mask(%m) {causal = true} : (tensor<2x16x64xf16>, tensor<2x32x64xf16>, tensor<2x32x48xf16>, tensor<16x32xi1>) -> tensor<2x16x48xf16>
  return %0 : tensor<2x16x48xf16>
}

// -----

// Grouped-query attention: one key/value head broadcasts over 8 query heads in
// both matmuls; nothing is repeated explicitly.
// CHECK-LABEL: func.func @attention_gqa(
// CHECK-SAME:    %[[Q:[^:]*]]: tensor<1x8x16x64xf32>, %[[K:[^:]*]]: tensor<1x1x32x64xf32>, %[[V:[^:]*]]: tensor<1x1x32x64xf32>
// CHECK-NEXT:    %[[KT:.*]] = fusec.transpose %[[K]] {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x1x32x64xf32>) -> tensor<1x1x64x32xf32>
// CHECK-NEXT:    %[[QK:.*]] = fusec.matmul %[[Q]], %[[KT]] : (tensor<1x8x16x64xf32>, tensor<1x1x64x32xf32>) -> tensor<1x8x16x32xf32>
// CHECK-NEXT:    %[[SCALE:.*]] = fusec.constant {value = 1.250000e-01 : f64} : tensor<f32>
// CHECK-NEXT:    %[[S:.*]] = fusec.mul %[[QK]], %[[SCALE]] : (tensor<1x8x16x32xf32>, tensor<f32>) -> tensor<1x8x16x32xf32>
// CHECK-NEXT:    %[[MAX:.*]] = fusec.max %[[S]] {axes = array<i64: 3>, keepdims = true} : (tensor<1x8x16x32xf32>) -> tensor<1x8x16x1xf32>
// CHECK-NEXT:    %[[SHIFTED:.*]] = fusec.sub %[[S]], %[[MAX]] : (tensor<1x8x16x32xf32>, tensor<1x8x16x1xf32>) -> tensor<1x8x16x32xf32>
// CHECK-NEXT:    %[[EXP:.*]] = fusec.exp %[[SHIFTED]] : (tensor<1x8x16x32xf32>) -> tensor<1x8x16x32xf32>
// CHECK-NEXT:    %[[SUM:.*]] = fusec.sum %[[EXP]] {axes = array<i64: 3>, keepdims = true} : (tensor<1x8x16x32xf32>) -> tensor<1x8x16x1xf32>
// CHECK-NEXT:    %[[P:.*]] = fusec.div %[[EXP]], %[[SUM]] : (tensor<1x8x16x32xf32>, tensor<1x8x16x1xf32>) -> tensor<1x8x16x32xf32>
// CHECK-NEXT:    %[[OUT:.*]] = fusec.matmul %[[P]], %[[V]] : (tensor<1x8x16x32xf32>, tensor<1x1x32x64xf32>) -> tensor<1x8x16x64xf32>
// CHECK-NEXT:    return %[[OUT]] : tensor<1x8x16x64xf32>
func.func @attention_gqa(%q: tensor<1x8x16x64xf32>, %k: tensor<1x1x32x64xf32>, %v: tensor<1x1x32x64xf32>) -> tensor<1x8x16x64xf32> {
  %0 = fusec.scaled_dot_product_attention %q, %k, %v : (tensor<1x8x16x64xf32>, tensor<1x1x32x64xf32>, tensor<1x1x32x64xf32>) -> tensor<1x8x16x64xf32>
  return %0 : tensor<1x8x16x64xf32>
}

// -----

// A composite that consumes another composite reads the decomposed value.
// CHECK-LABEL: func.func @chained_composites(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<4x8xf32>, %[[W:[^:]*]]: tensor<8xf32>
// CHECK-NEXT:    %[[SQ:.*]] = fusec.mul %[[X]], %[[X]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[MS:.*]] = fusec.mean %[[SQ]] {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[EPS:.*]] = fusec.constant {value = 9.9999999999999995E-7 : f64} : tensor<f32>
// CHECK-NEXT:    %[[ADD:.*]] = fusec.add %[[MS]], %[[EPS]] : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[INV:.*]] = fusec.rsqrt %[[ADD]] : (tensor<4x1xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[NORM:.*]] = fusec.mul %[[X]], %[[INV]] : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[RMS:.*]] = fusec.mul %[[NORM]], %[[W]] : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[MAX:.*]] = fusec.max %[[RMS]] {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[SHIFTED:.*]] = fusec.sub %[[RMS]], %[[MAX]] : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[EXP:.*]] = fusec.exp %[[SHIFTED]] : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[SUM:.*]] = fusec.sum %[[EXP]] {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[P:.*]] = fusec.div %[[EXP]], %[[SUM]] : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    return %[[P]] : tensor<4x8xf32>
func.func @chained_composites(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = fusec.rms_norm %x weight(%w) {eps = 1.0e-6 : f64} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = fusec.softmax %0 {axis = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// Primitive ops are left exactly as they are.
// CHECK-LABEL: func.func @primitives_untouched(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<4x8xf32>
// CHECK-NEXT:    %[[EXP:.*]] = fusec.exp %[[X]] : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[MAX:.*]] = fusec.max %[[EXP]] {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[SUB:.*]] = fusec.sub %[[EXP]], %[[MAX]] : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    return %[[SUB]] : tensor<4x8xf32>
func.func @primitives_untouched(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = fusec.exp %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = fusec.max %0 {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %2 = fusec.sub %0, %1 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}
