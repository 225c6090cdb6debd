# Builds variants.cuh: hand edits of the generated softmax_dim0 kernel.
import re
pre = open('pre.cuh').read()
ker = open('ker.cuh').read()
SEL = """  const bool none = m == -__int_as_float(0x7f800000);
  const float mr = none ? 0.f : m, ml = mr * 1.4426950408889634f;"""
assert SEL in pre
CLAMP = """  const float mr = fmaxf(m, -1e30f), ml = mr * 1.4426950408889634f;"""
NOG = """  const float mr = m, ml = mr * 1.4426950408889634f;"""
UNP_OLD = """template <typename S, int N, typename C>
__device__ __forceinline__ void fz_unpack(uint4 raw, C (&out)[N]) {
  fz_pack<S, N> u;
  u.v = raw;
#pragma unroll
  for (int i = 0; i < N; ++i) out[i] = fz_in(u.s[i]);
}"""
assert UNP_OLD in pre
UNP_NEW = UNP_OLD + """
template <>
__device__ __forceinline__ void fz_unpack<fz_bf16, 8, float>(uint4 raw, float (&out)[8]) {
  const unsigned w[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) out[2 * i] = __uint_as_float(w[i] << 16), out[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
}"""
def fold(p, mode):
    return p.replace(SEL, {'sel': SEL, 'clamp': CLAMP, 'none': NOG}[mode])
def unp(p): return p.replace(UNP_OLD, UNP_NEW)
def ptr(k):
    KL = "  const fz_idx kl = kb;\n"
    assert KL in k
    k = k.replace(KL, KL + "  const fz_bf16 *fz_src0 = in0 + ((rbase + ty) * 8192 + kl);\n  fz_bf16 *fz_dst0 = out0 + ((rbase + ty) * 8192 + kl);\n")
    n1 = k.count("fz_ld16(in0 + ((r0 * 8192 + kl)), ")
    k = k.replace("fz_ld16(in0 + ((r0 * 8192 + kl)), ", "fz_ld16(fz_src0 + fz_q * 262144, ")
    n2 = k.count("fz_store_ef<fz_bf16, 8>(out0, (r0 * 8192 + kl), o0)")
    k = k.replace("fz_store_ef<fz_bf16, 8>(out0, (r0 * 8192 + kl), o0)", "fz_store_ef<fz_bf16, 8>(fz_dst0, fz_q * 262144, o0)")
    assert n1 >= 4 and n2 >= 3, (n1, n2)
    return k

def unguard(k):
    n = k.count("      if (active) fz_store_ef")
    assert n == 3, n
    return k.replace("      if (active) fz_store_ef", "      fz_store_ef")
def stat(k):
    A = "    fz_stat[c] = a;"
    k = k.replace(A, "    fz_stat[c] = make_float2(a.x * 1.4426950408889634f, 1.f / a.y);")
    B1 = "    fz_rcp[l] = 1.f / st.y;\n    fz_ML[l] = st.x * 1.4426950408889634f;"
    assert B1 in k
    return k.replace(B1, "    fz_rcp[l] = st.y;\n    fz_ML[l] = st.x;")
def lanefold(k):
    A = "      fz_online_merge(m, sum, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, sum, o));"
    assert A in k
    return k.replace(A, "      { float om = __shfl_xor_sync(0xffffffffu, m, o), os = __shfl_xor_sync(0xffffffffu, sum, o); float nm = fmaxf(m, om); sum = sum * exp2f((m - nm) * 1.4426950408889634f) + os * exp2f((om - nm) * 1.4426950408889634f); m = nm; }")
def nodims(k):
    A = "__cluster_dims__(8, 1, 1) "
    assert A in k
    return k.replace(A, "")
def allh(k): return nodims(lanefold(stat(unguard(ptr(k)))))
pren = open('pre_n.cuh').read()
kern = open('ker_n.cuh').read()
def prefetch(k):
    # the first batch of pass two's L2 rows loaded before the reductions
    A = "  #pragma unroll\n  for (int l = 0; l < 8; ++l) {\n    float m = fz_rm[l], sum = fz_rs[l];"
    assert A in k
    k = k.replace(A, "  uint4 fz_pre[4];\n  #pragma unroll\n  for (int u = 0; u < 4; ++u) fz_pre[u] = fz_ld16(in0 + (((rbase + ty + (20 + u) * 32) * 8192 + kl)), fz_drop);\n" + A)
    B = "fz_raw0[u] = fz_ld16(in0 + ((r0 * 8192 + kl)), fz_drop);"
    i = k.index("// outputs: the L2 rows first")
    j = k.index(B, i)
    k = k[:j] + "fz_raw0[u] = fz_k == 20 ? fz_pre[u] : fz_ld16(in0 + ((r0 * 8192 + kl)), fz_drop);" + k[j + len(B):]
    return k
def prefetch2(k):
    # the same, the first batch peeled out of the loop
    k = prefetch(k)
    C = "fz_raw0[u] = fz_k == 20 ? fz_pre[u] : fz_ld16(in0 + ((r0 * 8192 + kl)), fz_drop);"
    i = k.index(C)
    a = k.rindex("    #pragma unroll 1\n    for (int fz_k = 20;", 0, i)
    b = k.index("    #pragma unroll 1\n    for (int fz_k = 4;", i)
    loop = k[a:b]
    first = loop.replace("#pragma unroll 1\n    for (int fz_k = 20; fz_k < 32; fz_k += 4)", "#pragma unroll\n    for (int fz_k = 20; fz_k < 24; fz_k += 4)").replace(C, "fz_raw0[u] = fz_pre[u];")
    rest = loop.replace("for (int fz_k = 20; fz_k < 32", "for (int fz_k = 24; fz_k < 32").replace(C, "fz_raw0[u] = fz_ld16(in0 + ((r0 * 8192 + kl)), fz_drop);")
    return k[:a] + first + rest + k[b:]
def pass1only(k):
    A = "  // outputs: the L2 rows first"
    assert A in k
    return k.replace(A, '  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");\n  if (fz_rcp[0] != 12345.f) return;\n' + A)
def combo(k): return ptr(prefetch2(k))
import pass1
preT = unp(pren).replace("// ---- online softmax, L2 cache hints ----", pass1.HELP + "// ---- online softmax, L2 cache hints ----")
kS = combo(kern)
def cheap(k):
    A = "fz_online_add<4, true>(fz_rm[l], fz_rs[l], fz_x[l]);"
    assert k.count(A) == 3
    return k.replace(A, "fz_rs[l] += (fz_x[l][0] + fz_x[l][1]) + (fz_x[l][2] + fz_x[l][3]);")
preh = open('pre_h.cuh').read()
kerh = open('ker_h.cuh').read()
def perm(k, expr):
    A = "  const fz_idx tile = blockIdx.x / 8;"
    assert A in k
    return k.replace(A, "  const fz_idx fz_c = blockIdx.x / 8, tile = " + expr + ";")
preB = preh.replace("// ---- online softmax, L2 cache hints ----", pass1.HELP + pass1.HELP_BULK + "// ---- online softmax, L2 cache hints ----")
def hp1(k, body):
    a = k.index("  // pass 1: HBM")
    b = k.index("  uint4 fz_pre0[4];")
    return k[:a] + "  const fz_bf16 *fz_src0 = in0 + ((rbase + ty) * 8192 + kl);\n" + body + k[b:]
V = [
 ("vH", "H = HEAD 4d0ac8c", preh, kerh),
 ("vT", "T4 smem tier by bulk copies", preB, hp1(kerh, pass1.t4())),
 ("vU", "T2 smem tier by cp.async", preB, hp1(kerh, pass1.t2())),
 ("vR", "H, pass 1 only", preh, pass1only(kerh)),
 ("vS", "T4, pass 1 only", preB, pass1only(hp1(kerh, pass1.t4()))),
]
# Each variant gets its own namespace so prefixes with different helpers coexist.
out = []
for fn, name, p, k in V:
    out.append(f"namespace ns_{fn} {{\n{p}\n}}\nusing namespace ns_{fn};\n" if False else "")
# Prelude types must be shared for the runner; put each variant in a namespace
# and expose the kernel through a wrapper pointer.
body = []
for fn, name, p, k in V:
    kk = k.replace('extern "C" __global__', '__global__').replace("k0_max_sub_exp_sum_etc", "kern")
    body.append(f"namespace {fn} {{\n{p}\n{kk}\n}}\n")
body.append("typedef unsigned short fz_bf16_storage;\n")
body.append("#define VARIANT_FUNCS " + ", ".join(f"(K){fn}::kern" for fn, *_ in V) + "\n")
body.append("#define VARIANT_NAMES " + ", ".join(f'"{n}"' for _, n, *_ in V) + "\n")
open('variants.cuh', 'w').write("".join(body))
