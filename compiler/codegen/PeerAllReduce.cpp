//===- PeerAllReduce.cpp - the one-shot all-reduce over peer memory -------===//
//
// Block b copies chunk b of this rank's tensor into its region, raises its
// flag at every rank (a release at system scope, so the chunk is visible
// before the flag), waits until every rank's flag for the block has reached
// the call's epoch (an acquire), then reads chunk b from every rank's region
// and reduces in rank order: every rank computes the same bits. The layout
// and the reasoning for reuse are in plan/PeerRegion.h.
//
// The exchange is one device function (fz_peer_reduce), which the one-shot
// kernel calls for its chunks and a row kernel whose group begins with the
// all-reduce calls for its block's rows (RowReductionKernel.cpp).
//
//===----------------------------------------------------------------------===//
#include "compiler/codegen/KernelSpec.h"
#include "compiler/codegen/Prelude.h"
#include "compiler/codegen/ScalarOps.h"
#include "compiler/plan/PeerRegion.h"

#include <string>

namespace fusec::codegen {

namespace {

std::string number(int64_t v) { return std::to_string(v); }

/// The fold of `acc` and `v` for `reduce` ("sum", "max", "min"), in f32.
std::string fold(llvm::StringRef reduce) {
  if (reduce == "max")
    return "acc = fz_max(acc, v);";
  if (reduce == "min")
    return "acc = fz_min(acc, v);";
  return "acc += v;";
}

} // namespace

std::string peerReduceHelpers(DType dtype, llvm::StringRef reduce) {
  const std::string t = storageType(dtype);
  const int64_t esz = dtypeBytes(dtype);
  const std::string lanes = number(16 / esz);  // elements in 16 bytes
  std::string h = "struct fz_peer_args { unsigned long long base[" + number(peer::kMaxRanks) +
                  "]; int rank, ranks; };\n";
  h += "// Block b's `count` elements of this rank's tensor at `src`, reduced (" + reduce.str() +
       ") over every\n// rank in rank order into `dst` (global or shared memory); every thread\n"
       "// returns once `dst` is complete. ranks 0: NCCL has reduced `src` in place already.\n";
  h += "static __device__ __forceinline__ void fz_peer_reduce(const " + t + " *src, " + t +
       " *dst, long long count, const fz_peer_args &peers) {\n";
  std::string &b = h;
  // `src`'s elements to `to`, 16 bytes at a time where both allow it.
  auto copy = [&](const std::string &to, const std::string &in) {
    return in + "if (vec)\n" + in + "  for (long long i = threadIdx.x; i < count / " + lanes +
           "; i += blockDim.x)\n" + in + "    ((uint4 *)" + to +
           ")[i] = ((const uint4 *)src)[i];\n" + in + "else\n" + in +
           "  for (long long i = threadIdx.x; i < count; i += blockDim.x) " + to + "[i] = src[i];\n";
  };
  b += "  const bool vec = count % " + lanes +
       " == 0 && ((((unsigned long long)src) | ((unsigned long long)dst)) & 15ull) == 0;\n";
  b += "  if (peers.ranks == 0) {\n" + copy("dst", "    ") + "    __syncthreads();\n    return;\n  }\n";
  b += "  const int b = blockIdx.x;\n";
  b += "  char *const own = (char *)peers.base[peers.rank];\n";
  b += "  unsigned *const epochs = (unsigned *)(own + " + number(peer::kEpochsOffset) + ");\n";
  b += "  __shared__ unsigned epoch_s;\n";
  b += "  if (threadIdx.x == 0) epoch_s = epochs[b] + 1u;\n";
  b += "  __syncthreads();\n";
  b += "  const unsigned epoch = epoch_s;\n";
  b += "  const long long half = " + number(peer::kDataOffset) + "LL + (long long)(epoch & 1u) * " +
       number(peer::kParityBytes) + "LL + (long long)b * " + number(peer::kChunkBytes) + "LL;\n";
  b += "  " + t + " *const mine = (" + t + " *)(own + half);\n";
  b += copy("mine", "  ");
  b += "  __syncthreads();\n";
  b += "  if (threadIdx.x < peers.ranks) {\n";
  b += "    // Raise this block's flag at rank threadIdx.x, then wait for its flag here.\n";
  b += "    unsigned *to = (unsigned *)((char *)peers.base[threadIdx.x] + " +
       number(peer::kFlagsOffset) + ") + b * " + number(peer::kMaxRanks) + " + peers.rank;\n";
  b += "    asm volatile(\"st.release.sys.global.u32 [%0], %1;\" :: \"l\"(to), \"r\"(epoch) : "
       "\"memory\");\n";
  b += "    const unsigned *from = (const unsigned *)(own + " + number(peer::kFlagsOffset) +
       ") + b * " + number(peer::kMaxRanks) + " + threadIdx.x;\n";
  // A peer that never comes (its process died, its kernel faulted) would
  // leave this one spinning for ever: after kPeerWaitSeconds the kernel
  // traps instead, and the launch fails.
  b += "    unsigned long long start = 0;\n";
  b += "    for (unsigned spins = 0;; ++spins) {\n";
  b += "      unsigned seen;\n";
  b += "      asm volatile(\"ld.acquire.sys.global.u32 %0, [%1];\" : \"=r\"(seen) : \"l\"(from) : "
       "\"memory\");\n";
  b += "      if ((int)(seen - epoch) >= 0) break;\n";
  b += "      if ((spins & 4095u) == 0) {\n";
  b += "        unsigned long long now;\n";
  b += "        asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(now));\n";
  b += "        if (start == 0) start = now;\n";
  b += "        else if (now - start > " + number(int64_t(peer::kPeerWaitSeconds) * 1000000000) +
       "ull) __trap();\n";
  b += "      }\n";
  b += "    }\n";
  b += "  }\n";
  b += "  __syncthreads();\n";
  // Each thread's four vectors of a rank are loaded together, so that a
  // block waits about one NVLink round trip a rank, not one a vector.
  b += "  if (vec) {\n";
  b += "    const long long n = count / " + lanes + ";\n";
  b += "    for (long long i0 = threadIdx.x; i0 < n; i0 += 4LL * blockDim.x) {\n";
  b += "      float sums[4][" + lanes + "];\n";
  b += "      for (int r = 0; r < peers.ranks; ++r) {\n";
  // Past L1 (__ldcg): a region's half is rewritten two calls later.
  b += "        const uint4 *theirs = (const uint4 *)((const char *)peers.base[r] + half);\n";
  b += "        uint4 raw[4];\n";
  b += "        #pragma unroll\n";
  b += "        for (int u = 0; u < 4; ++u) {\n";
  b += "          const long long i = i0 + (long long)u * blockDim.x;\n";
  b += "          raw[u] = i < n ? __ldcg(theirs + i) : make_uint4(0u, 0u, 0u, 0u);\n";
  b += "        }\n";
  b += "        #pragma unroll\n";
  b += "        for (int u = 0; u < 4; ++u) {\n";
  b += "          const " + t + " *e = (const " + t + " *)&raw[u];\n";
  b += "          #pragma unroll\n";
  b += "          for (int l = 0; l < " + lanes + "; ++l) {\n";
  b += "            const float v = fz_in(e[l]);\n";
  b += "            if (r == 0) { sums[u][l] = v; continue; }\n";
  b += "            float acc = sums[u][l];\n";
  b += "            " + fold(reduce) + "\n";
  b += "            sums[u][l] = acc;\n";
  b += "          }\n";
  b += "        }\n";
  b += "      }\n";
  b += "      #pragma unroll\n";
  b += "      for (int u = 0; u < 4; ++u) {\n";
  b += "        const long long i = i0 + (long long)u * blockDim.x;\n";
  b += "        if (i >= n) break;\n";
  b += "        uint4 packed;\n";
  b += "        " + t + " *o = (" + t + " *)&packed;\n";
  b += "        #pragma unroll\n";
  b += "        for (int l = 0; l < " + lanes + "; ++l) o[l] = fz_out<" + t + ">::of(sums[u][l]);\n";
  b += "        ((uint4 *)dst)[i] = packed;\n";
  b += "      }\n";
  b += "    }\n";
  b += "  } else {\n";
  b += "    for (long long i = threadIdx.x; i < count; i += blockDim.x) {\n";
  b += "      float acc = 0.0f;\n";
  b += "      for (int r = 0; r < peers.ranks; ++r) {\n";
  b += "        const " + t + " *theirs =\n";
  b += "            (const " + t + " *)((const char *)peers.base[r] + half);\n";
  b += "        const float v = fz_in(theirs[i]);\n";
  b += "        if (r == 0) acc = v; else " + fold(reduce) + "\n";
  b += "      }\n";
  b += "      dst[i] = fz_out<" + t + ">::of(acc);\n";
  b += "    }\n";
  b += "  }\n";
  b += "  __syncthreads();\n";
  b += "  if (threadIdx.x == 0) epochs[b] = epoch;\n";
  b += "}\n";
  return h;
}

KernelSpec peerAllReduceKernel(const std::string &name, DType dtype, llvm::StringRef reduce,
                               int64_t elements) {
  const std::string t = storageType(dtype);
  const int64_t esz = dtypeBytes(dtype);
  const int64_t bytes = elements * esz;
  const int blocks = peer::blocksFor(bytes);
  constexpr unsigned threads = 512;
  KernelSpec spec;
  spec.name = name;
  spec.family = "all_reduce (one-shot)";
  spec.grid = unsigned(blocks);
  spec.block = threads;
  spec.schedule = std::to_string(blocks) + " block" + (blocks > 1 ? "s" : "") + " x " +
                  std::to_string(threads) + " threads, " + std::to_string(peer::kChunkBytes >> 10) +
                  " KB a block, peer memory";
  KernelText &text = spec.text;
  text.qualifiers = "__launch_bounds__(" + std::to_string(threads) + ")";
  text.helpers = peerReduceHelpers(dtype, reduce);
  text.params = {{"const " + t + " *", "in0"}, {t + " *", "out0"}, {"fz_peer_args ", "peers"}};
  const std::string per = number(peer::kChunkBytes / esz);  // elements a block owns
  std::string b;
  b += "  const long long first = (long long)blockIdx.x * " + per + "LL;\n";
  b += "  fz_peer_reduce(in0 + first, out0 + first, min((long long)" + number(elements) +
       "LL - first, " + per + "LL), peers);\n";
  text.body = b;
  spec.text.header = "// kernel " + name + " (one-shot all_reduce " + reduce.str() + " of " +
                     number(elements) + " " + t + " over peer memory)\n";
  spec.entry = entryName(name);
  spec.source = compiledSource(spec.text, spec.entry);
  return spec;
}

} // namespace fusec::codegen
