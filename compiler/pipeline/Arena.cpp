//===- Arena.cpp - place temporaries in one device arena by liveness ------===//
#include "compiler/pipeline/Arena.h"

#include <algorithm>

namespace fusec {

namespace {
constexpr int64_t kAlign = 256;
int64_t alignUp(int64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

std::vector<int> buffersOf(const PlanStep &s) {
  switch (s.kind) {
  case PlanStep::Kind::Kernel: return s.kernel.args;
  case PlanStep::Kind::Matmul: {
    std::vector<int> ids{s.matmul.a, s.matmul.b, s.matmul.c};
    for (int epilogueInput : {s.matmul.residual, s.matmul.bias})  // cuBLASLt's own epilogue
      if (epilogueInput >= 0)
        ids.push_back(epilogueInput);
    return ids;
  }
  case PlanStep::Kind::Copy: return {s.copy.src, s.copy.dst};
  case PlanStep::Kind::Collective: return {s.collective.src, s.collective.dst};
  }
  return {};
}
} // namespace

std::vector<std::pair<int, int>> bufferLifetimes(const PlanDesc &plan) {
  std::vector<std::pair<int, int>> life(plan.buffers.size(), {-1, -1});
  for (size_t i = 0; i < plan.steps.size(); ++i)
    for (int b : buffersOf(plan.steps[i])) {
      if (life[b].first < 0)
        life[b].first = i;
      life[b].second = i;
    }
  return life;
}

void placeTemporaries(PlanDesc &plan) {
  std::vector<std::pair<int, int>> life = bufferLifetimes(plan);
  std::vector<int> temps;
  for (size_t i = 0; i < plan.buffers.size(); ++i)
    if (plan.buffers[i].kind == PlanBuffer::Kind::Temp)
      temps.push_back(i);
  std::stable_sort(temps.begin(), temps.end(), [&](int a, int b) {
    return plan.buffers[a].tensor.bytes() > plan.buffers[b].tensor.bytes();
  });
  std::vector<int> placed;
  int64_t arena = 0;
  for (int t : temps) {
    int64_t size = alignUp(std::max<int64_t>(1, plan.buffers[t].tensor.bytes()));
    // Intervals taken by placed buffers whose lifetimes overlap this one's.
    std::vector<std::pair<int64_t, int64_t>> taken;
    for (int p : placed) {
      bool overlap = life[p].first <= life[t].second && life[t].first <= life[p].second;
      if (overlap)
        taken.push_back({plan.buffers[p].arenaOffset,
                         plan.buffers[p].arenaOffset + alignUp(plan.buffers[p].tensor.bytes())});
    }
    std::sort(taken.begin(), taken.end());
    int64_t offset = 0;
    for (auto [lo, hi] : taken) {
      if (offset + size <= lo)
        break;
      offset = std::max(offset, hi);
    }
    plan.buffers[t].arenaOffset = offset;
    arena = std::max(arena, offset + size);
    placed.push_back(t);
  }
  plan.arenaBytes = arena;
}

} // namespace fusec
