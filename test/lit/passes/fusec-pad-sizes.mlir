// -fusec-pad-sizes: dims marked as the named size S get an i32 size
// argument; ops that combine positions along S see them masked past it,
// ops that move or map positions are left alone.
// RUN: fusec-opt %s -split-input-file -verify-diagnostics -fusec-pad-sizes | FileCheck %s

// A sum over S masks its operand (0 past the size); a softmax over S masks
// with -inf; the exp between them maps positions and needs nothing. The
// sum of an input (zero past the size: the runtime pads with zeros) needs
// no mask either.
// CHECK-LABEL: func.func @reduce(
// CHECK-SAME:    %[[X:.*]]: tensor<8x4xf32> {fusec.size_dims = ["S", ""]},
// CHECK-SAME:    %[[N:.*]]: tensor<i32> {fusec.name = "fusec.size.S", fusec.size_of = "S"})
// CHECK-SAME:    -> (tensor<4xf32> {fusec.size_dims = [""]}, tensor<8x4xf32> {fusec.size_dims = ["S", ""]}, tensor<4xf32> {fusec.size_dims = [""]})
// CHECK:         %[[E:.*]] = fusec.exp %[[X]]
// CHECK:         %[[I:.*]] = fusec.iota {dim = 0 : i64} : tensor<8x1xi32>
// CHECK:         %[[IN:.*]] = fusec.lt %[[I]], %[[N]]
// CHECK:         %[[Z:.*]] = fusec.constant {value = 0.000000e+00 : f64} : tensor<f32>
// CHECK:         %[[M:.*]] = fusec.where %[[IN]], %[[E]], %[[Z]]
// CHECK:         %[[S:.*]] = fusec.sum %[[M]] {axes = array<i64: 0>}
// CHECK:         %[[NINF:.*]] = fusec.constant {value = 0xFFF0000000000000 : f64} : tensor<f32>
// CHECK:         %[[M2:.*]] = fusec.where %{{.*}}, %[[E]], %[[NINF]]
// CHECK:         %[[P:.*]] = fusec.softmax %[[M2]] {axis = 0 : i64}
// CHECK:         %[[S2:.*]] = fusec.sum %[[X]] {axes = array<i64: 0>}
// CHECK:         return %[[S]], %[[P]], %[[S2]]
// CHECK-NOT:     fusec.size_dims = {{\[\[}}
func.func @reduce(%x: tensor<8x4xf32> {fusec.size_dims = ["S", ""]}) -> (tensor<4xf32>, tensor<8x4xf32>, tensor<4xf32>) {
  %e = fusec.exp %x {fusec.size_dims = [["S", ""]]} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %s = fusec.sum %e {axes = array<i64: 0>, fusec.size_dims = [[""]]} : (tensor<8x4xf32>) -> tensor<4xf32>
  %p = fusec.softmax %e {axis = 0 : i64, fusec.size_dims = [["S", ""]]} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %s2 = fusec.sum %x {axes = array<i64: 0>, fusec.size_dims = [[""]]} : (tensor<8x4xf32>) -> tensor<4xf32>
  return %s, %p, %s2 : tensor<4xf32>, tensor<8x4xf32>, tensor<4xf32>
}

// -----

// A product contracting S zeroes both operands past the size, except one
// known to be zero there (the input).
// CHECK-LABEL: func.func @contract(
// CHECK:         %[[E:.*]] = fusec.exp %arg1
// CHECK:         %[[M:.*]] = fusec.where %{{.*}}, %[[E]], %{{.*}} : (tensor<8x1xi1>, tensor<8x4xf32>, tensor<f32>)
// CHECK:         fusec.matmul %arg0, %[[M]]
func.func @contract(%a: tensor<4x8xf32> {fusec.size_dims = ["", "S"]}, %b: tensor<8x4xf32> {fusec.size_dims = ["S", ""]}) -> tensor<4x4xf32> {
  %e = fusec.exp %b {fusec.size_dims = [["S", ""]]} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %m = fusec.matmul %a, %e {fusec.size_dims = [["", ""]]} : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  return %m : tensor<4x4xf32>
}

// -----

// Attention over S keys, not causal: a key mask; causal over its own S
// queries: none. The values (exp: 1 in the padding) are zeroed past the
// size in both.
// CHECK-LABEL: func.func @attention(
// CHECK:         %[[K:.*]] = fusec.lt %{{.*}}, %[[N:.*]] : (tensor<1x1x8xi32>, tensor<i32>) -> tensor<1x1x8xi1>
// CHECK:         %[[V:.*]] = fusec.where %{{.*}}, %[[G:.*]], %{{.*}} : (tensor<1x8x1xi1>, tensor<1x8x4xf32>, tensor<f32>)
// CHECK:         fusec.scaled_dot_product_attention %[[G]], %[[G]], %[[V]] mask(%[[K]])
// CHECK:         %[[V2:.*]] = fusec.where
// CHECK:         fusec.scaled_dot_product_attention %[[G]], %[[G]], %[[V2]] {causal = true}
func.func @attention(%x: tensor<1x8x4xf32> {fusec.size_dims = ["", "S", ""]}) -> (tensor<1x8x4xf32>, tensor<1x8x4xf32>) {
  %g = fusec.exp %x {fusec.size_dims = [["", "S", ""]]} : (tensor<1x8x4xf32>) -> tensor<1x8x4xf32>
  %a = fusec.scaled_dot_product_attention %g, %g, %g {fusec.size_dims = [["", "S", ""]]} : (tensor<1x8x4xf32>, tensor<1x8x4xf32>, tensor<1x8x4xf32>) -> tensor<1x8x4xf32>
  %c = fusec.scaled_dot_product_attention %g, %g, %g {causal = true, fusec.size_dims = [["", "S", ""]]} : (tensor<1x8x4xf32>, tensor<1x8x4xf32>, tensor<1x8x4xf32>) -> tensor<1x8x4xf32>
  return %a, %c : tensor<1x8x4xf32>, tensor<1x8x4xf32>
}

// -----

func.func @normalized(%x: tensor<8x4xf32> {fusec.size_dims = ["S", ""]}) -> tensor<8x4xf32> {
  // expected-error @+1 {{layer_norm: it normalizes over a padded dim; a size it depends on so cannot be padded: bind it to one size}}
  %y = fusec.layer_norm %x {axis = 0 : i64, eps = 1.0e-05 : f64, fusec.size_dims = [["S", ""]]} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

// Zeros stay zeros through an RMS norm (eps > 0), a linear without bias and
// the reshapes and transposes to heads: the values of causal attention over
// its own queries need no mask, and nothing else does.
// CHECK-LABEL: func.func @zeros(
// CHECK-NOT:     fusec.where
// CHECK:         fusec.scaled_dot_product_attention %{{.*}}, %{{.*}}, %{{.*}} {causal = true}
// CHECK-NOT:     fusec.where
func.func @zeros(%x: tensor<8x16xf32> {fusec.size_dims = ["S", ""]}, %w: tensor<16xf32> {fusec.size_dims = [""]}, %wv: tensor<16x16xf32> {fusec.size_dims = ["", ""]}) -> tensor<2x8x8xf32> {
  %h = fusec.rms_norm %x weight(%w) {eps = 1.0e-05 : f64, fusec.size_dims = [["S", ""]]} : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %v = fusec.linear %h, %wv {fusec.size_dims = [["S", ""]]} : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  %r = fusec.reshape %v {fusec.size_dims = [["S", "", ""]]} : (tensor<8x16xf32>) -> tensor<8x2x8xf32>
  %t = fusec.transpose %r {perm = array<i64: 1, 0, 2>, fusec.size_dims = [["", "S", ""]]} : (tensor<8x2x8xf32>) -> tensor<2x8x8xf32>
  %a = fusec.scaled_dot_product_attention %t, %t, %t {causal = true, fusec.size_dims = [["", "S", ""]]} : (tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  return %a : tensor<2x8x8xf32>
}

// -----

// A cache of S rows joined with this step's row ("S+1": the padding sits
// between them): attention over it masks the keys past S but keeps the last
// one; the values need no mask (the cache is an input, zero past S).
// CHECK-LABEL: func.func @cache(
// CHECK:         %[[J:.*]] = fusec.concat %arg0, %arg1 {axis = 1 : i64}
// CHECK:         %[[I:.*]] = fusec.iota {dim = 2 : i64} : tensor<1x1x9xi32>
// CHECK:         %[[IN:.*]] = fusec.lt %[[I]], %arg3
// CHECK:         %[[LAST:.*]] = fusec.constant {value = 8.000000e+00 : f64} : tensor<i32>
// CHECK:         %[[AFTER:.*]] = fusec.ge %[[I]], %[[LAST]]
// CHECK:         %[[KEEP:.*]] = fusec.where %[[IN]], %[[IN]], %[[AFTER]]
// CHECK:         fusec.scaled_dot_product_attention %{{.*}}, %[[J]], %[[J]] mask(%[[KEEP]])
func.func @cache(%cache: tensor<2x8x4xf32> {fusec.size_dims = ["", "S", ""]}, %row: tensor<2x1x4xf32> {fusec.size_dims = ["", "", ""]}, %q: tensor<2x1x4xf32> {fusec.size_dims = ["", "", ""]}) -> tensor<2x1x4xf32> {
  %all = fusec.concat %cache, %row {axis = 1 : i64, fusec.size_dims = [["", "S+1", ""]]} : (tensor<2x8x4xf32>, tensor<2x1x4xf32>) -> tensor<2x9x4xf32>
  %a = fusec.scaled_dot_product_attention %q, %all, %all {fusec.size_dims = [["", "", ""]]} : (tensor<2x1x4xf32>, tensor<2x9x4xf32>, tensor<2x9x4xf32>) -> tensor<2x1x4xf32>
  return %a : tensor<2x1x4xf32>
}

// -----

func.func @joined_first(%cache: tensor<2x8x4xf32> {fusec.size_dims = ["", "S", ""]}, %row: tensor<2x1x4xf32> {fusec.size_dims = ["", "", ""]}) -> tensor<2x9x4xf32> {
  // expected-error @+1 {{concat: it joins along a padded dim other than after its first operand's}}
  %all = fusec.concat %row, %cache {axis = 1 : i64, fusec.size_dims = [["", "S+1", ""]]} : (tensor<2x1x4xf32>, tensor<2x8x4xf32>) -> tensor<2x9x4xf32>
  return %all : tensor<2x9x4xf32>
}

// -----

// A matrix times a vector contracts the matrix's last dim: rows padded
// along S need nothing, and a sum over S of the product of zero rows needs
// no mask either (the input is zero there).
// CHECK-LABEL: func.func @matrix_vector(
// CHECK:         %[[Y:.*]] = fusec.matmul %arg0, %arg1
// CHECK-NEXT:    fusec.sum %[[Y]]
func.func @matrix_vector(%x: tensor<8x4xf32> {fusec.size_dims = ["S", ""]}, %v: tensor<4xf32>) -> tensor<f32> {
  %y = fusec.matmul %x, %v {fusec.size_dims = [["S"]]} : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8xf32>
  %s = fusec.sum %y {axes = array<i64: 0>, fusec.size_dims = [[]]} : (tensor<8xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

// -----

// A vector contracting a padded dim is refused, as any product of a vector
// over S.
func.func @vector_over_s(%x: tensor<4x8xf32> {fusec.size_dims = ["", "S"]}, %v: tensor<8xf32> {fusec.size_dims = ["S"]}) -> tensor<4xf32> {
  // expected-error @+1 {{matmul: it contracts a padded dim with a vector; a size it depends on so cannot be padded: bind it to one size}}
  %y = fusec.matmul %x, %v {fusec.size_dims = [[""]]} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
