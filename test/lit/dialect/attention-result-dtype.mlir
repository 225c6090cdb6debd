// An attention whose result dtype differs from the query dtype must be rejected.
// RUN: fusec-opt %s -split-input-file -verify-diagnostics

func.func @attention_result_dtype(%q: tensor<16x64xbf16>, %k: tensor<32x64xbf16>) -> tensor<16x64xf32> {
  // expected-error @+1 {{element type}}
  %0 = fusec.scaled_dot_product_attention %q, %k, %k : (tensor<16x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>) -> tensor<16x64xf32>
  return %0 : tensor<16x64xf32>
}
