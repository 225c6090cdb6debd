// A linear whose result dtype differs from its input dtype must be rejected.
// BUG: LinearOp::verify (compiler/dialect/CompositeOps.cpp) checks the result
// shape but not its element type, so the op below verifies; -fusec-decompose then
// replaces the f32 result with a bf16 matmul and the function fails to verify
// ("type of return operand 0 ('tensor<4x16xbf16>') doesn't match function result
// type ('tensor<4x16xf32>')"). Remove the XFAIL once the verifier checks it.
// XFAIL: *
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
