// A negative iota dim is rejected and the diagnostic prints it as written.
// RUN: fusec-opt %s -split-input-file -verify-diagnostics

func.func @iota_dim_negative() -> tensor<4x8xi32> {
  // expected-error @+1 {{'fusec.iota' op dim -1 is out of range for rank 2}}
  %0 = fusec.iota {dim = -1 : i64} : tensor<4x8xi32>
  return %0 : tensor<4x8xi32>
}
