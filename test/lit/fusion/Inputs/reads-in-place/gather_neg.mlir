func.func @g(%t: tensor<100x64xf32>, %ids: tensor<8x16xi64>) -> tensor<8x16x1xf32> {
  %e = fusec.gather %t, %ids {axis = -2 : i64} : (tensor<100x64xf32>, tensor<8x16xi64>) -> tensor<8x16x64xf32>
  %s = fusec.sum %e {axes = array<i64: 2>, keepdims = true} : (tensor<8x16x64xf32>) -> tensor<8x16x1xf32>
  return %s : tensor<8x16x1xf32>
}
