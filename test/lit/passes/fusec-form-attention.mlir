// -fusec-form-attention: a row softmax of a product's scores feeding a
// second product over the same axis becomes one group (fusec.group on each
// of its ops, every other compute op a group of its own); a match the
// kernel declines is recorded with its reason; other functions are left as
// they are.
// RUN: fusec-opt %s -split-input-file -fusec-form-attention | FileCheck %s
// RUN: fusec-opt %s -split-input-file -fusec-form-attention=device=l40s | FileCheck %s --check-prefix=L40S

// CHECK-LABEL: func.func @scaled_masked(
// CHECK:         fusec.gelu {{.*}}{fusec.group = 0 : i64}
// CHECK:         fusec.matmul {{.*}}{fusec.group = 1 : i64}
// CHECK:         fusec.mul {{.*}}{fusec.group = 1 : i64}
// CHECK:         fusec.add {{.*}}{fusec.group = 1 : i64}
// CHECK:         fusec.max {{.*}}fusec.group = 1 : i64
// CHECK:         fusec.sub {{.*}}{fusec.group = 1 : i64}
// CHECK:         fusec.exp {{.*}}{fusec.group = 1 : i64}
// CHECK:         fusec.sum {{.*}}fusec.group = 1 : i64
// CHECK:         fusec.div {{.*}}{fusec.group = 1 : i64}
// CHECK:         fusec.matmul {{.*}}{fusec.group = 1 : i64}
func.func @scaled_masked(%q: tensor<8x128x64xbf16>, %k: tensor<8x256x64xbf16>, %v: tensor<8x256x64xbf16>, %mask: tensor<8x1x256xbf16>) -> tensor<8x128x64xbf16> {
  %g = fusec.gelu %q : (tensor<8x128x64xbf16>) -> tensor<8x128x64xbf16>
  %kt = fusec.transpose %k {perm = array<i64: 0, 2, 1>} : (tensor<8x256x64xbf16>) -> tensor<8x64x256xbf16>
  %s = fusec.matmul %g, %kt : (tensor<8x128x64xbf16>, tensor<8x64x256xbf16>) -> tensor<8x128x256xbf16>
  %c = fusec.constant {value = 1.250000e-01 : f64} : tensor<bf16>
  %sc = fusec.mul %s, %c : (tensor<8x128x256xbf16>, tensor<bf16>) -> tensor<8x128x256xbf16>
  %x = fusec.add %sc, %mask : (tensor<8x128x256xbf16>, tensor<8x1x256xbf16>) -> tensor<8x128x256xbf16>
  %m = fusec.max %x {axes = array<i64: 2>, keepdims = true} : (tensor<8x128x256xbf16>) -> tensor<8x128x1xbf16>
  %d = fusec.sub %x, %m : (tensor<8x128x256xbf16>, tensor<8x128x1xbf16>) -> tensor<8x128x256xbf16>
  %e = fusec.exp %d : (tensor<8x128x256xbf16>) -> tensor<8x128x256xbf16>
  %l = fusec.sum %e {axes = array<i64: 2>, keepdims = true} : (tensor<8x128x256xbf16>) -> tensor<8x128x1xbf16>
  %p = fusec.div %e, %l : (tensor<8x128x256xbf16>, tensor<8x128x1xbf16>) -> tensor<8x128x256xbf16>
  %o = fusec.matmul %p, %v : (tensor<8x128x256xbf16>, tensor<8x256x64xbf16>) -> tensor<8x128x64xbf16>
  return %o : tensor<8x128x64xbf16>
}

// -----

// Head dim 272 is past the kernel's registers: recorded, nothing grouped.
// CHECK-LABEL: func.func @head_dim_272(
// CHECK-SAME:    fusec.rejected = [#fusec.decision<producer = "div", consumer = "matmul", code = no_kernel_family, reason = "the attention kernel takes head dims that are a multiple of 16 up to 256 (this one is 272)">]
// CHECK-NOT:     fusec.group
func.func @head_dim_272(%q: tensor<128x272xbf16>, %kt: tensor<272x128xbf16>, %v: tensor<128x272xbf16>) -> tensor<128x272xbf16> {
  %s = fusec.matmul %q, %kt : (tensor<128x272xbf16>, tensor<272x128xbf16>) -> tensor<128x128xbf16>
  %m = fusec.max %s {axes = array<i64: 1>, keepdims = true} : (tensor<128x128xbf16>) -> tensor<128x1xbf16>
  %d = fusec.sub %s, %m : (tensor<128x128xbf16>, tensor<128x1xbf16>) -> tensor<128x128xbf16>
  %e = fusec.exp %d : (tensor<128x128xbf16>) -> tensor<128x128xbf16>
  %l = fusec.sum %e {axes = array<i64: 1>, keepdims = true} : (tensor<128x128xbf16>) -> tensor<128x1xbf16>
  %p = fusec.div %e, %l : (tensor<128x128xbf16>, tensor<128x1xbf16>) -> tensor<128x128xbf16>
  %o = fusec.matmul %p, %v : (tensor<128x128xbf16>, tensor<128x272xbf16>) -> tensor<128x272xbf16>
  return %o : tensor<128x272xbf16>
}

// -----

// The probabilities are an output too: P would have to be written, so the
// softmax is not streamed.
// CHECK-LABEL: func.func @probs_kept(
// CHECK-NOT:     fusec.group
func.func @probs_kept(%q: tensor<128x64xbf16>, %kt: tensor<64x128xbf16>, %v: tensor<128x64xbf16>) -> (tensor<128x64xbf16>, tensor<128x128xbf16>) {
  %s = fusec.matmul %q, %kt : (tensor<128x64xbf16>, tensor<64x128xbf16>) -> tensor<128x128xbf16>
  %m = fusec.max %s {axes = array<i64: 1>, keepdims = true} : (tensor<128x128xbf16>) -> tensor<128x1xbf16>
  %d = fusec.sub %s, %m : (tensor<128x128xbf16>, tensor<128x1xbf16>) -> tensor<128x128xbf16>
  %e = fusec.exp %d : (tensor<128x128xbf16>) -> tensor<128x128xbf16>
  %l = fusec.sum %e {axes = array<i64: 1>, keepdims = true} : (tensor<128x128xbf16>) -> tensor<128x1xbf16>
  %p = fusec.div %e, %l : (tensor<128x128xbf16>, tensor<128x1xbf16>) -> tensor<128x128xbf16>
  %o = fusec.matmul %p, %v : (tensor<128x128xbf16>, tensor<128x64xbf16>) -> tensor<128x64xbf16>
  return %o, %p : tensor<128x64xbf16>, tensor<128x128xbf16>
}

// -----

// Head dim 128 takes 104 KB of shared memory: on an L40S (99 KB a block)
// the kernel declines and the products run as before.
// L40S-LABEL: func.func @head_dim_128(
// L40S-SAME:    reason = "the attention kernel's tiles of head dim 128 need 104448 bytes of shared memory; a block of the l40s has 101376"
// L40S-NOT:     fusec.group
// CHECK-LABEL: func.func @head_dim_128(
// CHECK:         fusec.matmul {{.*}}{fusec.group = 0 : i64}
func.func @head_dim_128(%q: tensor<128x128xbf16>, %k: tensor<128x128xbf16>, %v: tensor<128x128xbf16>) -> tensor<128x128xbf16> {
  %kt = fusec.transpose %k {perm = array<i64: 1, 0>} : (tensor<128x128xbf16>) -> tensor<128x128xbf16>
  %s = fusec.matmul %q, %kt : (tensor<128x128xbf16>, tensor<128x128xbf16>) -> tensor<128x128xbf16>
  %m = fusec.max %s {axes = array<i64: 1>, keepdims = true} : (tensor<128x128xbf16>) -> tensor<128x1xbf16>
  %d = fusec.sub %s, %m : (tensor<128x128xbf16>, tensor<128x1xbf16>) -> tensor<128x128xbf16>
  %e = fusec.exp %d : (tensor<128x128xbf16>) -> tensor<128x128xbf16>
  %l = fusec.sum %e {axes = array<i64: 1>, keepdims = true} : (tensor<128x128xbf16>) -> tensor<128x1xbf16>
  %p = fusec.div %e, %l : (tensor<128x128xbf16>, tensor<128x1xbf16>) -> tensor<128x128xbf16>
  %o = fusec.matmul %p, %v : (tensor<128x128xbf16>, tensor<128x128xbf16>) -> tensor<128x128xbf16>
  return %o : tensor<128x128xbf16>
}
