#!/usr/bin/env python3
"""Variants of an instrumented decode attention kernel (instrument.py's
output), for decode_phases.cu: what limits a block's rate of tiles.

usage: variants.py instrumented.cu out.cu VARIANTS   (letters applied in turn: TN)
  N  no compute: the key loop only loads and waits (the copies' rate alone)
  L  no loads in the key loop: the first tiles only, then the products over
     the same buffers (the consumer's rate alone)
  T  the K/V tiles by bulk copies (cp.async.bulk, a row of 256 bytes a
     thread into the padded rows) completing on an mbarrier per buffer,
     instead of 16 cp.async a thread and tile
  X  the K/V tiles by the TMA: per tile four 64 x 64 boxes (K and V, each
     half of the head dim) with the 128-byte swizzle into 1024-aligned
     buffers past the kernel's own shared memory (decode_phases.cu built
     with -DTMAPS and 99328 more bytes); only with N (the products would
     read the padded rows): XN
  P  (with a fourth argument n) n key tiles a split instead of the planner's;
     launch ceil(tiles / n) splits (GRIDX): the merge still counts the
     planner's splits, so only the key loop's stamps and time mean anything
Timing only: N, L and P compute wrong outputs. T assumes full 64-key tiles
(keys a multiple of 64) and head dim 128.
"""
import re, sys
src, dst, variants = sys.argv[1], sys.argv[2], sys.argv[3]
s = open(src).read()
MBARRIER = r'''
#include <cuda.h>
__device__ __forceinline__ unsigned fzx_s(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void fzx_expect(unsigned long long *b, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(fzx_s(b)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void fzx_bulk(void *d, const void *g, unsigned bytes, unsigned long long *b) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               :: "r"(fzx_s(d)), "l"(g), "r"(bytes), "r"(fzx_s(b)) : "memory");
}
__device__ __forceinline__ void fzx_box(void *d, const CUtensorMap *m, int c0, int c1, unsigned long long *b) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
               :: "r"(fzx_s(d)), "l"(m), "r"(c0), "r"(c1), "r"(fzx_s(b)) : "memory");
}
__device__ __forceinline__ void fzx_wait(unsigned long long *b, unsigned parity) {
  asm volatile("{\n .reg .pred p;\n W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n @!p bra W;\n}"
               :: "r"(fzx_s(b)), "r"(parity) : "memory");
}
'''
TILE_LOADS = re.compile(r'#pragma unroll\n(\s*)for \(int i = 0; i < 8; \+\+i\) \{\n.*?fz_sk \+ \(\((.*?)\) % 3\).*?\n\s*\}\n', re.S)


def by_mbarrier(s, extra_init, load):
    """The three tile loads of the kernel replaced by load(indent, tile) (copies
    completing on fz_bar[tile % 3]), the barriers set up first, and the key
    loop's wait for its tile on its barrier."""
    s = s.replace('extern "C" __global__ void __launch_bounds__', MBARRIER + 'extern "C" __global__ void __launch_bounds__', 1)
    init = ('  __shared__ __align__(8) unsigned long long fz_bar[3];\n' + extra_init +
            '  if (threadIdx.x == 0) {\n'
            '    for (int b = 0; b < 3; ++b) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(fzx_s(&fz_bar[b])));\n'
            '    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");\n'
            '  }\n  __syncthreads();\n')
    anchor = '  const float fz_ninf = __int_as_float(0xff800000);\n'
    s = s.replace(anchor, anchor + init, 1)
    s, n = TILE_LOADS.subn(lambda m: load(m.group(1), m.group(2)), s)
    assert n == 3, n
    w = '    fz_cp_wait<2>();\n'
    assert w in s
    return s.replace(w, w + '    fzx_wait(&fz_bar[fz_t % 3], (fz_t / 3) & 1);\n', 1)


def rows_by_bulk(ind, t):
    return (f'{{\n{ind}const int fz_tt = {t}, fz_b = fz_tt % 3, r = threadIdx.x % 64;\n'
            f'{ind}if (threadIdx.x == 0) fzx_expect(&fz_bar[fz_b], 32768);\n'
            f'{ind}const long long g = (long long)(fz_t0 + fz_tt) * 64 + r;\n'
            f'{ind}if (threadIdx.x < 64) fzx_bulk(fz_sk + fz_b * 8704 + r * 136, fz_gk0 + g * 128, 256, &fz_bar[fz_b]);\n'
            f'{ind}else fzx_bulk(fz_sv + fz_b * 8704 + r * 136, fz_gv0 + g * 128, 256, &fz_bar[fz_b]);\n'
            f'{ind}}}\n')


def boxes_by_tma(ind, t):
    return (f'if (threadIdx.x == 0) {{\n{ind}const int fz_tt = {t}, fz_b = fz_tt % 3;\n'
            f'{ind}fzx_expect(&fz_bar[fz_b], 32768);\n'
            f'{ind}const int row = (int)fz_e * 8192 + (fz_t0 + fz_tt) * 64;\n'
            f'{ind}unsigned char *const d = fzx_buf + fz_b * 32768;\n'
            f'{ind}fzx_box(d, &fzx_mk, 0, row, &fz_bar[fz_b]); fzx_box(d + 8192, &fzx_mk, 64, row, &fz_bar[fz_b]);\n'
            f'{ind}fzx_box(d + 16384, &fzx_mv, 0, row, &fz_bar[fz_b]); fzx_box(d + 24576, &fzx_mv, 64, row, &fz_bar[fz_b]);\n'
            f'{ind}}}\n')


for variant in variants:
  loop_start = s.index('  for (int fz_t = 0; fz_t < fz_tiles; ++fz_t) {')
  loop_end = s.index("    __syncthreads();  // this tile's buffers are loaded again")
  if variant == 'N':
      a = s.index('    const fz_bf16 *const fz_kt =', loop_start)
      s = s[:a] + s[loop_end:]
  elif variant == 'L':
      body = s[loop_start:loop_end]
      body = re.sub(r'\n\s*fz_cp16z\([^;]*\);', '', body)
      s = s[:loop_start] + body + s[loop_end:]
  elif variant == 'T':
      s = by_mbarrier(s, '', rows_by_bulk)
  elif variant == 'X':
      s, n = re.subn(r'(unsigned char \*__restrict__ fz_scratch)\)', r'\1, const __grid_constant__ CUtensorMap fzx_mk, const __grid_constant__ CUtensorMap fzx_mv)', s, 1)
      assert n == 1
      s = by_mbarrier(s, '  unsigned char *const fzx_buf = reinterpret_cast<unsigned char *>((reinterpret_cast<unsigned long long>(fz_dyn) + 108800 + 1023) & ~1023ull);\n', boxes_by_tma)
  elif variant == 'P':
      s, n = re.subn(r'fz_t0 = fz_split \* (\d+), fz_tiles = min\((\d+),',
                     'fz_t0 = fz_split * %s, fz_tiles = min(%s,' % (sys.argv[4], sys.argv[4]), s)
      assert n == 1
  else:
      sys.exit('unknown variant ' + variant)
open(dst, 'w').write(s)
