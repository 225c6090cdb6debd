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
