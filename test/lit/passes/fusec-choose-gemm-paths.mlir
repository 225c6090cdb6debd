// -fusec-choose-gemm-paths: each matmul group's way of running, priced by
// the cost model, as the matmul's fusec.family with the alternatives; a
// group that does not run whole is split.
// RUN: fusec-opt %s -split-input-file -fusec-choose-gemm-paths | FileCheck %s
// RUN: fusec-opt %s -split-input-file '-fusec-choose-gemm-paths=gemm=cublaslt' | FileCheck %s --check-prefix=LIB
// RUN: fusec-opt %s -split-input-file '-fusec-choose-gemm-paths=arch=sm_80' | FileCheck %s --check-prefix=AMPERE

// On Hopper fusec's wgmma GEMM runs the product with its epilogue (cuBLASLt
// has no exact-erf GELU). With --gemm cublaslt the epilogue is split off as
// a group of its own; so it is for a target without wgmma (sm_80), where
// the portable mma.sync GEMM is priced slower than cuBLASLt and a kernel
// for the epilogue.
// CHECK-LABEL: func.func @linear_gelu(
// CHECK:         fusec.matmul {{.*}}fusec.family = #fusec.family<gemm_wgmma>, fusec.gemm_alternatives = "fusec GEMM (wgmma) with the epilogue: {{[0-9.]+}} us; cuBLASLt + epilogue kernel: {{[0-9.]+}} us; no cuBLASLt epilogue: gelu: cuBLASLt's GELU is the tanh form", fusec.group = 0 : i64
// CHECK:         fusec.add {{.*}}{fusec.group = 0 : i64}
// CHECK:         fusec.gelu {{.*}}{fusec.group = 0 : i64}
// LIB-LABEL:   func.func @linear_gelu(
// LIB:           fusec.matmul {{.*}}fusec.family = #fusec.family<cublaslt>{{.*}}fusec.group = 0 : i64
// LIB:           fusec.add {{.*}}{fusec.group = 1 : i64}
// LIB:           fusec.gelu {{.*}}{fusec.group = 1 : i64}
// AMPERE-LABEL: func.func @linear_gelu(
// AMPERE:         fusec.matmul {{.*}}fusec.family = #fusec.family<cublaslt>, fusec.gemm_alternatives = "fusec GEMM with the epilogue: {{[0-9.]+}} us; cuBLASLt + epilogue kernel
// AMPERE:         fusec.add {{.*}}{fusec.group = 1 : i64}
func.func @linear_gelu(%x: tensor<4096x1024xbf16>, %w: tensor<1024x1024xbf16>, %b: tensor<1024xbf16>) -> tensor<4096x1024xbf16> {
  %wt = fusec.transpose %w {perm = array<i64: 1, 0>} : (tensor<1024x1024xbf16>) -> tensor<1024x1024xbf16>
  %p = fusec.matmul %x, %wt {fusec.group = 0 : i64} : (tensor<4096x1024xbf16>, tensor<1024x1024xbf16>) -> tensor<4096x1024xbf16>
  %h = fusec.add %p, %b {fusec.group = 0 : i64} : (tensor<4096x1024xbf16>, tensor<1024xbf16>) -> tensor<4096x1024xbf16>
  %g = fusec.gelu %h {fusec.group = 0 : i64} : (tensor<4096x1024xbf16>) -> tensor<4096x1024xbf16>
  return %g : tensor<4096x1024xbf16>
}

// -----

// A residual add and a bias are what cuBLASLt's epilogue expresses: with
// --gemm cublaslt the group runs whole as one library call.
// LIB-LABEL:   func.func @linear_residual(
// LIB:           fusec.matmul {{.*}}fusec.family = #fusec.family<cublaslt_epilogue>{{.*}}fusec.group = 0 : i64
// LIB:           fusec.add {{.*}}{fusec.group = 0 : i64}
func.func @linear_residual(%x: tensor<4096x1024xbf16>, %w: tensor<1024x1024xbf16>, %r: tensor<4096x1024xbf16>) -> tensor<4096x1024xbf16> {
  %wt = fusec.transpose %w {perm = array<i64: 1, 0>} : (tensor<1024x1024xbf16>) -> tensor<1024x1024xbf16>
  %p = fusec.matmul %x, %wt {fusec.group = 0 : i64} : (tensor<4096x1024xbf16>, tensor<1024x1024xbf16>) -> tensor<4096x1024xbf16>
  %y = fusec.add %p, %r {fusec.group = 0 : i64} : (tensor<4096x1024xbf16>, tensor<4096x1024xbf16>) -> tensor<4096x1024xbf16>
  return %y : tensor<4096x1024xbf16>
}

// -----

// A decode product (one row) runs on fusec's dot-product kernel.
// CHECK-LABEL: func.func @decode(
// CHECK:         fusec.matmul {{.*}}fusec.family = #fusec.family<gemv>, fusec.gemm_alternatives = "fusec GEMV: {{[0-9.]+}} us; cuBLASLt: {{[0-9.]+}} us"
func.func @decode(%x: tensor<1x4096xbf16>, %w: tensor<4096x4096xbf16>) -> tensor<1x4096xbf16> {
  %wt = fusec.transpose %w {perm = array<i64: 1, 0>} : (tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16>
  %q = fusec.matmul %x, %wt : (tensor<1x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<1x4096xbf16>
  return %q : tensor<1x4096xbf16>
}
