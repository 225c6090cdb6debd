// -fusec-clone-index-math: a value computed from iotas, constants and
// one-element arguments alone, read by several ops (one causal mask CSE
// merged across two layers), gets a copy per reader, and so does the index
// math it reads in turn; values that read a tensor argument, and generators
// themselves, stay shared.
// RUN: fusec-opt %s -split-input-file -fusec-clone-index-math | FileCheck %s

// Two readers of one mask (through a view): each gets its own view and
// comparison, just ahead of it; the iotas stay shared.
// CHECK-LABEL: func.func @two_layers(
// CHECK:         %[[ROWS:.*]] = fusec.iota {dim = 0 : i64}
// CHECK-NEXT:    %[[COLS:.*]] = fusec.iota {dim = 1 : i64}
// CHECK-NEXT:    %[[NEG:.*]] = fusec.constant
// CHECK-NEXT:    %[[K1:.*]] = fusec.ge %[[ROWS]], %[[COLS]]
// CHECK-NEXT:    %[[V1:.*]] = fusec.reshape %[[K1]]
// CHECK-NEXT:    %[[A:.*]] = fusec.where %[[V1]], %arg0, %[[NEG]] :
// CHECK-NEXT:    %[[K2:.*]] = fusec.ge %[[ROWS]], %[[COLS]]
// CHECK-NEXT:    %[[V2:.*]] = fusec.reshape %[[K2]]
// CHECK-NEXT:    %[[B:.*]] = fusec.where %[[V2]], %arg1, %[[NEG]] :
// CHECK-NEXT:    return %[[A]], %[[B]]
func.func @two_layers(%s0: tensor<1x16x32xf32>, %s1: tensor<1x16x32xf32>) -> (tensor<1x16x32xf32>, tensor<1x16x32xf32>) {
  %rows = fusec.iota {dim = 0 : i64} : tensor<16x32xi32>
  %cols = fusec.iota {dim = 1 : i64} : tensor<16x32xi32>
  %keep = fusec.ge %rows, %cols : (tensor<16x32xi32>, tensor<16x32xi32>) -> tensor<16x32xi1>
  %view = fusec.reshape %keep {shape = array<i64: 1, 16, 32>} : (tensor<16x32xi1>) -> tensor<1x16x32xi1>
  %neg = fusec.constant {value = 0xFFF0000000000000 : f64} : tensor<f32>
  %a = fusec.where %view, %s0, %neg : (tensor<1x16x32xi1>, tensor<1x16x32xf32>, tensor<f32>) -> tensor<1x16x32xf32>
  %b = fusec.where %view, %s1, %neg : (tensor<1x16x32xi1>, tensor<1x16x32xf32>, tensor<f32>) -> tensor<1x16x32xf32>
  return %a, %b : tensor<1x16x32xf32>, tensor<1x16x32xf32>
}

// -----

// A mask that reads an argument is a tensor in memory: it stays one value.
// CHECK-LABEL: func.func @reads_memory(
// CHECK:         %[[M:.*]] = fusec.ge %arg2,
// CHECK-NOT:     fusec.ge
// CHECK:         fusec.where %[[M]], %arg0
// CHECK:         fusec.where %[[M]], %arg1
func.func @reads_memory(%s0: tensor<16x32xf32>, %s1: tensor<16x32xf32>, %p: tensor<16x32xi32>) -> (tensor<16x32xf32>, tensor<16x32xf32>) {
  %cols = fusec.iota {dim = 1 : i64} : tensor<16x32xi32>
  %keep = fusec.ge %p, %cols : (tensor<16x32xi32>, tensor<16x32xi32>) -> tensor<16x32xi1>
  %neg = fusec.constant {value = 0xFFF0000000000000 : f64} : tensor<f32>
  %a = fusec.where %keep, %s0, %neg : (tensor<16x32xi1>, tensor<16x32xf32>, tensor<f32>) -> tensor<16x32xf32>
  %b = fusec.where %keep, %s1, %neg : (tensor<16x32xi1>, tensor<16x32xf32>, tensor<f32>) -> tensor<16x32xf32>
  return %a, %b : tensor<16x32xf32>, tensor<16x32xf32>
}

// -----

// A key mask against a one-element argument (the size a padded program
// takes) is as free as one against a constant: each reader gets its own.
// CHECK-LABEL: func.func @size_mask(
// CHECK:         %[[NEG:.*]] = fusec.constant
// CHECK-NEXT:    %[[N1:.*]] = fusec.broadcast_to %arg2
// CHECK-NEXT:    %[[K1:.*]] = fusec.lt %{{.*}}, %[[N1]]
// CHECK-NEXT:    fusec.where %[[K1]], %arg0, %[[NEG]]
// CHECK-NEXT:    %[[N2:.*]] = fusec.broadcast_to %arg2
// CHECK-NEXT:    %[[K2:.*]] = fusec.lt %{{.*}}, %[[N2]]
// CHECK-NEXT:    fusec.where %[[K2]], %arg1, %[[NEG]]
func.func @size_mask(%s0: tensor<4x32xf32>, %s1: tensor<4x32xf32>, %n: tensor<i32>) -> (tensor<4x32xf32>, tensor<4x32xf32>) {
  %cols = fusec.iota {dim = 1 : i64} : tensor<4x32xi32>
  %nb = fusec.broadcast_to %n : (tensor<i32>) -> tensor<4x32xi32>
  %keep = fusec.lt %cols, %nb : (tensor<4x32xi32>, tensor<4x32xi32>) -> tensor<4x32xi1>
  %neg = fusec.constant {value = 0xFFF0000000000000 : f64} : tensor<f32>
  %a = fusec.where %keep, %s0, %neg : (tensor<4x32xi1>, tensor<4x32xf32>, tensor<f32>) -> tensor<4x32xf32>
  %b = fusec.where %keep, %s1, %neg : (tensor<4x32xi1>, tensor<4x32xf32>, tensor<f32>) -> tensor<4x32xf32>
  return %a, %b : tensor<4x32xf32>, tensor<4x32xf32>
}

// -----

// Diamonds: a reader's copies are made once for all it reads (%d reads %c
// twice, through %e and %f), so each reader gets one copy of each op, not
// one per path; the function's return, reading %d twice (itself and through
// %b, index math too), is a reader like any other and gets one copy of %d.
// CHECK-LABEL: func.func @diamond(
// CHECK:         %[[I:.*]] = fusec.iota
// CHECK-NEXT:    %[[C1:.*]] = fusec.add %[[I]], %[[I]]
// CHECK-NEXT:    %[[E1:.*]] = fusec.mul %[[C1]], %[[C1]]
// CHECK-NEXT:    %[[F1:.*]] = fusec.sub %[[C1]], %[[C1]]
// CHECK-NEXT:    %[[D1:.*]] = fusec.add %[[E1]], %[[F1]]
// CHECK-NEXT:    %[[A:.*]] = fusec.add %[[D1]], %arg0
// CHECK-NEXT:    %[[C2:.*]] = fusec.add %[[I]], %[[I]]
// CHECK-NEXT:    %[[E2:.*]] = fusec.mul %[[C2]], %[[C2]]
// CHECK-NEXT:    %[[F2:.*]] = fusec.sub %[[C2]], %[[C2]]
// CHECK-NEXT:    %[[D2:.*]] = fusec.add %[[E2]], %[[F2]]
// CHECK-NEXT:    %[[B:.*]] = fusec.mul %[[D2]], %[[D2]]
// CHECK-NEXT:    return %[[A]], %[[B]], %[[D2]]
func.func @diamond(%x: tensor<8xi32>) -> (tensor<8xi32>, tensor<8xi32>, tensor<8xi32>) {
  %i = fusec.iota {dim = 0 : i64} : tensor<8xi32>
  %c = fusec.add %i, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %e = fusec.mul %c, %c : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %f = fusec.sub %c, %c : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %d = fusec.add %e, %f : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %a = fusec.add %d, %x : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %b = fusec.mul %d, %d : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  return %a, %b, %d : tensor<8xi32>, tensor<8xi32>, tensor<8xi32>
}

// -----

// One reader: nothing is shared, nothing moves.
// CHECK-LABEL: func.func @one_reader(
// CHECK:         fusec.iota
// CHECK-NEXT:    fusec.ge
// CHECK-NEXT:    fusec.constant
// CHECK-NEXT:    fusec.where
// CHECK-NEXT:    return
func.func @one_reader(%s: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %cols = fusec.iota {dim = 1 : i64} : tensor<16x32xi32>
  %keep = fusec.ge %cols, %cols : (tensor<16x32xi32>, tensor<16x32xi32>) -> tensor<16x32xi1>
  %neg = fusec.constant {value = 0xFFF0000000000000 : f64} : tensor<f32>
  %a = fusec.where %keep, %s, %neg : (tensor<16x32xi1>, tensor<16x32xf32>, tensor<f32>) -> tensor<16x32xf32>
  return %a : tensor<16x32xf32>
}

// -----

// Matmuls read their operands from memory (cuBLASLt, the wgmma kernels): a
// table of index math that only matmuls read stays one value, written once,
// not one copy a matmul.
// CHECK-LABEL: func.func @matmul_readers(
// CHECK:         %[[T:.*]] = fusec.cos
// CHECK-NOT:     fusec.cos
// CHECK:         fusec.matmul %arg0, %[[T]]
// CHECK:         fusec.matmul %arg1, %[[T]]
func.func @matmul_readers(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %r = fusec.iota {dim = 0 : i64} : tensor<8x8xf32>
  %c = fusec.iota {dim = 1 : i64} : tensor<8x8xf32>
  %rc = fusec.mul %r, %c : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %t = fusec.cos %rc : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %a = fusec.matmul %x, %t : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %b = fusec.matmul %y, %t : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %a, %b : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A cone of more than 64 ops is not copied: a chain of index math read at
// every link would otherwise copy quadratically many ops. Both readers keep
// reading the one chain.
// CHECK-LABEL: func.func @long_chain(
// CHECK-COUNT-69: fusec.add %
// CHECK:         %[[END:.*]] = fusec.add
// CHECK-NEXT:    fusec.mul %[[END]], %arg0
// CHECK-NEXT:    fusec.mul %[[END]], %arg1
func.func @long_chain(%x: tensor<8xi32>, %y: tensor<8xi32>) -> (tensor<8xi32>, tensor<8xi32>) {
  %i = fusec.iota {dim = 0 : i64} : tensor<8xi32>
  %c0 = fusec.add %i, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c1 = fusec.add %c0, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c2 = fusec.add %c1, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c3 = fusec.add %c2, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c4 = fusec.add %c3, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c5 = fusec.add %c4, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c6 = fusec.add %c5, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c7 = fusec.add %c6, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c8 = fusec.add %c7, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c9 = fusec.add %c8, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c10 = fusec.add %c9, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c11 = fusec.add %c10, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c12 = fusec.add %c11, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c13 = fusec.add %c12, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c14 = fusec.add %c13, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c15 = fusec.add %c14, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c16 = fusec.add %c15, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c17 = fusec.add %c16, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c18 = fusec.add %c17, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c19 = fusec.add %c18, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c20 = fusec.add %c19, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c21 = fusec.add %c20, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c22 = fusec.add %c21, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c23 = fusec.add %c22, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c24 = fusec.add %c23, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c25 = fusec.add %c24, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c26 = fusec.add %c25, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c27 = fusec.add %c26, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c28 = fusec.add %c27, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c29 = fusec.add %c28, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c30 = fusec.add %c29, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c31 = fusec.add %c30, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c32 = fusec.add %c31, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c33 = fusec.add %c32, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c34 = fusec.add %c33, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c35 = fusec.add %c34, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c36 = fusec.add %c35, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c37 = fusec.add %c36, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c38 = fusec.add %c37, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c39 = fusec.add %c38, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c40 = fusec.add %c39, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c41 = fusec.add %c40, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c42 = fusec.add %c41, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c43 = fusec.add %c42, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c44 = fusec.add %c43, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c45 = fusec.add %c44, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c46 = fusec.add %c45, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c47 = fusec.add %c46, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c48 = fusec.add %c47, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c49 = fusec.add %c48, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c50 = fusec.add %c49, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c51 = fusec.add %c50, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c52 = fusec.add %c51, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c53 = fusec.add %c52, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c54 = fusec.add %c53, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c55 = fusec.add %c54, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c56 = fusec.add %c55, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c57 = fusec.add %c56, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c58 = fusec.add %c57, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c59 = fusec.add %c58, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c60 = fusec.add %c59, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c61 = fusec.add %c60, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c62 = fusec.add %c61, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c63 = fusec.add %c62, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c64 = fusec.add %c63, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c65 = fusec.add %c64, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c66 = fusec.add %c65, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c67 = fusec.add %c66, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c68 = fusec.add %c67, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %c69 = fusec.add %c68, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %a = fusec.mul %c69, %x : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %b = fusec.mul %c69, %y : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  return %a, %b : tensor<8xi32>, tensor<8xi32>
}
