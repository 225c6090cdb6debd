// -fusec-fold-repeated-heads: a matmul reading K/V heads repeated for grouped
// queries reads the unrepeated heads, the query heads of a group as rows.
// RUN: fusec-opt %s -split-input-file -fusec-fold-repeated-heads | FileCheck %s

// Decode scores: q [1, 4 heads, 1, 16] @ repeat(k [1, 2 heads, 5, 16])^T.
// CHECK-LABEL: func.func @scores(
// CHECK-SAME:    %[[Q:[^:]*]]: tensor<1x4x1x16xf32>, %[[K:[^:]*]]: tensor<1x2x5x16xf32>
// CHECK-NEXT:    %[[K1:.*]] = fusec.reshape %[[K]] : (tensor<1x2x5x16xf32>) -> tensor<1x2x1x5x16xf32>
// CHECK-NEXT:    %[[ROWS:.*]] = fusec.reshape %[[Q]] : (tensor<1x4x1x16xf32>) -> tensor<1x2x2x16xf32>
// CHECK-NEXT:    %[[KV:.*]] = fusec.reshape %[[K1]] : (tensor<1x2x1x5x16xf32>) -> tensor<1x2x5x16xf32>
// CHECK-NEXT:    %[[KT:.*]] = fusec.transpose %[[KV]] {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x5x16xf32>) -> tensor<1x2x16x5xf32>
// CHECK-NEXT:    %[[MM:.*]] = fusec.matmul %[[ROWS]], %[[KT]] : (tensor<1x2x2x16xf32>, tensor<1x2x16x5xf32>) -> tensor<1x2x2x5xf32>
// CHECK-NEXT:    %[[OUT:.*]] = fusec.reshape %[[MM]] : (tensor<1x2x2x5xf32>) -> tensor<1x4x1x5xf32>
// CHECK-NEXT:    return %[[OUT]] : tensor<1x4x1x5xf32>
func.func @scores(%q: tensor<1x4x1x16xf32>, %k: tensor<1x2x5x16xf32>) -> tensor<1x4x1x5xf32> {
  %0 = fusec.reshape %k : (tensor<1x2x5x16xf32>) -> tensor<1x2x1x5x16xf32>
  %1 = fusec.broadcast_to %0 : (tensor<1x2x1x5x16xf32>) -> tensor<1x2x2x5x16xf32>
  %2 = fusec.reshape %1 : (tensor<1x2x2x5x16xf32>) -> tensor<1x4x5x16xf32>
  %3 = fusec.transpose %2 {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x4x5x16xf32>) -> tensor<1x4x16x5xf32>
  %4 = fusec.matmul %q, %3 : (tensor<1x4x1x16xf32>, tensor<1x4x16x5xf32>) -> tensor<1x4x1x5xf32>
  return %4 : tensor<1x4x1x5xf32>
}

// -----

// The queries are a transpose (tokens-major): their heads cannot become rows
// without a copy, so the repeat stays.
// CHECK-LABEL: func.func @transposed_queries(
// CHECK:         fusec.broadcast_to
// CHECK:         fusec.matmul %{{.*}}, %{{.*}} : (tensor<1x4x3x16xf32>, tensor<1x4x16x5xf32>) -> tensor<1x4x3x5xf32>
func.func @transposed_queries(%qt: tensor<1x3x4x16xf32>, %k: tensor<1x2x5x16xf32>) -> tensor<1x4x3x5xf32> {
  %q = fusec.transpose %qt {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x3x4x16xf32>) -> tensor<1x4x3x16xf32>
  %0 = fusec.reshape %k : (tensor<1x2x5x16xf32>) -> tensor<1x2x1x5x16xf32>
  %1 = fusec.broadcast_to %0 : (tensor<1x2x1x5x16xf32>) -> tensor<1x2x2x5x16xf32>
  %2 = fusec.reshape %1 : (tensor<1x2x2x5x16xf32>) -> tensor<1x4x5x16xf32>
  %3 = fusec.transpose %2 {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x4x5x16xf32>) -> tensor<1x4x16x5xf32>
  %4 = fusec.matmul %q, %3 : (tensor<1x4x3x16xf32>, tensor<1x4x16x5xf32>) -> tensor<1x4x3x5xf32>
  return %4 : tensor<1x4x3x5xf32>
}

// -----

// The cache with the new row appended (concat along the rows): one product
// per piece, joined along N.
// CHECK-LABEL: func.func @appended_cache(
// CHECK-NOT:     fusec.broadcast_to
// CHECK:         %[[A:.*]] = fusec.matmul %{{.*}}, %{{.*}} : (tensor<1x2x2x16xf32>, tensor<1x2x16x5xf32>) -> tensor<1x2x2x5xf32>
// CHECK:         %[[B:.*]] = fusec.matmul %{{.*}}, %{{.*}} : (tensor<1x2x2x16xf32>, tensor<1x2x16x1xf32>) -> tensor<1x2x2x1xf32>
// CHECK:         fusec.concat %[[A]], %[[B]] {axis = 3 : i64}
func.func @appended_cache(%q: tensor<1x4x1x16xf32>, %cache: tensor<1x2x5x16xf32>, %new: tensor<1x2x1x16xf32>) -> tensor<1x4x1x6xf32> {
  %k = fusec.concat %cache, %new {axis = 2 : i64} : (tensor<1x2x5x16xf32>, tensor<1x2x1x16xf32>) -> tensor<1x2x6x16xf32>
  %0 = fusec.reshape %k : (tensor<1x2x6x16xf32>) -> tensor<1x2x1x6x16xf32>
  %1 = fusec.broadcast_to %0 : (tensor<1x2x1x6x16xf32>) -> tensor<1x2x2x6x16xf32>
  %2 = fusec.reshape %1 : (tensor<1x2x2x6x16xf32>) -> tensor<1x4x6x16xf32>
  %3 = fusec.transpose %2 {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x4x6x16xf32>) -> tensor<1x4x16x6xf32>
  %4 = fusec.matmul %q, %3 : (tensor<1x4x1x16xf32>, tensor<1x4x16x6xf32>) -> tensor<1x4x1x6xf32>
  return %4 : tensor<1x4x1x6xf32>
}

// -----

// Probabilities @ V over a cache with rows appended: the sum over the rows
// splits at the join; a two-row piece is its own product, a one-row piece an
// outer product (a broadcast multiply); the parts are added.
// CHECK-LABEL: func.func @appended_values(
// CHECK-NOT:     fusec.concat
// CHECK:         %[[A:.*]] = fusec.matmul %{{.*}}, %{{.*}} : (tensor<1x2x2x5xf32>, tensor<1x2x5x16xf32>) -> tensor<1x2x2x16xf32>
// CHECK:         %[[B:.*]] = fusec.matmul %{{.*}}, %{{.*}} : (tensor<1x2x2x2xf32>, tensor<1x2x2x16xf32>) -> tensor<1x2x2x16xf32>
// CHECK:         %[[S:.*]] = fusec.add %[[A]], %[[B]]
// CHECK:         %[[C:.*]] = fusec.mul %{{.*}}, %{{.*}} : (tensor<1x2x2x1xf32>, tensor<1x2x1x16xf32>) -> tensor<1x2x2x16xf32>
// CHECK:         fusec.add %[[S]], %[[C]]
func.func @appended_values(%p: tensor<1x4x1x8xf32>, %cache: tensor<1x2x5x16xf32>, %two: tensor<1x2x2x16xf32>, %one: tensor<1x2x1x16xf32>) -> tensor<1x4x1x16xf32> {
  %v = fusec.concat %cache, %two, %one {axis = 2 : i64} : (tensor<1x2x5x16xf32>, tensor<1x2x2x16xf32>, tensor<1x2x1x16xf32>) -> tensor<1x2x8x16xf32>
  %0 = fusec.reshape %v : (tensor<1x2x8x16xf32>) -> tensor<1x2x1x8x16xf32>
  %1 = fusec.broadcast_to %0 : (tensor<1x2x1x8x16xf32>) -> tensor<1x2x2x8x16xf32>
  %2 = fusec.reshape %1 : (tensor<1x2x2x8x16xf32>) -> tensor<1x4x8x16xf32>
  %3 = fusec.matmul %p, %2 : (tensor<1x4x1x8xf32>, tensor<1x4x8x16xf32>) -> tensor<1x4x1x16xf32>
  return %3 : tensor<1x4x1x16xf32>
}
