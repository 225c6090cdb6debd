// Comparisons broadcast their operands like the binary ops (docs/graph-format.md:
// "Comparisons eq ne lt le gt ge: two operands of one dtype, broadcast, result bool").
// RUN: fusec-opt %s | FileCheck %s

// CHECK-LABEL: func.func @compare_broadcast(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<4x8xf32>, %[[ROW:[^:]*]]: tensor<8xf32>, %[[COL:[^:]*]]: tensor<4x1xi32>, %[[S:[^:]*]]: tensor<i32>
func.func @compare_broadcast(%x: tensor<4x8xf32>, %row: tensor<8xf32>, %col: tensor<4x1xi32>, %s: tensor<i32>)
    -> (tensor<4x8xi1>, tensor<4x8xi1>, tensor<4x1xi1>, tensor<4x1xi1>, tensor<4x8xi1>, tensor<4x8xi1>) {
  // CHECK: %[[EQ:.*]] = fusec.eq %[[X]], %[[ROW]] : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  %0 = fusec.eq %x, %row : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  // CHECK: %[[NE:.*]] = fusec.ne %[[ROW]], %[[X]] : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
  %1 = fusec.ne %row, %x : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
  // CHECK: %[[LT:.*]] = fusec.lt %[[COL]], %[[S]] : (tensor<4x1xi32>, tensor<i32>) -> tensor<4x1xi1>
  %2 = fusec.lt %col, %s : (tensor<4x1xi32>, tensor<i32>) -> tensor<4x1xi1>
  // CHECK: %[[LE:.*]] = fusec.le %[[S]], %[[COL]] : (tensor<i32>, tensor<4x1xi32>) -> tensor<4x1xi1>
  %3 = fusec.le %s, %col : (tensor<i32>, tensor<4x1xi32>) -> tensor<4x1xi1>
  // CHECK: %[[GT:.*]] = fusec.gt %[[X]], %{{.*}} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xi1>
  %c = fusec.constant {value = 0.5 : f64} : tensor<4x1xf32>
  %4 = fusec.gt %x, %c : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xi1>
  // CHECK: %[[GE:.*]] = fusec.ge %[[COL]], %{{.*}} : (tensor<4x1xi32>, tensor<8xi32>) -> tensor<4x8xi1>
  %r = fusec.iota {dim = 0 : i64} : tensor<8xi32>
  %5 = fusec.ge %col, %r : (tensor<4x1xi32>, tensor<8xi32>) -> tensor<4x8xi1>
  // CHECK: return %[[EQ]], %[[NE]], %[[LT]], %[[LE]], %[[GT]], %[[GE]] :
  return %0, %1, %2, %3, %4, %5 : tensor<4x8xi1>, tensor<4x8xi1>, tensor<4x1xi1>, tensor<4x1xi1>, tensor<4x8xi1>, tensor<4x8xi1>
}
