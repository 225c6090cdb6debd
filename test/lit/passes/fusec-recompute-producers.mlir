// -fusec-recompute-producers: an elementwise op whose result another group
// reads from memory is copied into that group where the cost model
// predicts it faster; the copy joins the group (fusec.copy: not an op of the
// graph the merge walk visits; fusec.recomputed: counted once unfused).
// RUN: fusec-opt %s -split-input-file -fusec-recompute-producers | FileCheck %s

// The column sum recomputes exp(x) instead of reading it back; the row
// group keeps its exp (its own sum reads it).
// CHECK-LABEL: func.func @row_then_column(
// CHECK-SAME:    fusec.recomputed = [#fusec.decision<producer = "exp", consumer = "sum", code = recomputed, reason = "{{[0-9.]+}} us recomputing vs {{[0-9.]+}} us reading it from memory"
// CHECK:         %[[E:.*]] = fusec.exp %arg0 {fusec.group = 0 : i64}
// CHECK:         fusec.sum %[[E]] {{.*}}fusec.group = 0 : i64
// CHECK:         %[[C:.*]] = fusec.exp %arg0 {fusec.copy, fusec.group = 1 : i64, fusec.recomputed}
// CHECK:         fusec.sum %[[C]] {{.*}}fusec.group = 1 : i64
func.func @row_then_column(%x: tensor<256x512xf32>) -> (tensor<256x1xf32>, tensor<1x512xf32>) {
  %e = fusec.exp %x {fusec.group = 0 : i64} : (tensor<256x512xf32>) -> tensor<256x512xf32>
  %r = fusec.sum %e {axes = array<i64: 1>, fusec.group = 0 : i64, keepdims = true} : (tensor<256x512xf32>) -> tensor<256x1xf32>
  %c = fusec.sum %e {axes = array<i64: 0>, fusec.group = 1 : i64, keepdims = true} : (tensor<256x512xf32>) -> tensor<1x512xf32>
  return %r, %c : tensor<256x1xf32>, tensor<1x512xf32>
}

// -----

// A producer whose inputs are wider than its result is not copied: the
// consumer would read the two full operands instead of one reduced row.
// CHECK-LABEL: func.func @widens(
// CHECK-SAME:    fusec.rejected = [#fusec.decision<producer = "add", consumer = "mul", code = not_recomputed, reason = "not recomputed: {{[0-9.]+}} us with a copy vs {{[0-9.]+}} us reading it from memory"
// CHECK-NOT:     fusec.copy
func.func @widens(%a: tensor<4096x4096xf32>, %b: tensor<4096x4096xf32>) -> (tensor<4096x1xf32>, tensor<4096x4096xf32>) {
  %s = fusec.add %a, %b {fusec.group = 0 : i64} : (tensor<4096x4096xf32>, tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  %r = fusec.sum %s {axes = array<i64: 1>, fusec.group = 0 : i64, keepdims = true} : (tensor<4096x4096xf32>) -> tensor<4096x1xf32>
  %m = fusec.mul %s, %s {fusec.group = 1 : i64} : (tensor<4096x4096xf32>, tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  return %r, %m : tensor<4096x1xf32>, tensor<4096x4096xf32>
}
