// Parse and print every fusec op. The second RUN line parses the printed form
// again, the third goes through the generic form, so the custom printer and parser
// of each op are checked to agree with each other and with the generic syntax.
// RUN: fusec-opt %s | FileCheck %s
// RUN: fusec-opt %s | fusec-opt | FileCheck %s
// RUN: fusec-opt %s -mlir-print-op-generic | fusec-opt | FileCheck %s

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @unary_numeric(
// CHECK-SAME:    %[[F:[^:]*]]: tensor<4x8xf32>, %[[I:[^:]*]]: tensor<3xi32>, %[[L:[^:]*]]: tensor<2x2xi64>, %[[H:[^:]*]]: tensor<f16>
func.func @unary_numeric(%f: tensor<4x8xf32>, %i: tensor<3xi32>, %l: tensor<2x2xi64>, %h: tensor<f16>)
    -> (tensor<4x8xf32>, tensor<3xi32>, tensor<2x2xi64>, tensor<f16>, tensor<3xi32>, tensor<2x2xi64>, tensor<4x8xf32>) {
  // CHECK: %[[NEG:.*]] = fusec.neg %[[F]] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %0 = fusec.neg %f : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: %[[NEGI:.*]] = fusec.neg %[[I]] : (tensor<3xi32>) -> tensor<3xi32>
  %1 = fusec.neg %i : (tensor<3xi32>) -> tensor<3xi32>
  // CHECK: %[[ABS:.*]] = fusec.abs %[[L]] : (tensor<2x2xi64>) -> tensor<2x2xi64>
  %2 = fusec.abs %l : (tensor<2x2xi64>) -> tensor<2x2xi64>
  // CHECK: %[[ABSH:.*]] = fusec.abs %[[H]] : (tensor<f16>) -> tensor<f16>
  %3 = fusec.abs %h : (tensor<f16>) -> tensor<f16>
  // CHECK: %[[RELUI:.*]] = fusec.relu %[[I]] : (tensor<3xi32>) -> tensor<3xi32>
  %4 = fusec.relu %i : (tensor<3xi32>) -> tensor<3xi32>
  // CHECK: %[[RELUL:.*]] = fusec.relu %[[L]] : (tensor<2x2xi64>) -> tensor<2x2xi64>
  %5 = fusec.relu %l : (tensor<2x2xi64>) -> tensor<2x2xi64>
  // CHECK: %[[RELUF:.*]] = fusec.relu %[[NEG]] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %6 = fusec.relu %0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: return %[[NEG]], %[[NEGI]], %[[ABS]], %[[ABSH]], %[[RELUI]], %[[RELUL]], %[[RELUF]] :
  return %0, %1, %2, %3, %4, %5, %6 : tensor<4x8xf32>, tensor<3xi32>, tensor<2x2xi64>, tensor<f16>, tensor<3xi32>, tensor<2x2xi64>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @unary_float(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<2x3xbf16>, %[[Y:[^:]*]]: tensor<5xf16>, %[[Z:[^:]*]]: tensor<f32>
func.func @unary_float(%x: tensor<2x3xbf16>, %y: tensor<5xf16>, %z: tensor<f32>)
    -> (tensor<2x3xbf16>, tensor<5xf16>, tensor<f32>, tensor<2x3xbf16>, tensor<5xf16>, tensor<f32>,
        tensor<2x3xbf16>, tensor<5xf16>, tensor<f32>, tensor<2x3xbf16>, tensor<5xf16>, tensor<f32>) {
  // CHECK: %[[EXP:.*]] = fusec.exp %[[X]] : (tensor<2x3xbf16>) -> tensor<2x3xbf16>
  %0 = fusec.exp %x : (tensor<2x3xbf16>) -> tensor<2x3xbf16>
  // CHECK: %[[LOG:.*]] = fusec.log %[[Y]] : (tensor<5xf16>) -> tensor<5xf16>
  %1 = fusec.log %y : (tensor<5xf16>) -> tensor<5xf16>
  // CHECK: %[[SQRT:.*]] = fusec.sqrt %[[Z]] : (tensor<f32>) -> tensor<f32>
  %2 = fusec.sqrt %z : (tensor<f32>) -> tensor<f32>
  // CHECK: %[[RSQRT:.*]] = fusec.rsqrt %[[EXP]] : (tensor<2x3xbf16>) -> tensor<2x3xbf16>
  %3 = fusec.rsqrt %0 : (tensor<2x3xbf16>) -> tensor<2x3xbf16>
  // CHECK: %[[RCP:.*]] = fusec.reciprocal %[[LOG]] : (tensor<5xf16>) -> tensor<5xf16>
  %4 = fusec.reciprocal %1 : (tensor<5xf16>) -> tensor<5xf16>
  // CHECK: %[[TANH:.*]] = fusec.tanh %[[SQRT]] : (tensor<f32>) -> tensor<f32>
  %5 = fusec.tanh %2 : (tensor<f32>) -> tensor<f32>
  // CHECK: %[[SIG:.*]] = fusec.sigmoid %[[X]] : (tensor<2x3xbf16>) -> tensor<2x3xbf16>
  %6 = fusec.sigmoid %x : (tensor<2x3xbf16>) -> tensor<2x3xbf16>
  // CHECK: %[[SILU:.*]] = fusec.silu %[[Y]] : (tensor<5xf16>) -> tensor<5xf16>
  %7 = fusec.silu %y : (tensor<5xf16>) -> tensor<5xf16>
  // CHECK: %[[SIN:.*]] = fusec.sin %[[Z]] : (tensor<f32>) -> tensor<f32>
  %8 = fusec.sin %z : (tensor<f32>) -> tensor<f32>
  // CHECK: %[[COS:.*]] = fusec.cos %[[X]] : (tensor<2x3xbf16>) -> tensor<2x3xbf16>
  %9 = fusec.cos %x : (tensor<2x3xbf16>) -> tensor<2x3xbf16>
  // CHECK: %[[ERF:.*]] = fusec.erf %[[Y]] : (tensor<5xf16>) -> tensor<5xf16>
  %10 = fusec.erf %y : (tensor<5xf16>) -> tensor<5xf16>
  // CHECK: %[[TANH2:.*]] = fusec.tanh %[[Z]] : (tensor<f32>) -> tensor<f32>
  %11 = fusec.tanh %z : (tensor<f32>) -> tensor<f32>
  // CHECK: return %[[EXP]], %[[LOG]], %[[SQRT]], %[[RSQRT]], %[[RCP]], %[[TANH]], %[[SIG]], %[[SILU]], %[[SIN]], %[[COS]], %[[ERF]], %[[TANH2]] :
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11
      : tensor<2x3xbf16>, tensor<5xf16>, tensor<f32>, tensor<2x3xbf16>, tensor<5xf16>, tensor<f32>,
        tensor<2x3xbf16>, tensor<5xf16>, tensor<f32>, tensor<2x3xbf16>, tensor<5xf16>, tensor<f32>
}

// `approximate` defaults to "none", so the printer leaves the default out and
// keeps "tanh".
// CHECK-LABEL: func.func @gelu(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<8x16xbf16>
func.func @gelu(%x: tensor<8x16xbf16>) -> (tensor<8x16xbf16>, tensor<8x16xbf16>, tensor<8x16xbf16>) {
  // CHECK: %[[DEFAULT:.*]] = fusec.gelu %[[X]] : (tensor<8x16xbf16>) -> tensor<8x16xbf16>
  %0 = fusec.gelu %x : (tensor<8x16xbf16>) -> tensor<8x16xbf16>
  // CHECK: %[[NONE:.*]] = fusec.gelu %[[X]] : (tensor<8x16xbf16>) -> tensor<8x16xbf16>
  %1 = fusec.gelu %x {approximate = "none"} : (tensor<8x16xbf16>) -> tensor<8x16xbf16>
  // CHECK: %[[TANH:.*]] = fusec.gelu %[[X]] {approximate = "tanh"} : (tensor<8x16xbf16>) -> tensor<8x16xbf16>
  %2 = fusec.gelu %x {approximate = "tanh"} : (tensor<8x16xbf16>) -> tensor<8x16xbf16>
  // CHECK: return %[[DEFAULT]], %[[NONE]], %[[TANH]] :
  return %0, %1, %2 : tensor<8x16xbf16>, tensor<8x16xbf16>, tensor<8x16xbf16>
}

// CHECK-LABEL: func.func @cast(
// CHECK-SAME:    %[[F:[^:]*]]: tensor<4x4xf32>, %[[I:[^:]*]]: tensor<4x4xi32>, %[[B:[^:]*]]: tensor<4x4xi1>
func.func @cast(%f: tensor<4x4xf32>, %i: tensor<4x4xi32>, %b: tensor<4x4xi1>)
    -> (tensor<4x4xbf16>, tensor<4x4xf16>, tensor<4x4xi1>, tensor<4x4xi64>, tensor<4x4xf32>) {
  // CHECK: %[[TOBF16:.*]] = fusec.cast %[[F]] : (tensor<4x4xf32>) -> tensor<4x4xbf16>
  %0 = fusec.cast %f : (tensor<4x4xf32>) -> tensor<4x4xbf16>
  // CHECK: %[[TOF16:.*]] = fusec.cast %[[I]] : (tensor<4x4xi32>) -> tensor<4x4xf16>
  %1 = fusec.cast %i : (tensor<4x4xi32>) -> tensor<4x4xf16>
  // CHECK: %[[TOBOOL:.*]] = fusec.cast %[[TOBF16]] : (tensor<4x4xbf16>) -> tensor<4x4xi1>
  %2 = fusec.cast %0 : (tensor<4x4xbf16>) -> tensor<4x4xi1>
  // CHECK: %[[TOI64:.*]] = fusec.cast %[[B]] : (tensor<4x4xi1>) -> tensor<4x4xi64>
  %3 = fusec.cast %b : (tensor<4x4xi1>) -> tensor<4x4xi64>
  // CHECK: %[[SAME:.*]] = fusec.cast %[[F]] : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %4 = fusec.cast %f : (tensor<4x4xf32>) -> tensor<4x4xf32>
  // CHECK: return %[[TOBF16]], %[[TOF16]], %[[TOBOOL]], %[[TOI64]], %[[SAME]] :
  return %0, %1, %2, %3, %4 : tensor<4x4xbf16>, tensor<4x4xf16>, tensor<4x4xi1>, tensor<4x4xi64>, tensor<4x4xf32>
}

//===----------------------------------------------------------------------===//
// Binary, with NumPy broadcasting
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @binary_float(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<4x8xf32>, %[[ROW:[^:]*]]: tensor<8xf32>, %[[COL:[^:]*]]: tensor<4x1xf32>, %[[S:[^:]*]]: tensor<f32>
func.func @binary_float(%x: tensor<4x8xf32>, %row: tensor<8xf32>, %col: tensor<4x1xf32>, %s: tensor<f32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x4x8xf32>) {
  // CHECK: %[[ADD:.*]] = fusec.add %[[X]], %[[ROW]] : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %0 = fusec.add %x, %row : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK: %[[SUB:.*]] = fusec.sub %[[COL]], %[[X]] : (tensor<4x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = fusec.sub %col, %x : (tensor<4x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // Both operands are stretched: [4, 1] against [8].
  // CHECK: %[[MUL:.*]] = fusec.mul %[[COL]], %[[ROW]] : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %2 = fusec.mul %col, %row : (tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK: %[[DIV:.*]] = fusec.div %[[X]], %[[S]] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %3 = fusec.div %x, %s : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  // CHECK: %[[POW:.*]] = fusec.pow %[[X]], %[[X]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = fusec.pow %x, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: %[[MAX:.*]] = fusec.maximum %[[S]], %[[X]] : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %5 = fusec.maximum %s, %x : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: %[[MIN:.*]] = fusec.minimum %[[ADD]], %[[SUB]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %6 = fusec.minimum %0, %1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // The result may have a higher rank than either operand.
  // CHECK: %[[RANKUP:.*]] = fusec.add %[[X]], %{{.*}} : (tensor<4x8xf32>, tensor<2x1x1xf32>) -> tensor<2x4x8xf32>
  %c = fusec.constant {value = 1.0 : f64} : tensor<2x1x1xf32>
  %7 = fusec.add %x, %c : (tensor<4x8xf32>, tensor<2x1x1xf32>) -> tensor<2x4x8xf32>
  // CHECK: return %[[ADD]], %[[SUB]], %[[MUL]], %[[DIV]], %[[POW]], %[[MAX]], %[[MIN]], %[[RANKUP]] :
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x4x8xf32>
}

// CHECK-LABEL: func.func @binary_int_and_half(
// CHECK-SAME:    %[[I:[^:]*]]: tensor<2x3xi32>, %[[J:[^:]*]]: tensor<3xi32>, %[[L:[^:]*]]: tensor<5xi64>, %[[H:[^:]*]]: tensor<5xf16>, %[[B:[^:]*]]: tensor<1x5xbf16>
func.func @binary_int_and_half(%i: tensor<2x3xi32>, %j: tensor<3xi32>, %l: tensor<5xi64>, %h: tensor<5xf16>, %b: tensor<1x5xbf16>)
    -> (tensor<2x3xi32>, tensor<5xi64>, tensor<5xf16>, tensor<1x5xbf16>, tensor<2x3xi32>) {
  // CHECK: %[[DIV:.*]] = fusec.div %[[I]], %[[J]] : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  %0 = fusec.div %i, %j : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  // CHECK: %[[SUB:.*]] = fusec.sub %[[L]], %[[L]] : (tensor<5xi64>, tensor<5xi64>) -> tensor<5xi64>
  %1 = fusec.sub %l, %l : (tensor<5xi64>, tensor<5xi64>) -> tensor<5xi64>
  // CHECK: %[[MUL:.*]] = fusec.mul %[[H]], %[[H]] : (tensor<5xf16>, tensor<5xf16>) -> tensor<5xf16>
  %2 = fusec.mul %h, %h : (tensor<5xf16>, tensor<5xf16>) -> tensor<5xf16>
  // CHECK: %[[POW:.*]] = fusec.pow %[[B]], %[[B]] : (tensor<1x5xbf16>, tensor<1x5xbf16>) -> tensor<1x5xbf16>
  %3 = fusec.pow %b, %b : (tensor<1x5xbf16>, tensor<1x5xbf16>) -> tensor<1x5xbf16>
  // CHECK: %[[MAX:.*]] = fusec.maximum %[[J]], %[[I]] : (tensor<3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  %4 = fusec.maximum %j, %i : (tensor<3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  // CHECK: return %[[DIV]], %[[SUB]], %[[MUL]], %[[POW]], %[[MAX]] :
  return %0, %1, %2, %3, %4 : tensor<2x3xi32>, tensor<5xi64>, tensor<5xf16>, tensor<1x5xbf16>, tensor<2x3xi32>
}

// Comparisons of equal shapes. Broadcasting comparisons are in
// compare-broadcast.mlir, expected to fail while the ops reject operands of
// different shapes.
// CHECK-LABEL: func.func @compare(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<4x8xf32>, %[[Y:[^:]*]]: tensor<4x8xf32>, %[[I:[^:]*]]: tensor<3xi64>, %[[B:[^:]*]]: tensor<2xi1>
func.func @compare(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %i: tensor<3xi64>, %b: tensor<2xi1>)
    -> (tensor<4x8xi1>, tensor<4x8xi1>, tensor<3xi1>, tensor<3xi1>, tensor<4x8xi1>, tensor<3xi1>, tensor<2xi1>) {
  // CHECK: %[[EQ:.*]] = fusec.eq %[[X]], %[[Y]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
  %0 = fusec.eq %x, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
  // CHECK: %[[NE:.*]] = fusec.ne %[[Y]], %[[X]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
  %1 = fusec.ne %y, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
  // CHECK: %[[LT:.*]] = fusec.lt %[[I]], %[[I]] : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi1>
  %2 = fusec.lt %i, %i : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi1>
  // CHECK: %[[LE:.*]] = fusec.le %[[I]], %[[I]] : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi1>
  %3 = fusec.le %i, %i : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi1>
  // CHECK: %[[GT:.*]] = fusec.gt %[[X]], %[[Y]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
  %4 = fusec.gt %x, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
  // CHECK: %[[GE:.*]] = fusec.ge %[[I]], %[[I]] : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi1>
  %5 = fusec.ge %i, %i : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi1>
  // CHECK: %[[EQB:.*]] = fusec.eq %[[B]], %[[B]] : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
  %6 = fusec.eq %b, %b : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
  // CHECK: return %[[EQ]], %[[NE]], %[[LT]], %[[LE]], %[[GT]], %[[GE]], %[[EQB]] :
  return %0, %1, %2, %3, %4, %5, %6 : tensor<4x8xi1>, tensor<4x8xi1>, tensor<3xi1>, tensor<3xi1>, tensor<4x8xi1>, tensor<3xi1>, tensor<2xi1>
}

// CHECK-LABEL: func.func @where(
// CHECK-SAME:    %[[C:[^:]*]]: tensor<4x1xi1>, %[[A:[^:]*]]: tensor<4x8xf32>, %[[S:[^:]*]]: tensor<f32>, %[[I:[^:]*]]: tensor<8xi32>
func.func @where(%c: tensor<4x1xi1>, %a: tensor<4x8xf32>, %s: tensor<f32>, %i: tensor<8xi32>)
    -> (tensor<4x8xf32>, tensor<4x8xi32>, tensor<4x8xf32>) {
  // CHECK: %[[W:.*]] = fusec.where %[[C]], %[[A]], %[[S]] : (tensor<4x1xi1>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %0 = fusec.where %c, %a, %s : (tensor<4x1xi1>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  // All three stretched: [4, 1], [8] and [8] give [4, 8].
  // CHECK: %[[WI:.*]] = fusec.where %[[C]], %[[I]], %[[I]] : (tensor<4x1xi1>, tensor<8xi32>, tensor<8xi32>) -> tensor<4x8xi32>
  %1 = fusec.where %c, %i, %i : (tensor<4x1xi1>, tensor<8xi32>, tensor<8xi32>) -> tensor<4x8xi32>
  // CHECK: %[[WS:.*]] = fusec.where %{{.*}}, %[[S]], %[[A]] : (tensor<i1>, tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = fusec.constant {value = 1.0 : f64} : tensor<i1>
  %2 = fusec.where %t, %s, %a : (tensor<i1>, tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: return %[[W]], %[[WI]], %[[WS]] :
  return %0, %1, %2 : tensor<4x8xf32>, tensor<4x8xi32>, tensor<4x8xf32>
}

//===----------------------------------------------------------------------===//
// Nullary
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @constant(
func.func @constant() -> (tensor<f32>, tensor<2x3xbf16>, tensor<4xi1>, tensor<i64>, tensor<f16>, tensor<7xi32>) {
  // CHECK: %[[A:.*]] = fusec.constant {value = 1.000000e-05 : f64} : tensor<f32>
  %0 = fusec.constant {value = 1.0e-5 : f64} : tensor<f32>
  // CHECK: %[[B:.*]] = fusec.constant {value = -2.500000e+00 : f64} : tensor<2x3xbf16>
  %1 = fusec.constant {value = -2.5 : f64} : tensor<2x3xbf16>
  // CHECK: %[[C:.*]] = fusec.constant {value = 1.000000e+00 : f64} : tensor<4xi1>
  %2 = fusec.constant {value = 1.0 : f64} : tensor<4xi1>
  // CHECK: %[[D:.*]] = fusec.constant {value = 4.200000e+01 : f64} : tensor<i64>
  %3 = fusec.constant {value = 42.0 : f64} : tensor<i64>
  // -inf, as attention decomposition builds it, prints as its bit pattern.
  // CHECK: %[[E:.*]] = fusec.constant {value = 0xFFF0000000000000 : f64} : tensor<f16>
  %4 = fusec.constant {value = 0xFFF0000000000000 : f64} : tensor<f16>
  // CHECK: %[[F:.*]] = fusec.constant {value = 0.000000e+00 : f64} : tensor<7xi32>
  %5 = fusec.constant {value = 0.0 : f64} : tensor<7xi32>
  // CHECK: return %[[A]], %[[B]], %[[C]], %[[D]], %[[E]], %[[F]] :
  return %0, %1, %2, %3, %4, %5 : tensor<f32>, tensor<2x3xbf16>, tensor<4xi1>, tensor<i64>, tensor<f16>, tensor<7xi32>
}

// CHECK-LABEL: func.func @iota(
func.func @iota() -> (tensor<128x64xi32>, tensor<128x64xi32>, tensor<5xi64>, tensor<2x3x4xf32>) {
  // CHECK: %[[ROWS:.*]] = fusec.iota {dim = 0 : i64} : tensor<128x64xi32>
  %0 = fusec.iota {dim = 0 : i64} : tensor<128x64xi32>
  // CHECK: %[[COLS:.*]] = fusec.iota {dim = 1 : i64} : tensor<128x64xi32>
  %1 = fusec.iota {dim = 1 : i64} : tensor<128x64xi32>
  // CHECK: %[[I64:.*]] = fusec.iota {dim = 0 : i64} : tensor<5xi64>
  %2 = fusec.iota {dim = 0 : i64} : tensor<5xi64>
  // CHECK: %[[LAST:.*]] = fusec.iota {dim = 2 : i64} : tensor<2x3x4xf32>
  %3 = fusec.iota {dim = 2 : i64} : tensor<2x3x4xf32>
  // CHECK: return %[[ROWS]], %[[COLS]], %[[I64]], %[[LAST]] :
  return %0, %1, %2, %3 : tensor<128x64xi32>, tensor<128x64xi32>, tensor<5xi64>, tensor<2x3x4xf32>
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

// `keepdims` defaults to false: the printer leaves `keepdims = false` out.
// CHECK-LABEL: func.func @reductions(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<2x3x4xf32>, %[[I:[^:]*]]: tensor<6x5xi32>, %[[H:[^:]*]]: tensor<8x16xbf16>
func.func @reductions(%x: tensor<2x3x4xf32>, %i: tensor<6x5xi32>, %h: tensor<8x16xbf16>)
    -> (tensor<2x3x1xf32>, tensor<2x3xf32>, tensor<f32>, tensor<1x3x1xf32>, tensor<6xi32>, tensor<1x5xi32>,
        tensor<8x1xbf16>, tensor<16xbf16>, tensor<3xf32>, tensor<1x1xi32>) {
  // CHECK: %[[SUMK:.*]] = fusec.sum %[[X]] {axes = array<i64: 2>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
  %0 = fusec.sum %x {axes = array<i64: 2>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
  // CHECK: %[[SUM:.*]] = fusec.sum %[[X]] {axes = array<i64: 2>} : (tensor<2x3x4xf32>) -> tensor<2x3xf32>
  %1 = fusec.sum %x {axes = array<i64: 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2x3xf32>
  // All axes, without keepdims, give a rank-0 tensor.
  // CHECK: %[[MEANALL:.*]] = fusec.mean %[[X]] {axes = array<i64: 0, 1, 2>} : (tensor<2x3x4xf32>) -> tensor<f32>
  %2 = fusec.mean %x {axes = array<i64: 0, 1, 2>} : (tensor<2x3x4xf32>) -> tensor<f32>
  // CHECK: %[[MEANK:.*]] = fusec.mean %[[X]] {axes = array<i64: 0, 2>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<1x3x1xf32>
  %3 = fusec.mean %x {axes = array<i64: 0, 2>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<1x3x1xf32>
  // CHECK: %[[MAX:.*]] = fusec.max %[[I]] {axes = array<i64: 1>} : (tensor<6x5xi32>) -> tensor<6xi32>
  %4 = fusec.max %i {axes = array<i64: 1>} : (tensor<6x5xi32>) -> tensor<6xi32>
  // CHECK: %[[MINK:.*]] = fusec.min %[[I]] {axes = array<i64: 0>, keepdims = true} : (tensor<6x5xi32>) -> tensor<1x5xi32>
  %5 = fusec.min %i {axes = array<i64: 0>, keepdims = true} : (tensor<6x5xi32>) -> tensor<1x5xi32>
  // CHECK: %[[MAXH:.*]] = fusec.max %[[H]] {axes = array<i64: 1>, keepdims = true} : (tensor<8x16xbf16>) -> tensor<8x1xbf16>
  %6 = fusec.max %h {axes = array<i64: 1>, keepdims = true} : (tensor<8x16xbf16>) -> tensor<8x1xbf16>
  // CHECK: %[[MINH:.*]] = fusec.min %[[H]] {axes = array<i64: 0>} : (tensor<8x16xbf16>) -> tensor<16xbf16>
  %7 = fusec.min %h {axes = array<i64: 0>} : (tensor<8x16xbf16>) -> tensor<16xbf16>
  // CHECK: %[[SUM2:.*]] = fusec.sum %[[X]] {axes = array<i64: 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3xf32>
  %8 = fusec.sum %x {axes = array<i64: 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3xf32>
  // CHECK: %[[SUMI:.*]] = fusec.sum %[[I]] {axes = array<i64: 0, 1>, keepdims = true} : (tensor<6x5xi32>) -> tensor<1x1xi32>
  %9 = fusec.sum %i {axes = array<i64: 0, 1>, keepdims = true} : (tensor<6x5xi32>) -> tensor<1x1xi32>
  // CHECK: return %[[SUMK]], %[[SUM]], %[[MEANALL]], %[[MEANK]], %[[MAX]], %[[MINK]], %[[MAXH]], %[[MINH]], %[[SUM2]], %[[SUMI]] :
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9
      : tensor<2x3x1xf32>, tensor<2x3xf32>, tensor<f32>, tensor<1x3x1xf32>, tensor<6xi32>, tensor<1x5xi32>,
        tensor<8x1xbf16>, tensor<16xbf16>, tensor<3xf32>, tensor<1x1xi32>
}

//===----------------------------------------------------------------------===//
// Layout
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @reshape(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<4x8xf32>, %[[ONE:[^:]*]]: tensor<1x1xi64>
func.func @reshape(%x: tensor<4x8xf32>, %one: tensor<1x1xi64>) -> (tensor<32xf32>, tensor<2x4x4xf32>, tensor<i64>, tensor<1x1x1xi64>) {
  // CHECK: %[[FLAT:.*]] = fusec.reshape %[[X]] : (tensor<4x8xf32>) -> tensor<32xf32>
  %0 = fusec.reshape %x : (tensor<4x8xf32>) -> tensor<32xf32>
  // CHECK: %[[CUBE:.*]] = fusec.reshape %[[FLAT]] : (tensor<32xf32>) -> tensor<2x4x4xf32>
  %1 = fusec.reshape %0 : (tensor<32xf32>) -> tensor<2x4x4xf32>
  // CHECK: %[[SCALAR:.*]] = fusec.reshape %[[ONE]] : (tensor<1x1xi64>) -> tensor<i64>
  %2 = fusec.reshape %one : (tensor<1x1xi64>) -> tensor<i64>
  // CHECK: %[[BACK:.*]] = fusec.reshape %[[SCALAR]] : (tensor<i64>) -> tensor<1x1x1xi64>
  %3 = fusec.reshape %2 : (tensor<i64>) -> tensor<1x1x1xi64>
  // CHECK: return %[[FLAT]], %[[CUBE]], %[[SCALAR]], %[[BACK]] :
  return %0, %1, %2, %3 : tensor<32xf32>, tensor<2x4x4xf32>, tensor<i64>, tensor<1x1x1xi64>
}

// CHECK-LABEL: func.func @transpose(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<4x8xf32>, %[[Y:[^:]*]]: tensor<2x3x5xi1>
func.func @transpose(%x: tensor<4x8xf32>, %y: tensor<2x3x5xi1>) -> (tensor<8x4xf32>, tensor<2x5x3xi1>, tensor<5x2x3xi1>, tensor<4x8xf32>) {
  // CHECK: %[[T:.*]] = fusec.transpose %[[X]] {perm = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %0 = fusec.transpose %x {perm = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  // CHECK: %[[T021:.*]] = fusec.transpose %[[Y]] {perm = array<i64: 0, 2, 1>} : (tensor<2x3x5xi1>) -> tensor<2x5x3xi1>
  %1 = fusec.transpose %y {perm = array<i64: 0, 2, 1>} : (tensor<2x3x5xi1>) -> tensor<2x5x3xi1>
  // CHECK: %[[T201:.*]] = fusec.transpose %[[Y]] {perm = array<i64: 2, 0, 1>} : (tensor<2x3x5xi1>) -> tensor<5x2x3xi1>
  %2 = fusec.transpose %y {perm = array<i64: 2, 0, 1>} : (tensor<2x3x5xi1>) -> tensor<5x2x3xi1>
  // CHECK: %[[ID:.*]] = fusec.transpose %[[X]] {perm = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = fusec.transpose %x {perm = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: return %[[T]], %[[T021]], %[[T201]], %[[ID]] :
  return %0, %1, %2, %3 : tensor<8x4xf32>, tensor<2x5x3xi1>, tensor<5x2x3xi1>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @broadcast_to(
// CHECK-SAME:    %[[ROW:[^:]*]]: tensor<8xf32>, %[[COL:[^:]*]]: tensor<4x1xbf16>, %[[S:[^:]*]]: tensor<i32>
func.func @broadcast_to(%row: tensor<8xf32>, %col: tensor<4x1xbf16>, %s: tensor<i32>)
    -> (tensor<4x8xf32>, tensor<2x4x8xbf16>, tensor<2x3xi32>, tensor<8xf32>) {
  // CHECK: %[[B0:.*]] = fusec.broadcast_to %[[ROW]] : (tensor<8xf32>) -> tensor<4x8xf32>
  %0 = fusec.broadcast_to %row : (tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK: %[[B1:.*]] = fusec.broadcast_to %[[COL]] : (tensor<4x1xbf16>) -> tensor<2x4x8xbf16>
  %1 = fusec.broadcast_to %col : (tensor<4x1xbf16>) -> tensor<2x4x8xbf16>
  // CHECK: %[[B2:.*]] = fusec.broadcast_to %[[S]] : (tensor<i32>) -> tensor<2x3xi32>
  %2 = fusec.broadcast_to %s : (tensor<i32>) -> tensor<2x3xi32>
  // CHECK: %[[B3:.*]] = fusec.broadcast_to %[[ROW]] : (tensor<8xf32>) -> tensor<8xf32>
  %3 = fusec.broadcast_to %row : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK: return %[[B0]], %[[B1]], %[[B2]], %[[B3]] :
  return %0, %1, %2, %3 : tensor<4x8xf32>, tensor<2x4x8xbf16>, tensor<2x3xi32>, tensor<8xf32>
}

// CHECK-LABEL: func.func @slice(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<4x8xf32>, %[[V:[^:]*]]: tensor<10xi64>
func.func @slice(%x: tensor<4x8xf32>, %v: tensor<10xi64>) -> (tensor<4x3xf32>, tensor<2x8xf32>, tensor<4xi64>, tensor<0xi64>) {
  // CHECK: %[[S0:.*]] = fusec.slice %[[X]] {limits = array<i64: 4, 8>, starts = array<i64: 0, 2>, steps = array<i64: 1, 2>} : (tensor<4x8xf32>) -> tensor<4x3xf32>
  %0 = fusec.slice %x {starts = array<i64: 0, 2>, limits = array<i64: 4, 8>, steps = array<i64: 1, 2>} : (tensor<4x8xf32>) -> tensor<4x3xf32>
  // CHECK: %[[S1:.*]] = fusec.slice %[[X]] {limits = array<i64: 3, 8>, starts = array<i64: 1, 0>, steps = array<i64: 1, 1>} : (tensor<4x8xf32>) -> tensor<2x8xf32>
  %1 = fusec.slice %x {starts = array<i64: 1, 0>, limits = array<i64: 3, 8>, steps = array<i64: 1, 1>} : (tensor<4x8xf32>) -> tensor<2x8xf32>
  // A step that does not divide the window rounds up: [0, 10) step 3 takes 0, 3, 6, 9.
  // CHECK: %[[S2:.*]] = fusec.slice %[[V]] {limits = array<i64: 10>, starts = array<i64: 0>, steps = array<i64: 3>} : (tensor<10xi64>) -> tensor<4xi64>
  %2 = fusec.slice %v {starts = array<i64: 0>, limits = array<i64: 10>, steps = array<i64: 3>} : (tensor<10xi64>) -> tensor<4xi64>
  // An empty window is allowed.
  // CHECK: %[[S3:.*]] = fusec.slice %[[V]] {limits = array<i64: 5>, starts = array<i64: 5>, steps = array<i64: 1>} : (tensor<10xi64>) -> tensor<0xi64>
  %3 = fusec.slice %v {starts = array<i64: 5>, limits = array<i64: 5>, steps = array<i64: 1>} : (tensor<10xi64>) -> tensor<0xi64>
  // CHECK: return %[[S0]], %[[S1]], %[[S2]], %[[S3]] :
  return %0, %1, %2, %3 : tensor<4x3xf32>, tensor<2x8xf32>, tensor<4xi64>, tensor<0xi64>
}

// CHECK-LABEL: func.func @concat(
// CHECK-SAME:    %[[A:[^:]*]]: tensor<4x8xf32>, %[[B:[^:]*]]: tensor<4x2xf32>, %[[C:[^:]*]]: tensor<1x8xf32>
func.func @concat(%a: tensor<4x8xf32>, %b: tensor<4x2xf32>, %c: tensor<1x8xf32>)
    -> (tensor<4x10xf32>, tensor<9x8xf32>, tensor<4x8xf32>) {
  // CHECK: %[[C0:.*]] = fusec.concat %[[A]], %[[B]] {axis = 1 : i64} : (tensor<4x8xf32>, tensor<4x2xf32>) -> tensor<4x10xf32>
  %0 = fusec.concat %a, %b {axis = 1 : i64} : (tensor<4x8xf32>, tensor<4x2xf32>) -> tensor<4x10xf32>
  // CHECK: %[[C1:.*]] = fusec.concat %[[A]], %[[C]], %[[A]] {axis = 0 : i64} : (tensor<4x8xf32>, tensor<1x8xf32>, tensor<4x8xf32>) -> tensor<9x8xf32>
  %1 = fusec.concat %a, %c, %a {axis = 0 : i64} : (tensor<4x8xf32>, tensor<1x8xf32>, tensor<4x8xf32>) -> tensor<9x8xf32>
  // CHECK: %[[C2:.*]] = fusec.concat %[[A]] {axis = 0 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = fusec.concat %a {axis = 0 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: return %[[C0]], %[[C1]], %[[C2]] :
  return %0, %1, %2 : tensor<4x10xf32>, tensor<9x8xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @matmul(
// CHECK-SAME:    %[[A:[^:]*]]: tensor<4x8xbf16>, %[[B:[^:]*]]: tensor<8x16xbf16>, %[[BA:[^:]*]]: tensor<2x4x8xbf16>, %[[BB:[^:]*]]: tensor<2x1x4x8xf32>, %[[BC:[^:]*]]: tensor<3x8x16xf32>, %[[U:[^:]*]]: tensor<8xbf16>
func.func @matmul(%a: tensor<4x8xbf16>, %b: tensor<8x16xbf16>, %ba: tensor<2x4x8xbf16>,
                  %bb: tensor<2x1x4x8xf32>, %bc: tensor<3x8x16xf32>, %u: tensor<8xbf16>)
    -> (tensor<4x16xbf16>, tensor<2x4x16xbf16>, tensor<2x3x4x16xf32>, tensor<16xbf16>, tensor<4xbf16>, tensor<bf16>) {
  // CHECK: %[[MM:.*]] = fusec.matmul %[[A]], %[[B]] : (tensor<4x8xbf16>, tensor<8x16xbf16>) -> tensor<4x16xbf16>
  %0 = fusec.matmul %a, %b : (tensor<4x8xbf16>, tensor<8x16xbf16>) -> tensor<4x16xbf16>
  // CHECK: %[[BATCHED:.*]] = fusec.matmul %[[BA]], %[[B]] : (tensor<2x4x8xbf16>, tensor<8x16xbf16>) -> tensor<2x4x16xbf16>
  %1 = fusec.matmul %ba, %b : (tensor<2x4x8xbf16>, tensor<8x16xbf16>) -> tensor<2x4x16xbf16>
  // Batch dims [2, 1] and [3] broadcast to [2, 3].
  // CHECK: %[[BCAST:.*]] = fusec.matmul %[[BB]], %[[BC]] : (tensor<2x1x4x8xf32>, tensor<3x8x16xf32>) -> tensor<2x3x4x16xf32>
  %2 = fusec.matmul %bb, %bc : (tensor<2x1x4x8xf32>, tensor<3x8x16xf32>) -> tensor<2x3x4x16xf32>
  // A 1-D lhs is a row vector, a 1-D rhs a column vector; their dim is dropped.
  // CHECK: %[[VM:.*]] = fusec.matmul %[[U]], %[[B]] : (tensor<8xbf16>, tensor<8x16xbf16>) -> tensor<16xbf16>
  %3 = fusec.matmul %u, %b : (tensor<8xbf16>, tensor<8x16xbf16>) -> tensor<16xbf16>
  // CHECK: %[[MV:.*]] = fusec.matmul %[[A]], %[[U]] : (tensor<4x8xbf16>, tensor<8xbf16>) -> tensor<4xbf16>
  %4 = fusec.matmul %a, %u : (tensor<4x8xbf16>, tensor<8xbf16>) -> tensor<4xbf16>
  // CHECK: %[[DOT:.*]] = fusec.matmul %[[U]], %[[U]] : (tensor<8xbf16>, tensor<8xbf16>) -> tensor<bf16>
  %5 = fusec.matmul %u, %u : (tensor<8xbf16>, tensor<8xbf16>) -> tensor<bf16>
  // CHECK: return %[[MM]], %[[BATCHED]], %[[BCAST]], %[[VM]], %[[MV]], %[[DOT]] :
  return %0, %1, %2, %3, %4, %5 : tensor<4x16xbf16>, tensor<2x4x16xbf16>, tensor<2x3x4x16xf32>, tensor<16xbf16>, tensor<4xbf16>, tensor<bf16>
}

//===----------------------------------------------------------------------===//
// Composites
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @softmax(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<4x8xf32>, %[[H:[^:]*]]: tensor<2x3x5xbf16>
func.func @softmax(%x: tensor<4x8xf32>, %h: tensor<2x3x5xbf16>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x3x5xbf16>, tensor<2x3x5xbf16>) {
  // CHECK: %[[S1:.*]] = fusec.softmax %[[X]] {axis = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %0 = fusec.softmax %x {axis = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: %[[S0:.*]] = fusec.softmax %[[X]] {axis = 0 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = fusec.softmax %x {axis = 0 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: %[[L2:.*]] = fusec.log_softmax %[[H]] {axis = 2 : i64} : (tensor<2x3x5xbf16>) -> tensor<2x3x5xbf16>
  %2 = fusec.log_softmax %h {axis = 2 : i64} : (tensor<2x3x5xbf16>) -> tensor<2x3x5xbf16>
  // CHECK: %[[L1:.*]] = fusec.log_softmax %[[H]] {axis = 1 : i64} : (tensor<2x3x5xbf16>) -> tensor<2x3x5xbf16>
  %3 = fusec.log_softmax %h {axis = 1 : i64} : (tensor<2x3x5xbf16>) -> tensor<2x3x5xbf16>
  // CHECK: return %[[S1]], %[[S0]], %[[L2]], %[[L1]] :
  return %0, %1, %2, %3 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x3x5xbf16>, tensor<2x3x5xbf16>
}

// CHECK-LABEL: func.func @layer_norm(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<2x4x8xf32>, %[[W:[^:]*]]: tensor<8xf32>, %[[B:[^:]*]]: tensor<8xf32>, %[[W2:[^:]*]]: tensor<4x8xf32>
func.func @layer_norm(%x: tensor<2x4x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>, %w2: tensor<4x8xf32>)
    -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) {
  // CHECK: %[[WB:.*]] = fusec.layer_norm %[[X]] weight(%[[W]]) bias(%[[B]]) {axis = 2 : i64, eps = 1.000000e-05 : f64} : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %0 = fusec.layer_norm %x weight(%w) bias(%b) {axis = 2 : i64, eps = 1.0e-5 : f64}
      : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  // CHECK: %[[WONLY:.*]] = fusec.layer_norm %[[X]] weight(%[[W]]) {axis = 2 : i64, eps = 9.9999999999999995E-7 : f64} : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %1 = fusec.layer_norm %x weight(%w) {axis = 2 : i64, eps = 1.0e-6 : f64}
      : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  // CHECK: %[[BONLY:.*]] = fusec.layer_norm %[[X]] bias(%[[B]]) {axis = 2 : i64, eps = 1.000000e-05 : f64} : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %2 = fusec.layer_norm %x bias(%b) {axis = 2 : i64, eps = 1.0e-5 : f64}
      : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  // CHECK: %[[PLAIN:.*]] = fusec.layer_norm %[[X]] {axis = 2 : i64, eps = 1.000000e-05 : f64} : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %3 = fusec.layer_norm %x {axis = 2 : i64, eps = 1.0e-5 : f64} : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  // Normalizing over the last two dims: weight has shape [4, 8].
  // CHECK: %[[TWO:.*]] = fusec.layer_norm %[[X]] weight(%[[W2]]) {axis = 1 : i64, eps = 1.000000e-05 : f64} : (tensor<2x4x8xf32>, tensor<4x8xf32>) -> tensor<2x4x8xf32>
  %4 = fusec.layer_norm %x weight(%w2) {axis = 1 : i64, eps = 1.0e-5 : f64}
      : (tensor<2x4x8xf32>, tensor<4x8xf32>) -> tensor<2x4x8xf32>
  // CHECK: return %[[WB]], %[[WONLY]], %[[BONLY]], %[[PLAIN]], %[[TWO]] :
  return %0, %1, %2, %3, %4 : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
}

// 1e-6 has no short exact decimal form, so it prints with 17 digits.
// CHECK-LABEL: func.func @rms_norm(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<4x8xbf16>, %[[W:[^:]*]]: tensor<8xbf16>, %[[V:[^:]*]]: tensor<16xf32>
func.func @rms_norm(%x: tensor<4x8xbf16>, %w: tensor<8xbf16>, %v: tensor<16xf32>)
    -> (tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<16xf32>) {
  // CHECK: %[[WEIGHTED:.*]] = fusec.rms_norm %[[X]] weight(%[[W]]) {eps = 9.9999999999999995E-7 : f64} : (tensor<4x8xbf16>, tensor<8xbf16>) -> tensor<4x8xbf16>
  %0 = fusec.rms_norm %x weight(%w) {eps = 1.0e-6 : f64} : (tensor<4x8xbf16>, tensor<8xbf16>) -> tensor<4x8xbf16>
  // CHECK: %[[PLAIN:.*]] = fusec.rms_norm %[[X]] {eps = 9.9999999999999995E-7 : f64} : (tensor<4x8xbf16>) -> tensor<4x8xbf16>
  %1 = fusec.rms_norm %x {eps = 1.0e-6 : f64} : (tensor<4x8xbf16>) -> tensor<4x8xbf16>
  // CHECK: %[[VEC:.*]] = fusec.rms_norm %[[V]] {eps = 1.000000e-05 : f64} : (tensor<16xf32>) -> tensor<16xf32>
  %2 = fusec.rms_norm %v {eps = 1.0e-5 : f64} : (tensor<16xf32>) -> tensor<16xf32>
  // CHECK: return %[[WEIGHTED]], %[[PLAIN]], %[[VEC]] :
  return %0, %1, %2 : tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<16xf32>
}

// CHECK-LABEL: func.func @linear(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<4x8xbf16>, %[[W:[^:]*]]: tensor<16x8xbf16>, %[[B:[^:]*]]: tensor<16xbf16>, %[[X3:[^:]*]]: tensor<2x3x8xbf16>, %[[V:[^:]*]]: tensor<8xbf16>
func.func @linear(%x: tensor<4x8xbf16>, %w: tensor<16x8xbf16>, %b: tensor<16xbf16>, %x3: tensor<2x3x8xbf16>, %v: tensor<8xbf16>)
    -> (tensor<4x16xbf16>, tensor<4x16xbf16>, tensor<2x3x16xbf16>, tensor<16xbf16>) {
  // CHECK: %[[BIASED:.*]] = fusec.linear %[[X]], %[[W]] bias(%[[B]]) : (tensor<4x8xbf16>, tensor<16x8xbf16>, tensor<16xbf16>) -> tensor<4x16xbf16>
  %0 = fusec.linear %x, %w bias(%b) : (tensor<4x8xbf16>, tensor<16x8xbf16>, tensor<16xbf16>) -> tensor<4x16xbf16>
  // CHECK: %[[PLAIN:.*]] = fusec.linear %[[X]], %[[W]] : (tensor<4x8xbf16>, tensor<16x8xbf16>) -> tensor<4x16xbf16>
  %1 = fusec.linear %x, %w : (tensor<4x8xbf16>, tensor<16x8xbf16>) -> tensor<4x16xbf16>
  // CHECK: %[[BATCHED:.*]] = fusec.linear %[[X3]], %[[W]] bias(%[[B]]) : (tensor<2x3x8xbf16>, tensor<16x8xbf16>, tensor<16xbf16>) -> tensor<2x3x16xbf16>
  %2 = fusec.linear %x3, %w bias(%b) : (tensor<2x3x8xbf16>, tensor<16x8xbf16>, tensor<16xbf16>) -> tensor<2x3x16xbf16>
  // CHECK: %[[VEC:.*]] = fusec.linear %[[V]], %[[W]] : (tensor<8xbf16>, tensor<16x8xbf16>) -> tensor<16xbf16>
  %3 = fusec.linear %v, %w : (tensor<8xbf16>, tensor<16x8xbf16>) -> tensor<16xbf16>
  // CHECK: return %[[BIASED]], %[[PLAIN]], %[[BATCHED]], %[[VEC]] :
  return %0, %1, %2, %3 : tensor<4x16xbf16>, tensor<4x16xbf16>, tensor<2x3x16xbf16>, tensor<16xbf16>
}

// `causal = false` is the default and is left out when printed.
// CHECK-LABEL: func.func @attention(
// CHECK-SAME:    %[[Q:[^:]*]]: tensor<1x8x16x64xbf16>, %[[K:[^:]*]]: tensor<1x8x32x64xbf16>, %[[V:[^:]*]]: tensor<1x8x32x48xbf16>, %[[BM:[^:]*]]: tensor<16x32xi1>, %[[FM:[^:]*]]: tensor<1x1x1x32xbf16>, %[[KG:[^:]*]]: tensor<1x1x32x64xbf16>
func.func @attention(%q: tensor<1x8x16x64xbf16>, %k: tensor<1x8x32x64xbf16>, %v: tensor<1x8x32x48xbf16>,
                     %bm: tensor<16x32xi1>, %fm: tensor<1x1x1x32xbf16>, %kg: tensor<1x1x32x64xbf16>)
    -> (tensor<1x8x16x48xbf16>, tensor<1x8x16x48xbf16>, tensor<1x8x16x48xbf16>, tensor<1x8x16x48xbf16>,
        tensor<1x8x16x48xbf16>, tensor<1x8x16x48xbf16>, tensor<1x8x16x64xbf16>) {
  // CHECK: %[[PLAIN:.*]] = fusec.scaled_dot_product_attention %[[Q]], %[[K]], %[[V]] : (tensor<1x8x16x64xbf16>, tensor<1x8x32x64xbf16>, tensor<1x8x32x48xbf16>) -> tensor<1x8x16x48xbf16>
  %0 = fusec.scaled_dot_product_attention %q, %k, %v
      : (tensor<1x8x16x64xbf16>, tensor<1x8x32x64xbf16>, tensor<1x8x32x48xbf16>) -> tensor<1x8x16x48xbf16>
  // CHECK: %[[BOOL:.*]] = fusec.scaled_dot_product_attention %[[Q]], %[[K]], %[[V]] mask(%[[BM]]) : (tensor<1x8x16x64xbf16>, tensor<1x8x32x64xbf16>, tensor<1x8x32x48xbf16>, tensor<16x32xi1>) -> tensor<1x8x16x48xbf16>
  %1 = fusec.scaled_dot_product_attention %q, %k, %v mask(%bm)
      : (tensor<1x8x16x64xbf16>, tensor<1x8x32x64xbf16>, tensor<1x8x32x48xbf16>, tensor<16x32xi1>) -> tensor<1x8x16x48xbf16>
  // CHECK: %[[FLOAT:.*]] = fusec.scaled_dot_product_attention %[[Q]], %[[K]], %[[V]] mask(%[[FM]]) : (tensor<1x8x16x64xbf16>, tensor<1x8x32x64xbf16>, tensor<1x8x32x48xbf16>, tensor<1x1x1x32xbf16>) -> tensor<1x8x16x48xbf16>
  %2 = fusec.scaled_dot_product_attention %q, %k, %v mask(%fm)
      : (tensor<1x8x16x64xbf16>, tensor<1x8x32x64xbf16>, tensor<1x8x32x48xbf16>, tensor<1x1x1x32xbf16>) -> tensor<1x8x16x48xbf16>
  // CHECK: %[[CAUSAL:.*]] = fusec.scaled_dot_product_attention %[[Q]], %[[K]], %[[V]] {causal = true} : (tensor<1x8x16x64xbf16>, tensor<1x8x32x64xbf16>, tensor<1x8x32x48xbf16>) -> tensor<1x8x16x48xbf16>
  %3 = fusec.scaled_dot_product_attention %q, %k, %v {causal = true}
      : (tensor<1x8x16x64xbf16>, tensor<1x8x32x64xbf16>, tensor<1x8x32x48xbf16>) -> tensor<1x8x16x48xbf16>
  // CHECK: %[[SCALED:.*]] = fusec.scaled_dot_product_attention %[[Q]], %[[K]], %[[V]] {scale = 2.500000e-01 : f64} : (tensor<1x8x16x64xbf16>, tensor<1x8x32x64xbf16>, tensor<1x8x32x48xbf16>) -> tensor<1x8x16x48xbf16>
  %4 = fusec.scaled_dot_product_attention %q, %k, %v {causal = false, scale = 0.25 : f64}
      : (tensor<1x8x16x64xbf16>, tensor<1x8x32x64xbf16>, tensor<1x8x32x48xbf16>) -> tensor<1x8x16x48xbf16>
  // CHECK: %[[ALL:.*]] = fusec.scaled_dot_product_attention %[[Q]], %[[K]], %[[V]] mask(%[[BM]]) {causal = true, scale = 1.000000e+00 : f64} : (tensor<1x8x16x64xbf16>, tensor<1x8x32x64xbf16>, tensor<1x8x32x48xbf16>, tensor<16x32xi1>) -> tensor<1x8x16x48xbf16>
  %5 = fusec.scaled_dot_product_attention %q, %k, %v mask(%bm) {causal = true, scale = 1.0 : f64}
      : (tensor<1x8x16x64xbf16>, tensor<1x8x32x64xbf16>, tensor<1x8x32x48xbf16>, tensor<16x32xi1>) -> tensor<1x8x16x48xbf16>
  // Grouped-query attention: a key/value with one head broadcasts over 8 query heads.
  // CHECK: %[[GQA:.*]] = fusec.scaled_dot_product_attention %[[Q]], %[[KG]], %[[KG]] : (tensor<1x8x16x64xbf16>, tensor<1x1x32x64xbf16>, tensor<1x1x32x64xbf16>) -> tensor<1x8x16x64xbf16>
  %6 = fusec.scaled_dot_product_attention %q, %kg, %kg
      : (tensor<1x8x16x64xbf16>, tensor<1x1x32x64xbf16>, tensor<1x1x32x64xbf16>) -> tensor<1x8x16x64xbf16>
  // CHECK: return %[[PLAIN]], %[[BOOL]], %[[FLOAT]], %[[CAUSAL]], %[[SCALED]], %[[ALL]], %[[GQA]] :
  return %0, %1, %2, %3, %4, %5, %6
      : tensor<1x8x16x48xbf16>, tensor<1x8x16x48xbf16>, tensor<1x8x16x48xbf16>, tensor<1x8x16x48xbf16>,
        tensor<1x8x16x48xbf16>, tensor<1x8x16x48xbf16>, tensor<1x8x16x64xbf16>
}

// CHECK-LABEL: func.func @topk
func.func @topk(%x: tensor<2x8xbf16>) -> (tensor<2x3xbf16>, tensor<2x3xi64>) {
  // CHECK: fusec.topk %{{.*}} {axis = 1 : i64, indices = false, k = 3 : i64} : (tensor<2x8xbf16>) -> tensor<2x3xbf16>
  %0 = fusec.topk %x {axis = 1 : i64, k = 3 : i64, indices = false} : (tensor<2x8xbf16>) -> tensor<2x3xbf16>
  // CHECK: fusec.topk %{{.*}} {axis = 1 : i64, indices = true, k = 3 : i64} : (tensor<2x8xbf16>) -> tensor<2x3xi64>
  %1 = fusec.topk %x {axis = 1 : i64, k = 3 : i64, indices = true} : (tensor<2x8xbf16>) -> tensor<2x3xi64>
  return %0, %1 : tensor<2x3xbf16>, tensor<2x3xi64>
}
