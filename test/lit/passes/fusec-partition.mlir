// -fusec-partition: arguments marked fusec.shard hold each rank's block of
// that dim; each op keeps its operands' splits where its rule allows, and
// collectives make values whole where it does not.
// RUN: fusec-opt %s -split-input-file -verify-diagnostics -fusec-partition=ranks=2 | FileCheck %s
// RUN: fusec-opt %s -split-input-file -verify-diagnostics -fusec-partition=ranks=1 | FileCheck %s --check-prefix=WHOLE

// A column-parallel product (the weight split on N), an activation on the
// split columns, a row-parallel product (both operands split on K): a
// partial sum, all-reduced once before the residual add reads it.
// CHECK-LABEL: func.func @mlp(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<4x8xf32>, %[[UP:[^:]*]]: tensor<8x8xf32> {fusec.shard = 1 : i64}, %[[DOWN:[^:]*]]: tensor<8x8xf32> {fusec.shard = 0 : i64}) -> tensor<4x8xf32> attributes {fusec.ranks = 2 : i64}
// CHECK-NEXT:    %[[H:.*]] = fusec.matmul %[[X]], %[[UP]] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[G:.*]] = fusec.gelu %[[H]] {{.*}}: (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[P:.*]] = fusec.matmul %[[G]], %[[DOWN]] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[S:.*]] = fusec.all_reduce %[[P]] {kind = "sum", ranks = 2 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[R:.*]] = fusec.add %[[X]], %[[S]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    return %[[R]]
// WHOLE-LABEL: func.func @mlp(
// WHOLE-SAME:    tensor<8x16xf32> {fusec.shard = 1 : i64}
// WHOLE-NOT:     fusec.all_reduce
func.func @mlp(%x: tensor<4x8xf32>, %up: tensor<8x16xf32> {fusec.shard = 1 : i64},
               %down: tensor<16x8xf32> {fusec.shard = 0 : i64}) -> tensor<4x8xf32> {
  %h = fusec.matmul %x, %up : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %g = fusec.gelu %h {approximate = "none"} : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %p = fusec.matmul %g, %down : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %r = fusec.add %x, %p : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// Heads: a split hidden dim reshapes into split heads, a transpose moves the
// split, a batched product keeps it; the result is gathered whole on the
// way out.
// CHECK-LABEL: func.func @heads(
// CHECK-SAME:    %{{[^:]*}}: tensor<3x8xf32> {fusec.shard = 1 : i64}
// CHECK:         fusec.reshape %{{.*}} : (tensor<3x8xf32>) -> tensor<3x2x4xf32>
// CHECK:         fusec.transpose %{{.*}} : (tensor<3x2x4xf32>) -> tensor<2x3x4xf32>
// CHECK:         %[[MM:.*]] = fusec.matmul %{{.*}}, %{{.*}} : (tensor<2x3x4xf32>, tensor<2x4x3xf32>) -> tensor<2x3x3xf32>
// CHECK:         %[[W:.*]] = fusec.all_gather %[[MM]] {axis = 0 : i64, ranks = 2 : i64} : (tensor<2x3x3xf32>) -> tensor<4x3x3xf32>
// CHECK:         return %[[W]]
func.func @heads(%q: tensor<3x16xf32> {fusec.shard = 1 : i64},
                 %k: tensor<3x16xf32> {fusec.shard = 1 : i64}) -> tensor<4x3x3xf32> {
  %q3 = fusec.reshape %q : (tensor<3x16xf32>) -> tensor<3x4x4xf32>
  %qh = fusec.transpose %q3 {perm = array<i64: 1, 0, 2>} : (tensor<3x4x4xf32>) -> tensor<4x3x4xf32>
  %k3 = fusec.reshape %k : (tensor<3x16xf32>) -> tensor<3x4x4xf32>
  %kt = fusec.transpose %k3 {perm = array<i64: 1, 2, 0>} : (tensor<3x4x4xf32>) -> tensor<4x4x3xf32>
  %s = fusec.matmul %qh, %kt : (tensor<4x3x4xf32>, tensor<4x4x3xf32>) -> tensor<4x3x3xf32>
  return %s : tensor<4x3x3xf32>
}

// -----

// Reductions over the split dim: a max is a local max all-reduced with max;
// a sum stays a partial sum until the division reads it; a mean takes its
// input whole. Over another dim the split stays.
// CHECK-LABEL: func.func @reductions(
// CHECK:         %[[X:.*]] = fusec.all_gather %{{.*}} {axis = 1 : i64, ranks = 2 : i64} : (tensor<4x4xf32>) -> tensor<4x8xf32>
// CHECK:         %[[M:.*]] = fusec.max %{{.*}} : (tensor<4x4xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[MR:.*]] = fusec.all_reduce %[[M]] {kind = "max", ranks = 2 : i64}
// CHECK:         %[[S:.*]] = fusec.sum %{{.*}} : (tensor<4x4xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[SR:.*]] = fusec.all_reduce %[[S]] {kind = "sum", ranks = 2 : i64}
// CHECK:         fusec.div %[[SR]], %[[MR]]
// CHECK:         fusec.mean %[[X]] {{.*}}: (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK:         fusec.sum %{{.*}} {axes = array<i64: 0>, keepdims = true} : (tensor<4x4xf32>) -> tensor<1x4xf32>
func.func @reductions(%x: tensor<4x8xf32> {fusec.shard = 1 : i64})
    -> (tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>, tensor<1x8xf32>) {
  %m = fusec.max %x {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %s = fusec.sum %x {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %d = fusec.div %s, %m : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %a = fusec.mean %x {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %c = fusec.sum %x {axes = array<i64: 0>, keepdims = true} : (tensor<4x8xf32>) -> tensor<1x8xf32>
  return %m, %d, %a, %c : tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>, tensor<1x8xf32>
}

// -----

// An operand whole along the split dim (not broadcast there) meets a split
// one: the split one is gathered, and the op computes whole. A broadcast
// operand (extent 1 there) does not stop the split.
// CHECK-LABEL: func.func @broadcasts(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<4x4xf32> {fusec.shard = 1 : i64}
// CHECK:         %[[G:.*]] = fusec.all_gather %[[X]] {axis = 1 : i64, ranks = 2 : i64} : (tensor<4x4xf32>) -> tensor<4x8xf32>
// CHECK:         %[[B:.*]] = fusec.add %[[X]], %{{.*}} : (tensor<4x4xf32>, tensor<4x1xf32>) -> tensor<4x4xf32>
// CHECK:         %[[BW:.*]] = fusec.all_gather %[[B]]
// CHECK:         %[[M:.*]] = fusec.mul %[[G]], %{{.*}} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK:         return %[[BW]], %[[M]]
func.func @broadcasts(%x: tensor<4x8xf32> {fusec.shard = 1 : i64}, %col: tensor<4x1xf32>,
                      %full: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %a = fusec.add %x, %col : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %m = fusec.mul %x, %full : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %a, %m : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A reshape that would cut the split dim's blocks apart takes its input whole.
// CHECK-LABEL: func.func @uneven_reshape(
// CHECK:         %[[G:.*]] = fusec.all_gather %{{.*}} {axis = 1 : i64, ranks = 2 : i64} : (tensor<4x3xf32>) -> tensor<4x6xf32>
// CHECK:         fusec.reshape %[[G]] : (tensor<4x6xf32>) -> tensor<4x3x2xf32>
func.func @uneven_reshape(%x: tensor<4x6xf32> {fusec.shard = 1 : i64}) -> tensor<4x3x2xf32> {
  %r = fusec.reshape %x : (tensor<4x6xf32>) -> tensor<4x3x2xf32>
  return %r : tensor<4x3x2xf32>
}


// -----

// Results asked to stay split: %k is split so and each rank returns its
// block; %s is whole (a sum over the split dim), so it is made whole and its
// request dropped.
// CHECK-LABEL: func.func @split_results(
// CHECK-SAME:    -> (tensor<2x8xf32> {fusec.shard = 0 : i64}, tensor<1x8xf32>)
// CHECK-NOT:     fusec.all_gather
// CHECK:         fusec.all_reduce
// CHECK:         return
func.func @split_results(%k: tensor<4x8xf32> {fusec.shard = 0 : i64})
    -> (tensor<4x8xf32> {fusec.shard = 0 : i64}, tensor<1x8xf32> {fusec.shard = 1 : i64}) {
  %e = fusec.exp %k : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = fusec.sum %k {axes = array<i64: 0>, keepdims = true} : (tensor<4x8xf32>) -> tensor<1x8xf32>
  return %e, %s : tensor<4x8xf32>, tensor<1x8xf32>
}
