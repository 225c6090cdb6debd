// -fusec-fuse-siblings: matmuls that read the same A share one kernel where
// the cost model predicts it faster than each on its chosen path.
// RUN: fusec-opt %s -split-input-file -fusec-fuse-siblings | FileCheck %s
// RUN: fusec-opt %s -split-input-file '-fusec-fuse-siblings=gemm=cublaslt' | FileCheck %s --check-prefix=LIB

// Decode Q/K/V: one dot-product kernel streams the three weights with x
// read once. Under --gemm cublaslt siblings stay apart.
// CHECK-LABEL: func.func @decode_qkv(
// CHECK:         fusec.matmul {{.*}}fusec.family = #fusec.family<gemv>, fusec.gemm_alternatives = "fusec GEMV of 3 sibling matmuls, A read once: {{[0-9.]+}} us; as separate kernels: {{[0-9.]+}} us", fusec.group = 0 : i64
// CHECK:         fusec.matmul {{.*}}fusec.group = 0 : i64
// CHECK:         fusec.matmul {{.*}}fusec.group = 0 : i64
// LIB-LABEL:   func.func @decode_qkv(
// LIB:           fusec.matmul {{.*}}fusec.group = 0 : i64
// LIB:           fusec.matmul {{.*}}fusec.group = 1 : i64
// LIB:           fusec.matmul {{.*}}fusec.group = 2 : i64
func.func @decode_qkv(%x: tensor<1x4096xbf16>, %wq: tensor<4096x4096xbf16>, %wk: tensor<1024x4096xbf16>, %wv: tensor<1024x4096xbf16>) -> (tensor<1x4096xbf16>, tensor<1x1024xbf16>, tensor<1x1024xbf16>) {
  %tq = fusec.transpose %wq {perm = array<i64: 1, 0>} : (tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16>
  %tk = fusec.transpose %wk {perm = array<i64: 1, 0>} : (tensor<1024x4096xbf16>) -> tensor<4096x1024xbf16>
  %tv = fusec.transpose %wv {perm = array<i64: 1, 0>} : (tensor<1024x4096xbf16>) -> tensor<4096x1024xbf16>
  %q = fusec.matmul %x, %tq {fusec.family = #fusec.family<gemv>, fusec.group = 0 : i64} : (tensor<1x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<1x4096xbf16>
  %k = fusec.matmul %x, %tk {fusec.family = #fusec.family<gemv>, fusec.group = 1 : i64} : (tensor<1x4096xbf16>, tensor<4096x1024xbf16>) -> tensor<1x1024xbf16>
  %v = fusec.matmul %x, %tv {fusec.family = #fusec.family<gemv>, fusec.group = 2 : i64} : (tensor<1x4096xbf16>, tensor<4096x1024xbf16>) -> tensor<1x1024xbf16>
  return %q, %k, %v : tensor<1x4096xbf16>, tensor<1x1024xbf16>, tensor<1x1024xbf16>
}

// -----

// Prefill Q/K/V written as they are: on Hopper one wgmma kernel over their
// tiles side by side (pairwise: Q takes K, then V).
// CHECK-LABEL: func.func @prefill_qkv(
// CHECK:         fusec.matmul {{.*}}fusec.family = #fusec.family<gemm_wgmma>, fusec.gemm_alternatives = "fusec GEMM (wgmma) of 3 sibling products side by side, one launch: {{[0-9.]+}} us; each in its own launch: {{[0-9.]+}} us", fusec.group = 0 : i64
// CHECK:         fusec.matmul {{.*}}fusec.group = 0 : i64
// CHECK:         fusec.matmul {{.*}}fusec.group = 0 : i64
func.func @prefill_qkv(%x: tensor<512x4096xbf16>, %wq: tensor<4096x4096xbf16>, %wk: tensor<1024x4096xbf16>, %wv: tensor<1024x4096xbf16>) -> (tensor<512x4096xbf16>, tensor<512x1024xbf16>, tensor<512x1024xbf16>) {
  %tq = fusec.transpose %wq {perm = array<i64: 1, 0>} : (tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16>
  %tk = fusec.transpose %wk {perm = array<i64: 1, 0>} : (tensor<1024x4096xbf16>) -> tensor<4096x1024xbf16>
  %tv = fusec.transpose %wv {perm = array<i64: 1, 0>} : (tensor<1024x4096xbf16>) -> tensor<4096x1024xbf16>
  %q = fusec.matmul %x, %tq {fusec.family = #fusec.family<cublaslt>, fusec.group = 0 : i64} : (tensor<512x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<512x4096xbf16>
  %k = fusec.matmul %x, %tk {fusec.family = #fusec.family<cublaslt>, fusec.group = 1 : i64} : (tensor<512x4096xbf16>, tensor<4096x1024xbf16>) -> tensor<512x1024xbf16>
  %v = fusec.matmul %x, %tv {fusec.family = #fusec.family<cublaslt>, fusec.group = 2 : i64} : (tensor<512x4096xbf16>, tensor<4096x1024xbf16>) -> tensor<512x1024xbf16>
  return %q, %k, %v : tensor<512x4096xbf16>, tensor<512x1024xbf16>, tensor<512x1024xbf16>
}
