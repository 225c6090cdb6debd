#!/usr/bin/env python3
# Hand edits of the generated Hopper dot-product kernel (timing experiments).
# usage: mkvar.py in.cu VARIANT > out.cu ; VARIANT: base | sig | eN (N weight boxes before the wait, + signal)
#        | eNnosig
import re, sys
whole = open(sys.argv[1]).read()
cut = whole.index('extern "C" __global__')
pre, src = whole[:cut], whole[cut:]
var = sys.argv[2]
def sub(p, r, s, count=1):
    out, n = re.subn(p, r, s, count=count)
    if n != count: sys.exit(f"pattern not found: {p}")
    return out
if var == "base":
    sys.stdout.write(pre + src); sys.exit(0)
early = 0
sig = True
m = re.match(r"e(\d+)(nosig|at0)?(f1)?(f2)?$", var)
at0 = f1 = f2 = False
if m:
    early = int(m.group(1)); sig = m.group(2) is None; at0 = m.group(2) == "at0"; f1 = bool(m.group(3)); f2 = bool(m.group(4))
elif var != "sig":
    sys.exit("unknown variant")
if early:
    # Only the consumers wait at the top; the producer waits after its early weight boxes.
    src = sub(r"\n  fz_after_prior\(\);", "\n  // (wait moved per role)", src)
    src = sub(r"(\n  \} else \{\n)", r"\1    fz_after_prior();\n", src)
    src = sub(r"(      for \(int i = 0; i < fz_steps; \+\+i\) \{\n        const int st = i % 16;\n)",
              "      for (int i = 0; i < %d && i < fz_steps; ++i) {\n"
              "        fz_mbar_expect_tx(fz_full + 8 * i, 12288);\n"
              "        fz_tma_2d_hint(fz_base + i * 12288 + 4096, &fz_tmB, fz_full + 8 * i, (fz_s0 + i) * 64, fz_n0, fz_once);\n"
              "      }\n%s      fz_after_prior();\n\\1" % (early, "      asm volatile(\"griddepcontrol.launch_dependents;\" ::: \"memory\");\n" if at0 else ""), src)
    src = sub(r"(        if \(i >= 16\)\n          fz_mbar_wait\(fz_empty \+ 8 \* st, \(\(i / 16\) - 1\) & 1\);\n)"
              r"(        fz_mbar_expect_tx\(fz_full \+ 8 \* st, 12288\);\n        fz_tma_2d_hint\([^\n]*\n)",
              "        if (i >= %d) {\n\\1\\2        }\n" % early, src)
if f1:
    # the residual read by a volatile coherent load (cannot move above the wait)
    pre += """
template <typename S> __device__ __forceinline__ float fz_load1v(const S *p, long long off) {
  unsigned short v;
  asm volatile("ld.global.u16 %0, [%1];" : "=h"(v) : "l"(p + off) : "memory");
  return fz_in(*reinterpret_cast<const S *>(&v));
}
"""
    src = src.replace("fz_load1(in2,", "fz_load1v(in2,")
if sig:
    src = sub(r"(\n      \}\n(?:      fz_tl\[[^\n]*\n)?)(    \}\n    __syncwarp\(\);)",
              "\\1      asm volatile(\"griddepcontrol.launch_dependents;\" ::: \"memory\");\\n\\2", src)
if f2:
    # the whole producer warp waits, not lane 0 alone
    src = sub(r"    if \(lane == 0\) \{\n      unsigned long long fz_once;\n(      asm\(\"createpolicy[^\n]*\n)",
              "    unsigned long long fz_once;\n\\1    if (lane == 0) {\n", src)
    src = sub(r"      fz_after_prior\(\);\n(      for \(int i = 0; i < fz_steps)",
              "    }\n    __syncwarp();\n    fz_after_prior();\n    if (lane == 0) {\n\\1", src)
sys.stdout.write(pre + src)
