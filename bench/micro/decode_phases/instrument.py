#!/usr/bin/env python3
"""Instruments fusec's decode attention kernel (AttentionDecode.cpp) with
%globaltimer stamps per block, for decode_phases.cu.

usage: instrument.py generated.cu instrumented.cu [B]
  (B: the key loads with the L2::256B prefetch hint)

Stamps (thread 0 of each block): 0 start, 1 first key tile in shared
memory, 2 key loop done, 3 partial stored, 4 counted (the last block's
handshake passed), 5 the last block's merge done.

Build and run (bench/NOTES.md, "the decode form"):
  fusec compile bench/graphs/attention_decode_b1.json --emit cuda --arch sm_90a > k.cu
  instrument.py k.cu k_A.cu
  nvcc -O3 -std=c++17 -arch=sm_90a -DKFILE='"k_A.cu"' -DGRIDX=32 -DGRIDY=8 \
    -DSMEM=108800 -DKVELEMS='8ull*8192*128' -DQELEMS=4096 -o probe decode_phases.cu
(grid and shared memory as the kernel's schedule and launch give them).
"""
import sys
src, dst, variant = sys.argv[1], sys.argv[2], (sys.argv[3] if len(sys.argv) > 3 else '')
s=open(src).read()
helper='''
__device__ unsigned long long fz_stamps[1024][8];
__device__ __forceinline__ unsigned long long fz_now() { unsigned long long t; asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t)); return t; }
#define STAMP(i) do { if (threadIdx.x == 0) fz_stamps[blockIdx.y * gridDim.x + blockIdx.x][i] = fz_now(); } while (0)
'''
s=s.replace('extern "C" __global__ void __launch_bounds__', helper+'extern "C" __global__ void __launch_bounds__',1)
def after(anchor, text):
    global s
    idx=s.index(anchor)+len(anchor)
    s=s[:idx]+text+s[idx:]
after("fz_after_prior();  // the previous kernel's writes are visible from here on\n",'  STAMP(0);\n')
after('    fz_cp_wait<2>();\n    __syncthreads();\n','    if (fz_t == 0) STAMP(1);\n')
after('  fz_cp_wait<0>();\n  __syncthreads();\n','  STAMP(2);\n')
after('  __shared__ bool fz_last;\n','  STAMP(3);\n')
s=s.replace('  if (!fz_last) return;\n','  if (!fz_last) { STAMP(4); return; }\n  STAMP(4);\n',1)
i=s.rindex('}')
s=s[:i]+'  __syncthreads();\n  STAMP(5);\n'+s[i:]
if 'B' in variant:
    s=s.replace('cp.async.cg.shared.global [%0]','cp.async.cg.shared.global.L2::256B [%0]')
open(dst,'w').write(s)
