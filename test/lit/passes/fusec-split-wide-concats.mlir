// -fusec-split-wide-concats: a concat of 48 inputs or more (more buffers than
// a kernel takes) is joined in rounds of at most 32; narrower ones stay.
// RUN: fusec-opt %s -split-input-file -fusec-split-wide-concats | FileCheck %s

// 70 inputs: rounds of 32, 32 and 6, then one concat of the three.
// CHECK-LABEL: func.func @wide(
// CHECK:         %[[A:.*]] = fusec.concat %{{.*}} {axis = 1 : i64} : ({{.*}}) -> tensor<2x32xf32>
// CHECK-NEXT:    %[[B:.*]] = fusec.concat %{{.*}} {axis = 1 : i64} : ({{.*}}) -> tensor<2x32xf32>
// CHECK-NEXT:    %[[C:.*]] = fusec.concat %{{.*}} {axis = 1 : i64} : ({{.*}}) -> tensor<2x6xf32>
// CHECK-NEXT:    %[[ALL:.*]] = fusec.concat %[[A]], %[[B]], %[[C]] {axis = 1 : i64} : (tensor<2x32xf32>, tensor<2x32xf32>, tensor<2x6xf32>) -> tensor<2x70xf32>
// CHECK-NEXT:    return %[[ALL]]
func.func @wide(%x0: tensor<2x1xf32>, %x1: tensor<2x1xf32>, %x2: tensor<2x1xf32>, %x3: tensor<2x1xf32>, %x4: tensor<2x1xf32>, %x5: tensor<2x1xf32>, %x6: tensor<2x1xf32>, %x7: tensor<2x1xf32>, %x8: tensor<2x1xf32>, %x9: tensor<2x1xf32>, %x10: tensor<2x1xf32>, %x11: tensor<2x1xf32>, %x12: tensor<2x1xf32>, %x13: tensor<2x1xf32>, %x14: tensor<2x1xf32>, %x15: tensor<2x1xf32>, %x16: tensor<2x1xf32>, %x17: tensor<2x1xf32>, %x18: tensor<2x1xf32>, %x19: tensor<2x1xf32>, %x20: tensor<2x1xf32>, %x21: tensor<2x1xf32>, %x22: tensor<2x1xf32>, %x23: tensor<2x1xf32>, %x24: tensor<2x1xf32>, %x25: tensor<2x1xf32>, %x26: tensor<2x1xf32>, %x27: tensor<2x1xf32>, %x28: tensor<2x1xf32>, %x29: tensor<2x1xf32>, %x30: tensor<2x1xf32>, %x31: tensor<2x1xf32>, %x32: tensor<2x1xf32>, %x33: tensor<2x1xf32>, %x34: tensor<2x1xf32>, %x35: tensor<2x1xf32>, %x36: tensor<2x1xf32>, %x37: tensor<2x1xf32>, %x38: tensor<2x1xf32>, %x39: tensor<2x1xf32>, %x40: tensor<2x1xf32>, %x41: tensor<2x1xf32>, %x42: tensor<2x1xf32>, %x43: tensor<2x1xf32>, %x44: tensor<2x1xf32>, %x45: tensor<2x1xf32>, %x46: tensor<2x1xf32>, %x47: tensor<2x1xf32>, %x48: tensor<2x1xf32>, %x49: tensor<2x1xf32>, %x50: tensor<2x1xf32>, %x51: tensor<2x1xf32>, %x52: tensor<2x1xf32>, %x53: tensor<2x1xf32>, %x54: tensor<2x1xf32>, %x55: tensor<2x1xf32>, %x56: tensor<2x1xf32>, %x57: tensor<2x1xf32>, %x58: tensor<2x1xf32>, %x59: tensor<2x1xf32>, %x60: tensor<2x1xf32>, %x61: tensor<2x1xf32>, %x62: tensor<2x1xf32>, %x63: tensor<2x1xf32>, %x64: tensor<2x1xf32>, %x65: tensor<2x1xf32>, %x66: tensor<2x1xf32>, %x67: tensor<2x1xf32>, %x68: tensor<2x1xf32>, %x69: tensor<2x1xf32>) -> tensor<2x70xf32> {
  %y = fusec.concat %x0, %x1, %x2, %x3, %x4, %x5, %x6, %x7, %x8, %x9, %x10, %x11, %x12, %x13, %x14, %x15, %x16, %x17, %x18, %x19, %x20, %x21, %x22, %x23, %x24, %x25, %x26, %x27, %x28, %x29, %x30, %x31, %x32, %x33, %x34, %x35, %x36, %x37, %x38, %x39, %x40, %x41, %x42, %x43, %x44, %x45, %x46, %x47, %x48, %x49, %x50, %x51, %x52, %x53, %x54, %x55, %x56, %x57, %x58, %x59, %x60, %x61, %x62, %x63, %x64, %x65, %x66, %x67, %x68, %x69 {axis = 1 : i64} : (tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x70xf32>
  return %y : tensor<2x70xf32>
}

// -----

// Three inputs: as it was.
// CHECK-LABEL: func.func @narrow(
// CHECK-NEXT:    %[[Y:.*]] = fusec.concat %{{.*}}, %{{.*}}, %{{.*}} {axis = 0 : i64}
// CHECK-NEXT:    return %[[Y]]
func.func @narrow(%a: tensor<1x4xf32>, %b: tensor<2x4xf32>, %c: tensor<3x4xf32>) -> tensor<6x4xf32> {
  %y = fusec.concat %a, %b, %c {axis = 0 : i64} : (tensor<1x4xf32>, tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<6x4xf32>
  return %y : tensor<6x4xf32>
}
