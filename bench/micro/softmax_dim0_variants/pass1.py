# Hand-written pass-one variants for the S kernel (mk.py imports this).
HELP = '''
__device__ __forceinline__ void fz_cp16h(void *smem, const void *gmem, unsigned long long pol) {
  unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2;" :: "r"(s), "l"(gmem), "l"(pol) : "memory");
}
template <int N> __device__ __forceinline__ void fz_cpw() { asm volatile("cp.async.wait_group %0;" :: "n"(N) : "memory"); }
'''
def batch(src_expr, q0, fold=True, keep_reg=False, lds=False):
    # one batch of 4 rows q0..q0+3: load, (keep), unpack, fold
    s = "    {\n      uint4 r[4];\n      float x[8][4];\n"
    for u in range(4):
        q = q0 + u
        if lds:
            s += f"      r[{u}] = *reinterpret_cast<const uint4 *>(&cache0[{(q - 4) * 32} + ty][tx * 8]);\n"
        else:
            s += f"      r[{u}] = fz_ld16(fz_src0 + {q * 262144}, {src_expr});\n"
    s += "      #pragma unroll\n      for (int u = 0; u < 4; ++u) {\n"
    if keep_reg:
        s += f"        fz_reg0[{q0} + u] = r[u];\n"
    s += "        float cv[8];\n        fz_unpack<fz_bf16, 8>(r[u], cv);\n        #pragma unroll\n        for (int l = 0; l < 8; ++l) x[l][u] = cv[l];\n      }\n"
    s += "      #pragma unroll\n      for (int l = 0; l < 8; ++l) fz_online_add<4, true>(fz_rm[l], fz_rs[l], x[l]);\n    }\n"
    return s
def issue_smem(g):
    s = ""
    for u in range(4):
        q = 4 + g * 4 + u
        s += f"  fz_cp16h(&cache0[{(q - 4) * 32} + ty][tx * 8], fz_src0 + {q * 262144}, fz_drop);\n"
    return s + "  fz_cp_commit();\n"
def fold_smem(g, wait):
    return f"  fz_cpw<{wait}>();\n" + batch(None, 4 + g * 4, lds=True)
def t1():
    s = "  // pass 1 (T1): shared-memory tier by cp.async first, registers, L2, then the shared tier folded\n"
    for g in range(4): s += issue_smem(g)
    s += batch("fz_drop", 0, keep_reg=True)
    for b in range(3): s += batch("fz_keep", 20 + 4 * b)
    for g in range(4): s += fold_smem(g, 3 - g)
    return s
def t2():
    s = "  // pass 1 (T2): shared tier by cp.async first; L2 batches interleaved with its folds\n"
    for g in range(4): s += issue_smem(g)
    s += batch("fz_drop", 0, keep_reg=True)
    for b in range(3):
        s += fold_smem(b, 3 - b)
        s += batch("fz_keep", 20 + 4 * b)
    s += fold_smem(3, 0)
    return s
def t3():
    # the shared tier issued in two halves: the second half after the register rows
    s = "  // pass 1 (T3): as T2, all 16 copies issued up front but L2 batch 0 before the first fold\n"
    for g in range(4): s += issue_smem(g)
    s += batch("fz_drop", 0, keep_reg=True)
    s += batch("fz_keep", 20)
    for b in range(1, 3):
        s += fold_smem(b - 1, 4 - b)
        s += batch("fz_keep", 20 + 4 * b)
    s += fold_smem(2, 1)
    s += fold_smem(3, 0)
    return s
def replace_pass1(k, body):
    a = k.index("  // pass 1: HBM")
    b = k.index("  uint4 fz_pre[4];")
    return k[:a] + body + k[b:]

HELP_BULK = '''
__device__ __forceinline__ void fz_mbar_init(unsigned long long *b, unsigned n) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"((unsigned)__cvta_generic_to_shared(b)), "r"(n) : "memory");
}
__device__ __forceinline__ void fz_mbar_expect(unsigned long long *b, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"((unsigned)__cvta_generic_to_shared(b)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void fz_mbar_wait(unsigned long long *b, unsigned parity) {
  const unsigned a = (unsigned)__cvta_generic_to_shared(b);
  asm volatile("{\\n\\t.reg .pred p;\\n\\tWAIT_%=:\\n\\t"
               "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\\n\\t"
               "@!p bra WAIT_%=;\\n\\t}" :: "r"(a), "r"(parity) : "memory");
}
__device__ __forceinline__ void fz_bulk(void *smem, const void *gmem, unsigned bytes, unsigned long long *b, unsigned long long pol) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;"
               :: "r"((unsigned)__cvta_generic_to_shared(smem)), "l"(gmem), "r"(bytes),
                  "r"((unsigned)__cvta_generic_to_shared(b)), "l"(pol) : "memory");
}
'''
def t4(tile_col="kbase - tx * 8"):
    # shared tier by bulk copies (128 B a row, issued by warp 0), 4 mbarriers
    s = "  // pass 1 (T4): shared tier by bulk copies up front; L2 batches interleaved with its folds\n"
    s += "  __shared__ __align__(8) unsigned long long fz_mbar[4];\n"
    s += "  if (threadIdx.x == 0) {\n    for (int G = 0; G < 4; ++G) fz_mbar_init(&fz_mbar[G], 1);\n"
    s += '    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");\n  }\n  __syncthreads();\n'
    s += "  if (threadIdx.x < 32) {\n"
    s += "    if (threadIdx.x == 0)\n      for (int G = 0; G < 4; ++G) fz_mbar_expect(&fz_mbar[G], 4 * 32 * 128);\n"
    s += "    __syncwarp();\n"
    s += "    const fz_bf16 *src = in0 + (rbase + threadIdx.x) * 8192 + (" + tile_col + ");\n"
    s += "    #pragma unroll\n    for (int G = 0; G < 4; ++G)\n      #pragma unroll\n      for (int u = 0; u < 4; ++u) {\n"
    s += "        const int q = 4 + 4 * G + u;\n"
    s += "        fz_bulk(&cache0[(q - 4) * 32 + threadIdx.x][0], src + q * 32 * 8192, 128, &fz_mbar[G], fz_drop);\n      }\n  }\n"
    s += batch("fz_drop", 0, keep_reg=True)
    for b in range(3):
        s += f"  fz_mbar_wait(&fz_mbar[{b}], 0);\n" + batch(None, 4 + 4 * b, lds=True)
        s += batch("fz_keep", 20 + 4 * b)
    s += "  fz_mbar_wait(&fz_mbar[3], 0);\n" + batch(None, 16, lds=True)
    return s
