// -fusec-pick-early: a pick (the sum along the iota's axis of where(iota ==
// t, T, 0), t the same along it) of an elementwise op T between one operand
// that varies along the row and values that do not, one of them read from a
// reduction, picks the varying operand and applies the op to the one value
// a row, kept only where t is a column (0 <= t < n), plus +0 (the sum of
// the terms is never -0). A log-softmax's pick moves twice, past log(l) and
// past the max, to the logits themselves; the range and the + 0 are
// applied once, to the last op.
// RUN: fusec-opt %s -split-input-file -fusec-pick-early -canonicalize -cse | FileCheck %s

// CHECK-LABEL: func.func @log_softmax_pick(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<4x8xf32>, %[[T:[^:]*]]: tensor<4x1xi32>)
// CHECK:         %[[M:.*]] = fusec.max %[[X]]
// CHECK:         %[[LL:.*]] = fusec.log
// CHECK:         %[[HIT:.*]] = fusec.eq %{{.*}}, %[[T]]
// CHECK:         %[[ZERO:.*]] = fusec.constant {value = 0.000000e+00 : f64} : tensor<f32>
// CHECK:         %[[PX:.*]] = fusec.where %[[HIT]], %[[X]], %[[ZERO]]
// CHECK:         %[[P:.*]] = fusec.sum %[[PX]] {axes = array<i64: 1>, keepdims = true}
// CHECK:         %[[D:.*]] = fusec.sub %[[P]], %[[M]] : (tensor<4x1xf32>, tensor<4x1xf32>)
// CHECK:         %[[L:.*]] = fusec.sub %[[D]], %[[LL]]
// CHECK-DAG:     %[[FALSE:.*]] = fusec.constant {value = 0.000000e+00 : f64} : tensor<i1>
// CHECK-DAG:     %[[N:.*]] = fusec.constant {value = 8.000000e+00 : f64} : tensor<i32>
// CHECK-DAG:     %[[LT:.*]] = fusec.lt %[[T]], %[[N]]
// CHECK-DAG:     %[[Z32:.*]] = fusec.constant {value = 0.000000e+00 : f64} : tensor<i32>
// CHECK-DAG:     %[[GE:.*]] = fusec.ge %[[T]], %[[Z32]]
// CHECK:         %[[IN:.*]] = fusec.where %[[GE]], %[[LT]], %[[FALSE]]
// CHECK:         %[[L0:.*]] = fusec.add %[[L]], %[[ZERO]]
// CHECK:         %[[K2:.*]] = fusec.where %[[IN]], %[[L0]], %[[ZERO]]
// CHECK:         return %[[K2]]
func.func @log_softmax_pick(%x: tensor<4x8xf32>, %t: tensor<4x1xi32>) -> tensor<4x1xf32> {
  %m = fusec.max %x {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %d = fusec.sub %x, %m : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %e = fusec.exp %d : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %l = fusec.sum %e {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %ll = fusec.log %l : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %lsm = fusec.sub %d, %ll : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %col = fusec.iota {dim = 1 : i64} : tensor<4x8xi32>
  %hit = fusec.eq %col, %t : (tensor<4x8xi32>, tensor<4x1xi32>) -> tensor<4x8xi1>
  %zero = fusec.constant {value = 0.0 : f64} : tensor<f32>
  %w = fusec.where %hit, %lsm, %zero : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %p = fusec.sum %w {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  return %p : tensor<4x1xf32>
}

// -----

// Through a negation and a scale by a row statistic, over the last of three
// dims, the label's comparison written with the iota second and a row
// vector of it (broadcast over the rows' dim); the sum drops its dim, so
// the result is reshaped to it.
// CHECK-LABEL: func.func @negated_scaled(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<2x3x8xf32>, %[[T:[^:]*]]: tensor<2x3x1xi64>)
// CHECK:         %[[S:.*]] = fusec.sum %[[X]] {axes = array<i64: 2>, keepdims = true}
// CHECK:         %[[PX:.*]] = fusec.where %{{.*}}, %[[X]], %{{.*}} : (tensor<2x3x8xi1>, tensor<2x3x8xf32>, tensor<f32>) -> tensor<2x3x8xf32>
// CHECK:         %[[P:.*]] = fusec.sum %[[PX]] {axes = array<i64: 2>, keepdims = true} : (tensor<2x3x8xf32>) -> tensor<2x3x1xf32>
// CHECK:         fusec.div %[[P]], %[[S]]
// CHECK:         fusec.neg
// CHECK:         %[[R:.*]] = fusec.reshape %{{.*}} : (tensor<2x3x1xf32>) -> tensor<2x3xf32>
// CHECK:         return %[[R]]
func.func @negated_scaled(%x: tensor<2x3x8xf32>, %t: tensor<2x3x1xi64>) -> tensor<2x3xf32> {
  %s = fusec.sum %x {axes = array<i64: 2>, keepdims = true} : (tensor<2x3x8xf32>) -> tensor<2x3x1xf32>
  %q = fusec.div %x, %s : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32>
  %n = fusec.neg %q : (tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %col = fusec.iota {dim = 0 : i64} : tensor<8xi64>
  %hit = fusec.eq %t, %col : (tensor<2x3x1xi64>, tensor<8xi64>) -> tensor<2x3x8xi1>
  %zero = fusec.constant {value = 0.0 : f64} : tensor<f32>
  %w = fusec.where %hit, %n, %zero : (tensor<2x3x8xi1>, tensor<2x3x8xf32>, tensor<f32>) -> tensor<2x3x8xf32>
  %p = fusec.sum %w {axes = array<i64: 2>, keepdims = false} : (tensor<2x3x8xf32>) -> tensor<2x3xf32>
  return %p : tensor<2x3xf32>
}

// -----

// The where's zero a fill of the whole shape (as an importer writes
// zeros_like): the new where takes it, the result a scalar +0.
// CHECK-LABEL: func.func @zero_fill(
// CHECK:         %[[FILL:.*]] = fusec.constant {value = 0.000000e+00 : f64} : tensor<4x8xf32>
// CHECK:         %[[PX:.*]] = fusec.where %{{.*}}, %arg0, %[[FILL]]
// CHECK:         %[[P:.*]] = fusec.sum %[[PX]]
// CHECK:         %[[Z:.*]] = fusec.constant {value = 0.000000e+00 : f64} : tensor<f32>
// CHECK:         fusec.where %{{.*}}, %{{.*}}, %[[Z]] : (tensor<4x1xi1>, tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
func.func @zero_fill(%x: tensor<4x8xf32>, %t: tensor<4x1xi32>) -> tensor<4x1xf32> {
  %m = fusec.max %x {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %d = fusec.sub %x, %m : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %col = fusec.iota {dim = 1 : i64} : tensor<4x8xi32>
  %hit = fusec.eq %col, %t : (tensor<4x8xi32>, tensor<4x1xi32>) -> tensor<4x8xi1>
  %zero = fusec.constant {value = 0.0 : f64} : tensor<4x8xf32>
  %w = fusec.where %hit, %d, %zero : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %p = fusec.sum %w {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  return %p : tensor<4x1xf32>
}

// -----

// Left as they are: a term less a value not read from a reduction (an
// argument); a divisor that varies (the pick of -0 would be +0); a mask
// along another axis than the sum's; a where whose other branch is not 0;
// a term multiplied by a value that varies along the row.
// CHECK-LABEL: func.func @not_picks(
// CHECK-COUNT-5: fusec.sum %{{.*}} : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NOT:     fusec.sum
// CHECK:         return
func.func @not_picks(%x: tensor<4x8xf32>, %b: tensor<4x1xf32>, %t: tensor<4x1xi32>, %u: tensor<1x8xi32>)
    -> (tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>) {
  %m = fusec.max %x {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %col = fusec.iota {dim = 1 : i64} : tensor<4x8xi32>
  %row = fusec.iota {dim = 0 : i64} : tensor<4x8xi32>
  %hit = fusec.eq %col, %t : (tensor<4x8xi32>, tensor<4x1xi32>) -> tensor<4x8xi1>
  %rowhit = fusec.eq %row, %u : (tensor<4x8xi32>, tensor<1x8xi32>) -> tensor<4x8xi1>
  %zero = fusec.constant {value = 0.0 : f64} : tensor<f32>
  %one = fusec.constant {value = 1.0 : f64} : tensor<f32>
  %a = fusec.sub %x, %b : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %wa = fusec.where %hit, %a, %zero : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %pa = fusec.sum %wa {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %q = fusec.div %m, %x : (tensor<4x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %wq = fusec.where %hit, %q, %zero : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %pq = fusec.sum %wq {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %d = fusec.sub %x, %m : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %wr = fusec.where %rowhit, %d, %zero : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %pr = fusec.sum %wr {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %wo = fusec.where %hit, %d, %one : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %po = fusec.sum %wo {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %e = fusec.exp %d : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %xe = fusec.mul %d, %e : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %we = fusec.where %hit, %xe, %zero : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %pe = fusec.sum %we {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  return %pa, %pq, %pr, %po, %pe : tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>
}
