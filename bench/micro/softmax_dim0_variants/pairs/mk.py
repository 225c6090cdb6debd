#!/usr/bin/env python3
"""Builds variants.cuh for runner.cu: fusec's generated pairs kernel of softmax
over dim 0 (8192 x 8192 bf16, each 256-byte tile's rows split over two
clusters of 8) and text edits of it, each in its own namespace.

The generated kernel is not kept as a copy. This script runs

    build/bin/fusec compile bench/graphs/softmax_dim0.json --emit cuda \
        --arch sm_90a --device h100 -o TMPDIR          (FUSEC_CACHE_DIR=off)

and writes next to itself, git-ignored:

  genw.cu  the kernel as fusec writes it now: session w's form, on main since
           a2c882b (the copy kept here before was written at 74a33fb);
  gen.cu   session v's form (branch experiment/softmax-pairs, a53b4e2): genw.cu
           with session w's five changes undone (to_session_v below): the two
           words of a statistic polled one after the other, 32-bit indices,
           two lanes a column in both merges, the cluster's partials through
           fz_dsmem_ld2, a release arrive. Applied to the kept copy of 74a33fb's
           output it gave the kept copy of a53b4e2's exactly (less the
           "// =====" line fusec prints before a kernel on stdout).

The edits below (bench/NOTES.md session v round 6, session w rounds 1-5 and 12)
find their text with assertions. If one fails, the generator has changed since
e049c63: build fusec at that commit to reproduce those rounds, or update the edit.

Run from anywhere (paths are taken relative to this file):

    python3 bench/micro/softmax_dim0_variants/pairs/mk.py
    nvcc -O3 -arch=sm_90a -o /tmp/pr bench/micro/softmax_dim0_variants/pairs/runner.cu && /tmp/pr

--fusec PATH: the compiler (default $FUSEC, else build/bin/fusec). --kernel FILE:
a .cu that fusec already wrote for that graph, used instead of running fusec.
"""
import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[3]  # pairs -> softmax_dim0_variants -> micro -> bench -> the repository
GRAPH = ROOT / 'bench' / 'graphs' / 'softmax_dim0.json'
KERNEL = 'k0_max_sub_exp_sum_etc'  # the plan's name: the .cu file
ENTRY = 'k_max_sub_exp_sum_etc'    # its entry point (no plan position)


def generate(fusec):
    """The kernel's .cu as `fusec compile --emit cuda` writes it."""
    if not Path(fusec).is_file():
        sys.exit(f'mk.py: no fusec at {fusec}: build it (./tools/bootstrap.sh) or pass --fusec PATH')
    # The cost-model profile is pinned and the disk cache (with its measured
    # copy rate) is off, so the text is the same on any machine, GPU or not.
    env = dict(os.environ, FUSEC_CACHE_DIR='off')
    with tempfile.TemporaryDirectory() as d:
        cmd = [str(fusec), 'compile', str(GRAPH), '--emit', 'cuda', '--arch', 'sm_90a', '--device', 'h100', '-o', d]
        subprocess.run(cmd, check=True, env=env)
        path = Path(d) / (KERNEL + '.cu')
        if not path.is_file():
            sys.exit(f'mk.py: {" ".join(cmd)} wrote {sorted(os.listdir(d))}, not {KERNEL}.cu')
        return path.read_text()


def undo(text, old, new):
    assert text.count(old) == 1, ('session w text not found once in the generated kernel', old, text.count(old))
    return text.replace(old, new)


AWAIT_W = """// Both words are read at once (one round trip a poll, not two in turn).
__device__ __forceinline__ float2 fz_await(const unsigned long long *w, unsigned epoch) {
  const long long t0 = clock64();
  for (;;) {
    unsigned long long a, b;
    asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(a) : "l"(w) : "memory");
    asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(b) : "l"(w + 1) : "memory");
    if ((unsigned)(a >> 32) == epoch && (unsigned)(b >> 32) == epoch)
      return make_float2(__uint_as_float((unsigned)a), __uint_as_float((unsigned)b));
    if (clock64() - t0 > (1ll << 32)) __trap();
  }
}
// A peer block's shared memory as a plain pointer: its loads are ordinary
// ones the compiler may batch (fz_dsmem_ld2's are volatile).
__device__ __forceinline__ const float2 *fz_peer(const float2 *p, unsigned rank) {
  unsigned long long r;
  asm("mapa.u64 %0, %1, %2;" : "=l"(r) : "l"(p), "r"(rank));
  return reinterpret_cast<const float2 *>(r);
}
"""
AWAIT_V = """__device__ __forceinline__ float fz_await_word(const unsigned long long *w, unsigned epoch) {
  const long long t0 = clock64();
  for (;;) {
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(v) : "l"(w) : "memory");
    if ((unsigned)(v >> 32) == epoch) return __uint_as_float((unsigned)v);
    if (clock64() - t0 > (1ll << 32)) __trap();
  }
}
__device__ __forceinline__ float2 fz_await(const unsigned long long *w, unsigned epoch) {
  const float m = fz_await_word(w, epoch);
  return make_float2(m, fz_await_word(w + 1, epoch));
}
"""
WARPS_W = """  if (threadIdx.x < 128) {
    const int c = threadIdx.x;
    float2 a = fz_wred[0][c];
    #pragma unroll
    for (int w = 1; w < 8; ++w) fz_online_merge(a.x, a.y, fz_wred[w][c].x, fz_wred[w][c].y);
    fz_part[c] = a;
  }
"""
WARPS_V = """  if (threadIdx.x < 256) {
    const int c = threadIdx.x / 2, j = threadIdx.x % 2;
    float2 a = fz_wred[j][c];
    #pragma unroll
    for (int w = j + 2; w < 8; w += 2) fz_online_merge(a.x, a.y, fz_wred[w][c].x, fz_wred[w][c].y);
    for (int o = 1; o < 2; o <<= 1)
      fz_online_merge(a.x, a.y, __shfl_xor_sync(0xffffffffu, a.x, o), __shfl_xor_sync(0xffffffffu, a.y, o));
    if (j == 0) fz_part[c] = a;
  }
"""
MEMBERS_W = """  if (threadIdx.x < 128) {
    const int c = threadIdx.x;
    float2 a = *fz_peer(&fz_part[c], 0);
    #pragma unroll
    for (int q = 1; q < 8; ++q) {
      const float2 b = *fz_peer(&fz_part[c], q);
      fz_online_merge(a.x, a.y, b.x, b.y);
    }
    if (member == 0) fz_publish(reinterpret_cast<unsigned long long *>(fz_scratch) + (tile * 256 + c) * 2 + fz_half * 256, a, fz_epoch);
    fz_stat[c] = make_float4(a.x, a.y, 0.f, 0.f);  // this half's
  }
"""
MEMBERS_V = """  if (threadIdx.x < 256) {
    const int c = threadIdx.x / 2, j = threadIdx.x % 2;
    float2 a = j < 8 ? fz_dsmem_ld2(&fz_part[c], j) : make_float2(-__int_as_float(0x7f800000), 0.f);
    #pragma unroll
    for (int q = j + 2; q < 8; q += 2) {
      const float2 b = fz_dsmem_ld2(&fz_part[c], q);
      fz_online_merge(a.x, a.y, b.x, b.y);
    }
    for (int o = 1; o < 2; o <<= 1)
      fz_online_merge(a.x, a.y, __shfl_xor_sync(0xffffffffu, a.x, o), __shfl_xor_sync(0xffffffffu, a.y, o));
    if (j == 0) {
      if (member == 0) fz_publish(reinterpret_cast<unsigned long long *>(fz_scratch) + (tile * 256 + c) * 2 + fz_half * 256, a, fz_epoch);
      fz_stat[c] = make_float4(a.x, a.y, 0.f, 0.f);  // this half's
    }
  }
"""


def to_session_v(w):
    """Session v's kernel (a53b4e2) from session w's (what the generator writes since a2c882b)."""
    w = undo(w, AWAIT_W, AWAIT_V)  # both words polled at once -> one after the other; no fz_peer
    w = undo(w, '  typedef long long fz_idx;\n', '  typedef int fz_idx;\n')  # 64-bit indices -> 32-bit
    w = undo(w, WARPS_W, WARPS_V)  # one thread a column -> two lanes a column
    w = undo(w, MEMBERS_W, MEMBERS_V)  # the same, peers through fz_dsmem_ld2
    return undo(w, 'barrier.cluster.arrive.relaxed.aligned;" ::: "memory");  // done reading peers',
                'barrier.cluster.arrive.release.aligned;" ::: "memory");  // done reading peers')


def split(src):
    """The prelude (cluster helpers made visible to nvcc's host pass) and the kernel, renamed kern."""
    cut = src.index('extern "C" __global__')
    pre = src[:cut].replace('#if __CUDA_ARCH__ >= 900', '#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900')
    ker = src[cut:].replace('extern "C" __global__', '__global__').replace(ENTRY, 'kern')
    return pre, ker


ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0],
                             formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument('--fusec', default=os.environ.get('FUSEC', str(ROOT / 'build' / 'bin' / 'fusec')),
                help='the fusec binary (default: $FUSEC, else build/bin/fusec)')
ap.add_argument('--kernel', help=f'{KERNEL}.cu as fusec wrote it for bench/graphs/softmax_dim0.json '
                '(--arch sm_90a), used instead of running fusec')
args = ap.parse_args()
srcw = Path(args.kernel).read_text() if args.kernel else generate(args.fusec)
src = to_session_v(srcw)
(HERE / 'genw.cu').write_text(srcw)
(HERE / 'gen.cu').write_text(src)
pre, ker = split(src)  # session v's form
prew, kerw = split(srcw)  # session w's form: what fusec generates


def edit(text, old, new, count=1):
    assert text.count(old) == count, (old, text.count(old))
    return text.replace(old, new)


def no_dims(k):  # cluster shape given at launch (as the microbenchmark does)
    return edit(k, '__cluster_dims__(8, 1, 1) ', '')


def early_late(k):  # the first L2 batch loaded just before the cluster meets, not before the warp fold
    a = k.index('  uint4 fz_pre0[4];')
    b = k.index('  if (threadIdx.x == 0) fz_epoch_s')
    block = k[a:b]
    k = k[:a] + k[b:]
    return edit(k, '  fz_cluster_sync();  // every member', block + '  fz_cluster_sync();  // every member')


def relaxed_arrive(k):  # no GPU-wide fence: every remote read's value is used before it
    return edit(k, 'asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");  // done reading peers',
                'asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");  // done reading peers')


AWAIT_OLD = '''__device__ __forceinline__ float2 fz_await(const unsigned long long *w, unsigned epoch) {
  const float m = fz_await_word(w, epoch);
  return make_float2(m, fz_await_word(w + 1, epoch));
}'''
AWAIT_NEW = '''__device__ __forceinline__ float2 fz_await(const unsigned long long *w, unsigned epoch) {
  for (;;) {  // both words in flight at once, no timeout (timing only)
    unsigned long long a, b;
    asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(a) : "l"(w) : "memory");
    asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(b) : "l"(w + 1) : "memory");
    if ((unsigned)(a >> 32) == epoch && (unsigned)(b >> 32) == epoch)
      return make_float2(__uint_as_float((unsigned)a), __uint_as_float((unsigned)b));
  }
}'''


def no_wait(k):  # a bound: the other half's statistics are not awaited (wrong outputs)
    return edit(k, 'const float2 b = fz_await(', 'const float2 b = make_float2(own.x, own.y); (void)(')


FOLD_OLD = WARPS_V.rstrip('\n')  # the generated kernel's two lanes a column
FOLD_NEW = """  if (threadIdx.x < 128) {  // one thread a column (the microbenchmark's form)
    const int c = threadIdx.x;
    float2 a = fz_wred[0][c];
    #pragma unroll
    for (int w = 1; w < 8; ++w) fz_online_merge(a.x, a.y, fz_wred[w][c].x, fz_wred[w][c].y);
    fz_part[c] = a;
  }"""


def m_fold(k):
    return edit(k, FOLD_OLD, FOLD_NEW)


def m_stage(k):  # one thread a column, eight plain (non-volatile) loads through mapa'd generic pointers
    a = k.index('  if (threadIdx.x < 256) {\n    const int c = threadIdx.x / 2, j = threadIdx.x % 2;\n    float2 a = j < 8')
    b = k.index("  asm volatile(\"barrier.cluster.arrive.")
    body = MEMBERS_W  # the generated kernel's own merge, as fusec writes it
    return k[:a] + body + k[b:]


PEER = """__device__ __forceinline__ const float2 *fz_peer(const float2 *p, unsigned rank) {
  unsigned long long r;
  asm("mapa.u64 %0, %1, %2;" : "=l"(r) : "l"(p), "r"(rank));
  return reinterpret_cast<const float2 *>(r);
}
"""


def m_unroll(k):  # the compiler picks every loop's unrolling, as in the microbenchmark
    return k.replace('#pragma unroll 1\n', '\n')


def m_out(k):  # only the output pass's shared-memory loop left to the compiler
    i = k.index('outputs: the L2 rows first')
    j = k.index('#pragma unroll 1\n    for (int fz_k = 4; fz_k < 20; fz_k += 4) {', i)
    return k[:j] + k[j + len('#pragma unroll 1'):]


def m_idx(k):
    return edit(k, 'typedef int fz_idx;', 'typedef long long fz_idx;')


def m_noprior(k):
    return edit(k, '  fz_after_prior();  // the previous kernel', '  // fz_after_prior();  // the previous kernel')


PROFP = """__device__ unsigned long long fz_prof[8];  // per-phase SM cycles summed over blocks
#define PSTAMP(i) if (threadIdx.x == 0) tp[i] = clock64()
"""


def prof(k):  # thread 0 stamps clock64 at the microbenchmark's PROF points
    k = edit(k, 'fz_scratch) {\n', 'fz_scratch) {\n  long long tp[7];\n  PSTAMP(0);\n')
    i = k.index('  __syncthreads();\n', k.index('fz_wred[threadIdx.x / 32][tx * 8 + l] = make_float2(m, sum);'))
    k = k[:i] + '  __syncthreads();\n  PSTAMP(1);\n' + k[i + len('  __syncthreads();\n'):]
    k = edit(k, '  fz_cluster_sync();  // every member\'s partials are published\n', '  fz_cluster_sync();  // every member\'s partials are published\n  PSTAMP(2);\n')
    i = k.index('  asm volatile("barrier.cluster.arrive.')
    j = k.index('\n', i) + 1
    k = k[:j] + '  PSTAMP(3);\n' + k[j:]
    i = k.index('  __syncthreads();\n  float fz_M[8]')
    k = k[:i] + '  __syncthreads();\n  PSTAMP(4);\n' + k[i + len('  __syncthreads();\n'):]
    i = k.rindex('  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");  // peers are done with fz_part\n')
    k = k[:i] + '  PSTAMP(5);\n' + k[i:].replace('fz_part\n', 'fz_part\n  PSTAMP(6);\n  if (threadIdx.x == 0) {\n    for (int i = 0; i < 6; ++i) atomicAdd(&fz_prof[i], (unsigned long long)(tp[i + 1] - tp[i]));\n    atomicAdd(&fz_prof[7], 1ull);\n  }\n', 1)
    return k


def no_exchange(k):  # a bound: no epoch, no publish, no wait (wrong outputs)
    k = no_wait(k)
    k = edit(k, '      if (member == 0) fz_publish(', '      if (false) fz_publish(')
    return edit(k, '  if (threadIdx.x == 0)  // this half\'s word', '  if (false)  // this half\'s word')


def no_none(k):  # timing only: the running max taken as is (wrong for all -inf columns)
    return edit(k, 'const float mr = none ? 0.f : m', 'const float mr = m')

pre2 = pre + PEER
preA = edit(pre, AWAIT_OLD, AWAIT_NEW) + PEER
allk = m_noprior(m_idx(m_out(m_fold(m_stage(relaxed_arrive(ker))))))
AWAIT_SHIP = """__device__ __forceinline__ float2 fz_await(const unsigned long long *w, unsigned epoch) {
  const long long t0 = clock64();
  for (;;) {  // both words in flight at once
    unsigned long long a, b;
    asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(a) : "l"(w) : "memory");
    asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(b) : "l"(w + 1) : "memory");
    if ((unsigned)(a >> 32) == epoch && (unsigned)(b >> 32) == epoch)
      return make_float2(__uint_as_float((unsigned)a), __uint_as_float((unsigned)b));
    if (clock64() - t0 > (1ll << 32)) __trap();
  }
}"""
preS = edit(pre, AWAIT_OLD, AWAIT_SHIP) + PEER

AW_OLD = """  if (threadIdx.x < 128) {
    const int c = threadIdx.x;
    const float4 own = fz_stat[c];
    const float2 b = fz_await("""


def in_regs(k):  # the j == 0 lane that published awaits after the arrive, its half's (max, sum) still in registers: no barrier between
    k = edit(k, """      fz_stat[c] = make_float4(a.x, a.y, 0.f, 0.f);  // this half's
    }
  }
""", """    }
  }
  const float2 fz_own = fz_a;
""")
    k = edit(k, "  if (threadIdx.x < 256) {\n    const int c = threadIdx.x / 2, j = threadIdx.x % 2;\n    float2 a = j < 8",
             "  float2 fz_a;\n  if (threadIdx.x < 256) {\n    const int c = threadIdx.x / 2, j = threadIdx.x % 2;\n    float2 a = j < 8")
    k = edit(k, "    if (j == 0) {\n      if (member == 0) fz_publish(", "    fz_a = a;\n    if (j == 0) {\n      if (member == 0) fz_publish(")
    i = k.index('  asm volatile("barrier.cluster.arrive.')
    j = k.index('\n', i) + 1
    assert k[j:].startswith('  __syncthreads();\n')
    k = k[:j] + k[j + len('  __syncthreads();\n'):]
    k = edit(k, AW_OLD, """  if (threadIdx.x % 2 == 0) {
    const int c = threadIdx.x / 2;
    const float2 own = fz_own;
    const float2 b = fz_await(""")
    return k


def in_regs1(k):  # the same for the one-thread-a-column merge (m_stage)
    k = edit(k, """    fz_stat[c] = make_float4(a.x, a.y, 0.f, 0.f);  // this half's
  }
""", """    fz_a = a;
  }
""")
    k = edit(k, "  if (threadIdx.x < 128) {\n    const int c = threadIdx.x;\n    float2 a = *fz_peer", "  float2 fz_a;\n  if (threadIdx.x < 128) {\n    const int c = threadIdx.x;\n    float2 a = *fz_peer")
    i = k.index('  asm volatile("barrier.cluster.arrive.')
    j = k.index('\n', i) + 1
    k = k[:j] + k[j + len('  __syncthreads();\n'):]
    return edit(k, AW_OLD, """  if (threadIdx.x < 128) {
    const int c = threadIdx.x;
    const float2 own = fz_a;
    const float2 b = fz_await(""")


r1 = relaxed_arrive(ker)
PUB = "    if (member == 0) fz_publish(reinterpret_cast<unsigned long long *>(fz_scratch) + (tile * 256 + c) * 2 + fz_half * 256, a, fz_epoch);\n"
ARR_REL = 'asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");  // done reading peers\n'


def release_pub_after(k):  # release arrive; member 0 publishes after it (the fence then waits for no global store of its own)
    k = edit(k, PUB, "    fz_a = a;\n")
    k = edit(k, "  if (threadIdx.x < 128) {\n    const int c = threadIdx.x;\n    float2 a = *fz_peer", "  float2 fz_a;\n  if (threadIdx.x < 128) {\n    const int c = threadIdx.x;\n    float2 a = *fz_peer")
    return edit(k, ARR_REL, ARR_REL.replace('relaxed', 'release') +
                "  if (threadIdx.x < 128 && member == 0)\n    fz_publish(reinterpret_cast<unsigned long long *>(fz_scratch) + (tile * 256 + threadIdx.x) * 2 + fz_half * 256, fz_a, fz_epoch);\n")


def release_pub_before(k):
    return edit(k, ARR_REL, ARR_REL.replace('relaxed', 'release'))


V = [  # name, prelude, kernel, launched with the cluster attribute
    ('w0', 'generated (b305aba): relaxed arrive', prew, kerw, False),
    ('w1', 'release arrive, member 0 publishes after it', prew, release_pub_after(kerw), False),
    ('w2', 'release arrive, publish before it (a53b4e2 order)', prew, release_pub_before(kerw), False),
]
out = []
for ns, name, p, k, attr in V:
    out.append(f'namespace {ns} {{\n{p}\n{k}\n}}\n')
out.append('#define VARIANT_FUNCS ' + ', '.join(f'(K){ns}::kern' for ns, *_ in V) + '\n')
out.append('#define VARIANT_NAMES ' + ', '.join(f'"{n}"' for _, n, *_ in V) + '\n')
out.append('#define VARIANT_PROF ' + ', '.join(f'(const void *)&{ns}::fz_prof' if 'PROF' in n else 'nullptr' for ns, n, *_ in V) + '\n')
out.append('#define VARIANT_ATTR ' + ', '.join('true' if a else 'false' for *_, a in V) + '\n')
(HERE / 'variants.cuh').write_text(''.join(out))
print(f'mk.py: wrote gen.cu, genw.cu and variants.cuh ({len(V)} variants) in {HERE}')
