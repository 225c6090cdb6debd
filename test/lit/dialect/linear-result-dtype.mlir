// A linear whose result dtype differs from its input dtype must be rejected.
// RUN: fusec-opt %s -split-input-file -verify-diagnostics

func.func @linear_result_dtype(%x: tensor<4x8xbf16>, %w: tensor<16x8xbf16>) -> tensor<4x16xf32> {
  // expected-error @+1 {{element type}}
  %0 = fusec.linear %x, %w : (tensor<4x8xbf16>, tensor<16x8xbf16>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @linear_bias_result_dtype(%x: tensor<4x8xf16>, %w: tensor<16x8xf16>, %b: tensor<16xf16>) -> tensor<4x16xbf16> {
  // expected-error @+1 {{element type}}
  %0 = fusec.linear %x, %w bias(%b) : (tensor<4x8xf16>, tensor<16x8xf16>, tensor<16xf16>) -> tensor<4x16xbf16>
  return %0 : tensor<4x16xbf16>
}
