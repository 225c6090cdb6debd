#!/usr/bin/env python3
"""Instruments a fusec-generated Hopper dot-product kernel (WgmmaGemv.cpp's
form) with %globaltimer stamps, for decode_m32_tma's `timeline` mode.

usage: timeline_instrument.py generated.cu > instrumented.cu

Per launch and block (fz_tl[layer][block][event], layer = the block index's
launch count mod 4), consumer thread 0's view:
  0 block start, 1 the wait for the kernel ahead returned, 2 first stage
  full, 3 K loop done (wgmma drained), 4 both halves merged (cluster
  barrier), 5 its outputs stored; and the producer's 6 last box requested.
Stamps are globaltimer (ns, one clock for every SM).
"""
import re
import sys

src = open(sys.argv[1]).read().replace("#if __CUDA_ARCH__ >= 900", "#if 1")
helpers = r'''
__device__ unsigned long long fz_tl[4][256][8];
__device__ unsigned fz_tlc[256];
__device__ __forceinline__ unsigned long long fz_now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
'''


def sub(pattern, repl, text, count=1):
    out, n = re.subn(pattern, repl, text, count=count)
    if n != count:
        sys.exit(f"timeline_instrument: pattern not found: {pattern}")
    return out


entry = src.index('extern "C" __global__')
src = src[:entry] + helpers + src[entry:]
src = sub(r"\n  fz_after_prior\(\);[^\n]*\n",
          "\n  const unsigned long long fz_t0 = fz_now();\n  fz_after_prior();\n"
          "  const unsigned long long fz_t1 = fz_now();\n"
          "  __shared__ unsigned fz_L;\n"
          "  if (threadIdx.x == 0) fz_L = atomicAdd(&fz_tlc[blockIdx.x], 1u) & 3u;\n", src)
# The producer: after its loop over the boxes.
src = sub(r"(\n      \}\n)(    \}\n    __syncwarp\(\);)",
          r"\1      fz_tl[fz_L][blockIdx.x][6] = fz_now();\n\2", src)
src = sub(r"\n(    float fz_d\[)", r"\n    unsigned long long fz_t2 = 0;\n\1", src)
src = sub(r"(      fz_mbar_wait\(fz_full \+ 8 \* st, \(i / \d+\) & 1\);\n)",
          r"\1      if (i == 0) fz_t2 = fz_now();\n", src)
src = sub(r"(    fz_wg_wait<0>\(\);\n)", r"\1    const unsigned long long fz_t3 = fz_now();\n", src)
src = sub(r"(    fz_cluster_barrier\(\);  // both halves of every row are here\n)",
          r"\1    const unsigned long long fz_t4 = fz_now();\n", src)
src = sub(r"\n  \}\n\}\n$",
          "\n    if (threadIdx.x == 0) {\n"
          "      unsigned long long *p = fz_tl[fz_L][blockIdx.x];\n"
          "      p[0] = fz_t0; p[1] = fz_t1; p[2] = fz_t2; p[3] = fz_t3; p[4] = fz_t4; p[5] = fz_now();\n"
          "    }\n  }\n}\n", src)
sys.stdout.write(src)
