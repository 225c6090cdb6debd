// Every verifier rule of the fusec dialect, and the ODS type constraints, reject
// bad IR with a located diagnostic. One case per split.
// RUN: fusec-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// Type constraints (ODS)
//===----------------------------------------------------------------------===//

func.func @exp_of_int(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{'fusec.exp' op operand #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<4xi32>'}}
  %0 = fusec.exp %x : (tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @neg_of_bool(%x: tensor<4xi1>) -> tensor<4xi1> {
  // expected-error @+1 {{'fusec.neg' op operand #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<4xi1>'}}
  %0 = fusec.neg %x : (tensor<4xi1>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @dynamic_dim(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'fusec.add' op operand #0 must be statically shaped tensor of}}
  %0 = fusec.add %x, %x : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

func.func @dynamic_result(%x: tensor<4x8xf32>) -> tensor<4x?xf32> {
  // expected-error @+1 {{'fusec.relu' op result #0 must be statically shaped tensor of}}
  %0 = "fusec.relu"(%x) : (tensor<4x8xf32>) -> tensor<4x?xf32>
  return %0 : tensor<4x?xf32>
}

// -----

func.func @unranked(%x: tensor<*xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'fusec.tanh' op operand #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<*xf32>'}}
  %0 = fusec.tanh %x : (tensor<*xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @f64_unary(%x: tensor<4xf64>) -> tensor<4xf64> {
  // expected-error @+1 {{'fusec.sqrt' op operand #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<4xf64>'}}
  %0 = fusec.sqrt %x : (tensor<4xf64>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

func.func @f64_binary(%x: tensor<4xf64>) -> tensor<4xf64> {
  // expected-error @+1 {{'fusec.mul' op operand #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<4xf64>'}}
  %0 = fusec.mul %x, %x : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

func.func @f64_constant() -> tensor<2xf64> {
  // expected-error @+1 {{'fusec.constant' op result #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type or 32-bit signless integer or 64-bit signless integer or 1-bit signless integer values, but got 'tensor<2xf64>'}}
  %0 = fusec.constant {value = 1.0 : f64} : tensor<2xf64>
  return %0 : tensor<2xf64>
}

// -----

func.func @i8_cast(%x: tensor<4xf32>) -> tensor<4xi8> {
  // expected-error @+1 {{'fusec.cast' op result #0 must be statically shaped tensor of}}
  %0 = fusec.cast %x : (tensor<4xf32>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

func.func @scalar_not_tensor(%x: f32) -> f32 {
  // expected-error @+1 {{'fusec.abs' op operand #0 must be statically shaped tensor of}}
  %0 = fusec.abs %x : (f32) -> f32
  return %0 : f32
}

// -----

func.func @pow_of_int(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{'fusec.pow' op operand #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<4xi32>'}}
  %0 = fusec.pow %x, %x : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @mean_of_int(%x: tensor<4x8xi64>) -> tensor<4xi64> {
  // expected-error @+1 {{'fusec.mean' op operand #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<4x8xi64>'}}
  %0 = fusec.mean %x {axes = array<i64: 1>} : (tensor<4x8xi64>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

func.func @matmul_of_int(%a: tensor<4x8xi32>, %b: tensor<8x2xi32>) -> tensor<4x2xi32> {
  // expected-error @+1 {{'fusec.matmul' op operand #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<4x8xi32>'}}
  %0 = fusec.matmul %a, %b : (tensor<4x8xi32>, tensor<8x2xi32>) -> tensor<4x2xi32>
  return %0 : tensor<4x2xi32>
}

// -----

func.func @softmax_of_int(%x: tensor<4x8xi32>) -> tensor<4x8xi32> {
  // expected-error @+1 {{'fusec.softmax' op operand #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<4x8xi32>'}}
  %0 = fusec.softmax %x {axis = 1 : i64} : (tensor<4x8xi32>) -> tensor<4x8xi32>
  return %0 : tensor<4x8xi32>
}

// -----

func.func @iota_of_bool() -> tensor<4xi1> {
  // expected-error @+1 {{'fusec.iota' op result #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<4xi1>'}}
  %0 = fusec.iota {dim = 0 : i64} : tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @iota_dim_i32() -> tensor<4xi32> {
  // expected-error @+1 {{'fusec.iota' op attribute 'dim' failed to satisfy constraint: 64-bit signless integer attribute}}
  %0 = fusec.iota {dim = 0 : i32} : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @compare_result_not_bool(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'fusec.gt' op result #0 must be statically shaped tensor of 1-bit signless integer values, but got 'tensor<4xf32>'}}
  %0 = fusec.gt %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @where_condition_not_bool(%c: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'fusec.where' op operand #0 must be statically shaped tensor of 1-bit signless integer values, but got 'tensor<4xf32>'}}
  %0 = fusec.where %c, %x, %x : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @attention_of_int(%q: tensor<4x8xi32>) -> tensor<4x8xi32> {
  // expected-error @+1 {{'fusec.scaled_dot_product_attention' op operand #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<4x8xi32>'}}
  %0 = fusec.scaled_dot_product_attention %q, %q, %q : (tensor<4x8xi32>, tensor<4x8xi32>, tensor<4x8xi32>) -> tensor<4x8xi32>
  return %0 : tensor<4x8xi32>
}

// -----

func.func @constant_without_value() -> tensor<4xf32> {
  // expected-error @+1 {{'fusec.constant' op requires attribute 'value'}}
  %0 = fusec.constant : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @reduce_without_axes(%x: tensor<4xf32>) -> tensor<f32> {
  // expected-error @+1 {{'fusec.sum' op requires attribute 'axes'}}
  %0 = fusec.sum %x : (tensor<4xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @layer_norm_without_eps(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'fusec.layer_norm' op requires attribute 'eps'}}
  %0 = fusec.layer_norm %x {axis = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

//===----------------------------------------------------------------------===//
// Unary, binary, compare, where, cast
//===----------------------------------------------------------------------===//

// -----

func.func @unary_result_type(%x: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{'fusec.exp' op requires the same type for all operands and results}}
  %0 = fusec.exp %x : (tensor<4xf32>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

func.func @unary_result_shape(%x: tensor<4xf32>) -> tensor<1x4xf32> {
  // expected-error @+1 {{'fusec.sigmoid' op requires the same type for all operands and results}}
  %0 = fusec.sigmoid %x : (tensor<4xf32>) -> tensor<1x4xf32>
  return %0 : tensor<1x4xf32>
}

// -----

func.func @gelu_bad_mode(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'fusec.gelu' op approximate must be "none" or "tanh", got "fast"}}
  %0 = fusec.gelu %x {approximate = "fast"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @gelu_mode_is_case_sensitive(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'fusec.gelu' op approximate must be "none" or "tanh", got "Tanh"}}
  %0 = fusec.gelu %x {approximate = "Tanh"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @cast_changes_shape(%x: tensor<4x8xf32>) -> tensor<32xbf16> {
  // expected-error @+1 {{'fusec.cast' op requires the same shape for all operands and results}}
  %0 = fusec.cast %x : (tensor<4x8xf32>) -> tensor<32xbf16>
  return %0 : tensor<32xbf16>
}

// -----

func.func @broadcast_mismatch(%x: tensor<4x8xf32>, %y: tensor<4xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'fusec.add' op operand shapes cannot broadcast: [4, 8] vs [4] (dimension 4 vs 8)}}
  %0 = fusec.add %x, %y : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @broadcast_mismatch_inner(%x: tensor<2x3x4xi32>, %y: tensor<5x1xi32>) -> tensor<2x3x4xi32> {
  // expected-error @+1 {{'fusec.div' op operand shapes cannot broadcast: [2, 3, 4] vs [5, 1] (dimension 5 vs 3)}}
  %0 = fusec.div %x, %y : (tensor<2x3x4xi32>, tensor<5x1xi32>) -> tensor<2x3x4xi32>
  return %0 : tensor<2x3x4xi32>
}

// -----

func.func @binary_wrong_result_shape(%x: tensor<4x8xf32>, %y: tensor<8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{'fusec.sub' op result shape [8, 8] differs from the broadcast shape [4, 8]}}
  %0 = fusec.sub %x, %y : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

func.func @binary_result_rank_too_high(%x: tensor<4x8xf32>) -> tensor<1x4x8xf32> {
  // expected-error @+1 {{'fusec.maximum' op result shape [1, 4, 8] differs from the broadcast shape [4, 8]}}
  %0 = fusec.maximum %x, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<1x4x8xf32>
  return %0 : tensor<1x4x8xf32>
}

// -----

func.func @binary_result_not_broadcast(%x: tensor<4x1xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'fusec.minimum' op result shape [4, 8] differs from the broadcast shape [4, 1]}}
  %0 = fusec.minimum %x, %x : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @binary_mixed_dtypes(%x: tensor<4xf32>, %y: tensor<4xbf16>) -> tensor<4xf32> {
  // expected-error @+1 {{'fusec.add' op requires the same element type for all operands and results}}
  %0 = fusec.add %x, %y : (tensor<4xf32>, tensor<4xbf16>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @binary_result_dtype(%x: tensor<4xi32>) -> tensor<4xi64> {
  // expected-error @+1 {{'fusec.mul' op requires the same element type for all operands and results}}
  %0 = fusec.mul %x, %x : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

// The message comes from the SameTypeOperands trait; it changes when the bug
// described in compare-broadcast.mlir is fixed.
func.func @compare_mixed_dtypes(%x: tensor<4xf32>, %y: tensor<4xi32>) -> tensor<4xi1> {
  // expected-error @+1 {{'fusec.lt' op requires the same element type for all operands}}
  %0 = fusec.lt %x, %y : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @compare_wrong_result_shape(%x: tensor<4x8xf32>) -> tensor<4xi1> {
  // expected-error @+1 {{'fusec.eq' op result shape [4] differs from the broadcast shape [4, 8]}}
  %0 = fusec.eq %x, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @where_dtype_mismatch(%c: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xf16>) -> tensor<4xf32> {
  // expected-error @+1 {{'fusec.where' op lhs, rhs and result must have one element type, got 'f32', 'f16' and 'f32'}}
  %0 = fusec.where %c, %a, %b : (tensor<4xi1>, tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @where_result_dtype(%c: tensor<4xi1>, %a: tensor<4xi32>) -> tensor<4xi64> {
  // expected-error @+1 {{'fusec.where' op lhs, rhs and result must have one element type, got 'i32', 'i32' and 'i64'}}
  %0 = fusec.where %c, %a, %a : (tensor<4xi1>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

func.func @where_condition_shape(%c: tensor<3xi1>, %a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'fusec.where' op operand shapes cannot broadcast: [3] vs [4] vs [4] (dimension 4 vs 3)}}
  %0 = fusec.where %c, %a, %a : (tensor<3xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @where_wrong_result_shape(%c: tensor<4x1xi1>, %a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'fusec.where' op result shape [8] differs from the broadcast shape [4, 8]}}
  %0 = fusec.where %c, %a, %a : (tensor<4x1xi1>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

//===----------------------------------------------------------------------===//
// iota
//===----------------------------------------------------------------------===//

// -----

func.func @iota_dim_too_large() -> tensor<4x8xi32> {
  // expected-error @+1 {{'fusec.iota' op dim 2 is out of range for rank 2}}
  %0 = fusec.iota {dim = 2 : i64} : tensor<4x8xi32>
  return %0 : tensor<4x8xi32>
}

// -----

func.func @iota_of_scalar() -> tensor<i64> {
  // expected-error @+1 {{'fusec.iota' op dim 0 is out of range for rank 0}}
  %0 = fusec.iota {dim = 0 : i64} : tensor<i64>
  return %0 : tensor<i64>
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

// -----

func.func @reduce_axes_unsorted(%x: tensor<2x3x4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'fusec.sum' op axes [1, 0] must be sorted and unique}}
  %0 = fusec.sum %x {axes = array<i64: 1, 0>} : (tensor<2x3x4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @reduce_axes_duplicate(%x: tensor<2x3x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'fusec.max' op axes [1, 1] must be sorted and unique}}
  %0 = fusec.max %x {axes = array<i64: 1, 1>} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @reduce_axis_out_of_range(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'fusec.mean' op axis 2 is out of range for rank 2}}
  %0 = fusec.mean %x {axes = array<i64: 2>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Negative axes are normalized by the frontend; the op takes them as out of range.
func.func @reduce_axis_negative(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'fusec.min' op axis -1 is out of range for rank 2}}
  %0 = fusec.min %x {axes = array<i64: -1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @reduce_result_drops_kept_dim(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'fusec.sum' op result shape [4] differs from the inferred shape [4, 1]}}
  %0 = fusec.sum %x {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @reduce_result_keeps_dropped_dim(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  // expected-error @+1 {{'fusec.sum' op result shape [4, 1] differs from the inferred shape [4]}}
  %0 = fusec.sum %x {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

// -----

func.func @reduce_result_wrong_axis(%x: tensor<4x8xbf16>) -> tensor<4xbf16> {
  // expected-error @+1 {{'fusec.max' op result shape [4] differs from the inferred shape [8]}}
  %0 = fusec.max %x {axes = array<i64: 0>} : (tensor<4x8xbf16>) -> tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

func.func @reduce_result_dtype(%x: tensor<4x8xi32>) -> tensor<4xi64> {
  // expected-error @+1 {{'fusec.sum' op requires the same element type for all operands and results}}
  %0 = fusec.sum %x {axes = array<i64: 1>} : (tensor<4x8xi32>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

//===----------------------------------------------------------------------===//
// Layout
//===----------------------------------------------------------------------===//

// -----

func.func @reshape_size_mismatch(%x: tensor<4x8xf32>) -> tensor<4x7xf32> {
  // expected-error @+1 {{'fusec.reshape' op cannot reshape [4, 8] (32 elements) to [4, 7] (28 elements)}}
  %0 = fusec.reshape %x : (tensor<4x8xf32>) -> tensor<4x7xf32>
  return %0 : tensor<4x7xf32>
}

// -----

func.func @reshape_dtype(%x: tensor<4x8xf32>) -> tensor<32xf16> {
  // expected-error @+1 {{'fusec.reshape' op requires the same element type for all operands and results}}
  %0 = fusec.reshape %x : (tensor<4x8xf32>) -> tensor<32xf16>
  return %0 : tensor<32xf16>
}

// -----

func.func @transpose_perm_too_short(%x: tensor<2x3x4xf32>) -> tensor<3x2x4xf32> {
  // expected-error @+1 {{'fusec.transpose' op perm [1, 0] has 2 entries but the input has rank 3}}
  %0 = fusec.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  return %0 : tensor<3x2x4xf32>
}

// -----

func.func @transpose_perm_repeats(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'fusec.transpose' op perm [0, 0] is not a permutation of 0..1}}
  %0 = fusec.transpose %x {perm = array<i64: 0, 0>} : (tensor<4x8xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @transpose_perm_out_of_range(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'fusec.transpose' op perm [2, 0] is not a permutation of 0..1}}
  %0 = fusec.transpose %x {perm = array<i64: 2, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @transpose_wrong_result_shape(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'fusec.transpose' op result shape [4, 8] differs from the inferred shape [8, 4]}}
  %0 = fusec.transpose %x {perm = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @broadcast_to_incompatible(%x: tensor<3xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'fusec.broadcast_to' op cannot broadcast [3] to [4, 8] (dimension 0 is 3)}}
  %0 = fusec.broadcast_to %x : (tensor<3xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @broadcast_to_lower_rank(%x: tensor<2x8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'fusec.broadcast_to' op cannot broadcast [2, 8] to lower rank [8]}}
  %0 = fusec.broadcast_to %x : (tensor<2x8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// broadcast_to only stretches dims of size 1; it never shrinks one.
func.func @broadcast_to_shrinks(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  // expected-error @+1 {{'fusec.broadcast_to' op cannot broadcast [4, 8] to [4, 1] (dimension 1 is 8)}}
  %0 = fusec.broadcast_to %x : (tensor<4x8xf32>) -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

// -----

func.func @slice_limit_out_of_bounds(%x: tensor<4x8xf32>) -> tensor<4x9xf32> {
  // expected-error @+1 {{'fusec.slice' op slice [0, 9) is out of bounds for dimension 1 of size 8}}
  %0 = fusec.slice %x {starts = array<i64: 0, 0>, limits = array<i64: 4, 9>, steps = array<i64: 1, 1>} : (tensor<4x8xf32>) -> tensor<4x9xf32>
  return %0 : tensor<4x9xf32>
}

// -----

func.func @slice_start_after_limit(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'fusec.slice' op slice [3, 2) is out of bounds for dimension 0 of size 4}}
  %0 = fusec.slice %x {starts = array<i64: 3, 0>, limits = array<i64: 2, 8>, steps = array<i64: 1, 1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @slice_negative_start(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'fusec.slice' op slice [-1, 4) is out of bounds for dimension 0 of size 4}}
  %0 = fusec.slice %x {starts = array<i64: -1, 0>, limits = array<i64: 4, 8>, steps = array<i64: 1, 1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @slice_zero_step(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'fusec.slice' op step 0 must be positive}}
  %0 = fusec.slice %x {starts = array<i64: 0, 0>, limits = array<i64: 4, 8>, steps = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @slice_negative_step(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'fusec.slice' op step -1 must be positive}}
  %0 = fusec.slice %x {starts = array<i64: 0, 0>, limits = array<i64: 4, 8>, steps = array<i64: -1, 1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @slice_too_few_entries(%x: tensor<4x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'fusec.slice' op starts, limits and steps must each have one entry per dimension (2)}}
  %0 = fusec.slice %x {starts = array<i64: 0>, limits = array<i64: 2>, steps = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @slice_wrong_result_shape(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'fusec.slice' op result shape [4, 4] differs from the inferred shape [4, 3]}}
  %0 = fusec.slice %x {starts = array<i64: 0, 1>, limits = array<i64: 4, 8>, steps = array<i64: 1, 3>} : (tensor<4x8xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @concat_rank_mismatch(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<5x8xf32> {
  // expected-error @+1 {{'fusec.concat' op input 1 has rank 1 but input 0 has rank 2}}
  %0 = fusec.concat %a, %b {axis = 0 : i64} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<5x8xf32>
  return %0 : tensor<5x8xf32>
}

// -----

func.func @concat_shape_mismatch(%a: tensor<4x8xf32>, %b: tensor<4x2xf32>, %c: tensor<3x2xf32>) -> tensor<4x12xf32> {
  // expected-error @+1 {{'fusec.concat' op input 2 shape [3, 2] differs from input 0 shape [4, 8] outside axis 1}}
  %0 = fusec.concat %a, %b, %c {axis = 1 : i64} : (tensor<4x8xf32>, tensor<4x2xf32>, tensor<3x2xf32>) -> tensor<4x12xf32>
  return %0 : tensor<4x12xf32>
}

// -----

func.func @concat_axis_out_of_range(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'fusec.concat' op axis 2 is out of range for rank 2}}
  %0 = fusec.concat %a {axis = 2 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @concat_axis_negative(%a: tensor<4x8xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'fusec.concat' op axis -1 is out of range for rank 2}}
  %0 = fusec.concat %a, %a {axis = -1 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @concat_wrong_result_shape(%a: tensor<4x8xf32>, %b: tensor<4x2xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{'fusec.concat' op result shape [8, 8] differs from the inferred shape [4, 10]}}
  %0 = fusec.concat %a, %b {axis = 1 : i64} : (tensor<4x8xf32>, tensor<4x2xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

func.func @concat_mixed_dtypes(%a: tensor<4xf32>, %b: tensor<4xbf16>) -> tensor<8xf32> {
  // expected-error @+1 {{'fusec.concat' op requires the same element type for all operands and results}}
  %0 = fusec.concat %a, %b {axis = 0 : i64} : (tensor<4xf32>, tensor<4xbf16>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @concat_no_inputs() -> tensor<4xf32> {
  // expected-error @+1 {{'fusec.concat' op expected 1 or more operands, but found 0}}
  %0 = fusec.concat {axis = 0 : i64} : () -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @matmul_inner_mismatch(%a: tensor<4x8xf32>, %b: tensor<7x16xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'fusec.matmul' op matmul inner dimensions differ: [4, 8] @ [7, 16] (8 vs 7)}}
  %0 = fusec.matmul %a, %b : (tensor<4x8xf32>, tensor<7x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @matmul_vector_inner_mismatch(%a: tensor<8xf32>, %b: tensor<4x8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'fusec.matmul' op matmul inner dimensions differ: [8] @ [4, 8] (8 vs 4)}}
  %0 = fusec.matmul %a, %b : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @matmul_batch_mismatch(%a: tensor<2x4x8xf32>, %b: tensor<3x8x16xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{'fusec.matmul' op matmul batch dimensions cannot broadcast: [2, 4, 8] @ [3, 8, 16]}}
  %0 = fusec.matmul %a, %b : (tensor<2x4x8xf32>, tensor<3x8x16xf32>) -> tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

func.func @matmul_of_scalar(%a: tensor<f32>, %b: tensor<8xf32>) -> tensor<f32> {
  // expected-error @+1 {{'fusec.matmul' op matmul operands must have rank >= 1, got [] and [8]}}
  %0 = fusec.matmul %a, %b : (tensor<f32>, tensor<8xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @matmul_wrong_result_shape(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<16x4xf32> {
  // expected-error @+1 {{'fusec.matmul' op result shape [16, 4] differs from the inferred shape [4, 16]}}
  %0 = fusec.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<16x4xf32>
  return %0 : tensor<16x4xf32>
}

// -----

// A 1-D operand's dim is dropped from the result, not kept as 1.
func.func @matmul_vector_dim_kept(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x1xf32> {
  // expected-error @+1 {{'fusec.matmul' op result shape [4, 1] differs from the inferred shape [4]}}
  %0 = fusec.matmul %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

// -----

func.func @matmul_mixed_dtypes(%a: tensor<4x8xbf16>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'fusec.matmul' op requires the same element type for all operands and results}}
  %0 = fusec.matmul %a, %b : (tensor<4x8xbf16>, tensor<8x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

//===----------------------------------------------------------------------===//
// Composites
//===----------------------------------------------------------------------===//

// -----

func.func @softmax_axis_out_of_range(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'fusec.softmax' op axis 2 is out of range for rank 2}}
  %0 = fusec.softmax %x {axis = 2 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @softmax_axis_negative(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'fusec.softmax' op axis -1 is out of range for rank 2}}
  %0 = fusec.softmax %x {axis = -1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @softmax_of_scalar(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'fusec.softmax' op axis 0 is out of range for rank 0}}
  %0 = fusec.softmax %x {axis = 0 : i64} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @log_softmax_axis_out_of_range(%x: tensor<2x3x4xbf16>) -> tensor<2x3x4xbf16> {
  // expected-error @+1 {{'fusec.log_softmax' op axis 3 is out of range for rank 3}}
  %0 = fusec.log_softmax %x {axis = 3 : i64} : (tensor<2x3x4xbf16>) -> tensor<2x3x4xbf16>
  return %0 : tensor<2x3x4xbf16>
}

// -----

func.func @softmax_result_type(%x: tensor<4x8xf32>) -> tensor<4x8xf16> {
  // expected-error @+1 {{'fusec.softmax' op requires the same type for all operands and results}}
  %0 = fusec.softmax %x {axis = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

func.func @layer_norm_axis_out_of_range(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'fusec.layer_norm' op axis 2 is out of range for rank 2}}
  %0 = fusec.layer_norm %x {axis = 2 : i64, eps = 1.0e-5 : f64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @layer_norm_weight_shape(%x: tensor<4x8xf32>, %w: tensor<4xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'fusec.layer_norm' op weight has shape [4], expected [8]}}
  %0 = fusec.layer_norm %x weight(%w) {axis = 1 : i64, eps = 1.0e-5 : f64} : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Normalizing from axis 1 of a rank-3 input: weight needs both trailing dims.
func.func @layer_norm_weight_rank(%x: tensor<2x4x8xf32>, %w: tensor<8xf32>) -> tensor<2x4x8xf32> {
  // expected-error @+1 {{'fusec.layer_norm' op weight has shape [8], expected [4, 8]}}
  %0 = fusec.layer_norm %x weight(%w) {axis = 1 : i64, eps = 1.0e-5 : f64} : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

// -----

func.func @layer_norm_bias_shape(%x: tensor<4x8xf32>, %w: tensor<8xf32>, %b: tensor<1x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'fusec.layer_norm' op bias has shape [1, 8], expected [8]}}
  %0 = fusec.layer_norm %x weight(%w) bias(%b) {axis = 1 : i64, eps = 1.0e-5 : f64} : (tensor<4x8xf32>, tensor<8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @layer_norm_weight_dtype(%x: tensor<4x8xf32>, %w: tensor<8xf16>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'fusec.layer_norm' op weight has element type 'f16', expected 'f32'}}
  %0 = fusec.layer_norm %x weight(%w) {axis = 1 : i64, eps = 1.0e-5 : f64} : (tensor<4x8xf32>, tensor<8xf16>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @layer_norm_result_type(%x: tensor<4x8xbf16>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'fusec.layer_norm' op result type must equal the input type}}
  %0 = fusec.layer_norm %x {axis = 1 : i64, eps = 1.0e-5 : f64} : (tensor<4x8xbf16>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @rms_norm_weight_shape(%x: tensor<4x8xbf16>, %w: tensor<4xbf16>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{'fusec.rms_norm' op weight has shape [4], expected [8]}}
  %0 = fusec.rms_norm %x weight(%w) {eps = 1.0e-6 : f64} : (tensor<4x8xbf16>, tensor<4xbf16>) -> tensor<4x8xbf16>
  return %0 : tensor<4x8xbf16>
}

// -----

func.func @rms_norm_weight_rank(%x: tensor<4x8xbf16>, %w: tensor<1x8xbf16>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{'fusec.rms_norm' op weight has shape [1, 8], expected [8]}}
  %0 = fusec.rms_norm %x weight(%w) {eps = 1.0e-6 : f64} : (tensor<4x8xbf16>, tensor<1x8xbf16>) -> tensor<4x8xbf16>
  return %0 : tensor<4x8xbf16>
}

// -----

func.func @rms_norm_weight_dtype(%x: tensor<4x8xbf16>, %w: tensor<8xf32>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{'fusec.rms_norm' op weight has element type 'f32', expected 'bf16'}}
  %0 = fusec.rms_norm %x weight(%w) {eps = 1.0e-6 : f64} : (tensor<4x8xbf16>, tensor<8xf32>) -> tensor<4x8xbf16>
  return %0 : tensor<4x8xbf16>
}

// -----

func.func @rms_norm_of_scalar(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'fusec.rms_norm' op input must have rank >= 1}}
  %0 = fusec.rms_norm %x {eps = 1.0e-6 : f64} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @rms_norm_result_type(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'fusec.rms_norm' op result type must equal the input type}}
  %0 = fusec.rms_norm %x {eps = 1.0e-6 : f64} : (tensor<4x8xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @linear_weight_shape(%x: tensor<4x8xf32>, %w: tensor<16x4xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'fusec.linear' op weight [out, in] = [16, 4] does not match input features 8}}
  %0 = fusec.linear %x, %w : (tensor<4x8xf32>, tensor<16x4xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// The weight is [out, in], not [in, out] as matmul would take it.
func.func @linear_weight_transposed(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'fusec.linear' op weight [out, in] = [8, 16] does not match input features 8}}
  %0 = fusec.linear %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @linear_weight_rank(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'fusec.linear' op expects input [..., in] and weight [out, in], got [4, 8] and [8]}}
  %0 = fusec.linear %x, %w : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @linear_of_scalar(%x: tensor<f32>, %w: tensor<1x1xf32>) -> tensor<1xf32> {
  // expected-error @+1 {{'fusec.linear' op expects input [..., in] and weight [out, in], got [] and [1, 1]}}
  %0 = fusec.linear %x, %w : (tensor<f32>, tensor<1x1xf32>) -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

// -----

func.func @linear_bias_shape(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %b: tensor<8xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'fusec.linear' op bias has shape [8], expected [16]}}
  %0 = fusec.linear %x, %w bias(%b) : (tensor<4x8xf32>, tensor<16x8xf32>, tensor<8xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @linear_weight_dtype(%x: tensor<4x8xbf16>, %w: tensor<16x8xf32>) -> tensor<4x16xbf16> {
  // expected-error @+1 {{'fusec.linear' op weight has element type 'f32', expected 'bf16'}}
  %0 = fusec.linear %x, %w : (tensor<4x8xbf16>, tensor<16x8xf32>) -> tensor<4x16xbf16>
  return %0 : tensor<4x16xbf16>
}

// -----

func.func @linear_bias_dtype(%x: tensor<4x8xbf16>, %w: tensor<16x8xbf16>, %b: tensor<16xf16>) -> tensor<4x16xbf16> {
  // expected-error @+1 {{'fusec.linear' op bias has element type 'f16', expected 'bf16'}}
  %0 = fusec.linear %x, %w bias(%b) : (tensor<4x8xbf16>, tensor<16x8xbf16>, tensor<16xf16>) -> tensor<4x16xbf16>
  return %0 : tensor<4x16xbf16>
}

// -----

func.func @linear_wrong_result_shape(%x: tensor<2x4x8xf32>, %w: tensor<16x8xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'fusec.linear' op result has shape [4, 16], expected [2, 4, 16]}}
  %0 = fusec.linear %x, %w : (tensor<2x4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @attention_head_dims(%q: tensor<8x16x64xf16>, %k: tensor<8x32x32xf16>, %v: tensor<8x32x64xf16>) -> tensor<8x16x64xf16> {
  // expected-error @+1 {{'fusec.scaled_dot_product_attention' op query and key head dims differ: 64 vs 32}}
  %0 = fusec.scaled_dot_product_attention %q, %k, %v : (tensor<8x16x64xf16>, tensor<8x32x32xf16>, tensor<8x32x64xf16>) -> tensor<8x16x64xf16>
  return %0 : tensor<8x16x64xf16>
}

// -----

func.func @attention_seq_mismatch(%q: tensor<8x16x64xf16>, %k: tensor<8x32x64xf16>, %v: tensor<8x16x64xf16>) -> tensor<8x16x64xf16> {
  // expected-error @+1 {{'fusec.scaled_dot_product_attention' op key and value sequence lengths differ: 32 vs 16}}
  %0 = fusec.scaled_dot_product_attention %q, %k, %v : (tensor<8x16x64xf16>, tensor<8x32x64xf16>, tensor<8x16x64xf16>) -> tensor<8x16x64xf16>
  return %0 : tensor<8x16x64xf16>
}

// -----

func.func @attention_rank_one(%q: tensor<64xf16>, %k: tensor<32x64xf16>) -> tensor<64xf16> {
  // expected-error @+1 {{'fusec.scaled_dot_product_attention' op query, key and value need rank >= 2}}
  %0 = fusec.scaled_dot_product_attention %q, %k, %k : (tensor<64xf16>, tensor<32x64xf16>, tensor<32x64xf16>) -> tensor<64xf16>
  return %0 : tensor<64xf16>
}

// -----

func.func @attention_batch_mismatch(%q: tensor<2x8x16x64xf16>, %k: tensor<2x4x32x64xf16>) -> tensor<2x8x16x64xf16> {
  // expected-error @+1 {{'fusec.scaled_dot_product_attention' op batch dimensions: shapes cannot broadcast: [2, 8] vs [2, 4] vs [2, 4] (dimension 4 vs 8)}}
  %0 = fusec.scaled_dot_product_attention %q, %k, %k : (tensor<2x8x16x64xf16>, tensor<2x4x32x64xf16>, tensor<2x4x32x64xf16>) -> tensor<2x8x16x64xf16>
  return %0 : tensor<2x8x16x64xf16>
}

// -----

func.func @attention_key_dtype(%q: tensor<16x64xbf16>, %k: tensor<32x64xf16>, %v: tensor<32x64xbf16>) -> tensor<16x64xbf16> {
  // expected-error @+1 {{'fusec.scaled_dot_product_attention' op key has element type 'f16', expected 'bf16'}}
  %0 = fusec.scaled_dot_product_attention %q, %k, %v : (tensor<16x64xbf16>, tensor<32x64xf16>, tensor<32x64xbf16>) -> tensor<16x64xbf16>
  return %0 : tensor<16x64xbf16>
}

// -----

func.func @attention_value_dtype(%q: tensor<16x64xbf16>, %k: tensor<32x64xbf16>, %v: tensor<32x64xf32>) -> tensor<16x64xbf16> {
  // expected-error @+1 {{'fusec.scaled_dot_product_attention' op value has element type 'f32', expected 'bf16'}}
  %0 = fusec.scaled_dot_product_attention %q, %k, %v : (tensor<16x64xbf16>, tensor<32x64xbf16>, tensor<32x64xf32>) -> tensor<16x64xbf16>
  return %0 : tensor<16x64xbf16>
}

// -----

func.func @attention_int_mask(%q: tensor<16x64xbf16>, %k: tensor<32x64xbf16>, %m: tensor<16x32xi32>) -> tensor<16x64xbf16> {
  // expected-error @+1 {{'fusec.scaled_dot_product_attention' op mask must be i1 or have the query element type, got 'i32'}}
  %0 = fusec.scaled_dot_product_attention %q, %k, %k mask(%m) : (tensor<16x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<16x32xi32>) -> tensor<16x64xbf16>
  return %0 : tensor<16x64xbf16>
}

// -----

func.func @attention_float_mask_dtype(%q: tensor<16x64xbf16>, %k: tensor<32x64xbf16>, %m: tensor<16x32xf32>) -> tensor<16x64xbf16> {
  // expected-error @+1 {{'fusec.scaled_dot_product_attention' op mask must be i1 or have the query element type, got 'f32'}}
  %0 = fusec.scaled_dot_product_attention %q, %k, %k mask(%m) : (tensor<16x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<16x32xf32>) -> tensor<16x64xbf16>
  return %0 : tensor<16x64xbf16>
}

// -----

// The mask must broadcast to the scores [..., L, S] = [1, 8, 16, 32]; [16, 16] does not.
func.func @attention_mask_shape(%q: tensor<1x8x16x64xf16>, %k: tensor<1x8x32x64xf16>, %m: tensor<16x16xi1>) -> tensor<1x8x16x64xf16> {
  // expected-error @+1 {{'fusec.scaled_dot_product_attention' op mask: cannot broadcast [16, 16] to [1, 8, 16, 32] (dimension 1 is 16)}}
  %0 = fusec.scaled_dot_product_attention %q, %k, %k mask(%m) : (tensor<1x8x16x64xf16>, tensor<1x8x32x64xf16>, tensor<1x8x32x64xf16>, tensor<16x16xi1>) -> tensor<1x8x16x64xf16>
  return %0 : tensor<1x8x16x64xf16>
}

// -----

func.func @attention_mask_rank(%q: tensor<16x64xf16>, %k: tensor<32x64xf16>, %m: tensor<2x16x32xi1>) -> tensor<16x64xf16> {
  // expected-error @+1 {{'fusec.scaled_dot_product_attention' op mask: cannot broadcast [2, 16, 32] to lower rank [16, 32]}}
  %0 = fusec.scaled_dot_product_attention %q, %k, %k mask(%m) : (tensor<16x64xf16>, tensor<32x64xf16>, tensor<32x64xf16>, tensor<2x16x32xi1>) -> tensor<16x64xf16>
  return %0 : tensor<16x64xf16>
}

// -----

func.func @attention_wrong_result_shape(%q: tensor<16x64xf16>, %k: tensor<32x64xf16>, %v: tensor<32x48xf16>) -> tensor<16x64xf16> {
  // expected-error @+1 {{'fusec.scaled_dot_product_attention' op result has shape [16, 64], expected [16, 48]}}
  %0 = fusec.scaled_dot_product_attention %q, %k, %v : (tensor<16x64xf16>, tensor<32x64xf16>, tensor<32x48xf16>) -> tensor<16x64xf16>
  return %0 : tensor<16x64xf16>
}

// -----

func.func @topk_k_too_large(%x: tensor<2x8xf32>) -> tensor<2x9xf32> {
  // expected-error @+1 {{'fusec.topk' op k = 9 must be in [1, 8], the size of dim 1}}
  %0 = fusec.topk %x {axis = 1 : i64, k = 9 : i64, indices = false} : (tensor<2x8xf32>) -> tensor<2x9xf32>
  return %0 : tensor<2x9xf32>
}

// -----

func.func @topk_indices_not_i64(%x: tensor<2x8xf32>) -> tensor<2x3xi32> {
  // expected-error @+1 {{'fusec.topk' op indices must be i64}}
  %0 = fusec.topk %x {axis = 1 : i64, k = 3 : i64, indices = true} : (tensor<2x8xf32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

func.func @topk_values_other_type(%x: tensor<2x8xf32>) -> tensor<2x3xi64> {
  // expected-error @+1 {{'fusec.topk' op values must have the input's element type}}
  %0 = fusec.topk %x {axis = 1 : i64, k = 3 : i64, indices = false} : (tensor<2x8xf32>) -> tensor<2x3xi64>
  return %0 : tensor<2x3xi64>
}

// -----

func.func @topk_wrong_shape(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'fusec.topk' op result shape must be the input's with dim 1 of size k}}
  %0 = fusec.topk %x {axis = 1 : i64, k = 3 : i64, indices = false} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @topk_k_past_the_cap(%x: tensor<1x300xf32>) -> tensor<1x300xf32> {
  // expected-error @+1 {{'fusec.topk' op k = 300 is more than the 256 fusec's topk takes}}
  %0 = fusec.topk %x {axis = 1 : i64, k = 300 : i64, indices = false} : (tensor<1x300xf32>) -> tensor<1x300xf32>
  return %0 : tensor<1x300xf32>
}
