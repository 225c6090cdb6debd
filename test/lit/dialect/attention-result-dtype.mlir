// An attention whose result dtype differs from the query dtype must be rejected.
// BUG: AttentionOp::verify (compiler/dialect/CompositeOps.cpp) checks the key,
// value and mask dtypes and the result shape, but not the result element type,
// so the op below verifies; -fusec-decompose then replaces the f32 result with a
// bf16 matmul and the function fails to verify ("type of return operand 0
// ('tensor<16x64xbf16>') doesn't match function result type ('tensor<16x64xf32>')").
// Remove the XFAIL once the verifier checks it.
// XFAIL: *
// RUN: fusec-opt %s -split-input-file -verify-diagnostics

func.func @attention_result_dtype(%q: tensor<16x64xbf16>, %k: tensor<32x64xbf16>) -> tensor<16x64xf32> {
  // expected-error @+1 {{element type}}
  %0 = fusec.scaled_dot_product_attention %q, %k, %k : (tensor<16x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>) -> tensor<16x64xf32>
  return %0 : tensor<16x64xf32>
}
