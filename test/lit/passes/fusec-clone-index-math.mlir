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
