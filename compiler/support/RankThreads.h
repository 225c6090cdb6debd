//===- RankThreads.h - the ranks of a split program as threads ------------===//
#pragma once

#include <thread>
#include <vector>

namespace fusec {

/// Calls fn(r) for every rank r in [0, n) at once: rank 0 on the calling
/// thread, each other on a thread of its own (the ranks wait for each other
/// at their collectives, so none may run after another), and returns once
/// all have.
template <typename Fn> void onRankThreads(int n, Fn &&fn) {
  std::vector<std::thread> threads;
  for (int r = 1; r < n; ++r)
    threads.emplace_back([&fn, r] { fn(r); });
  fn(0);
  for (std::thread &t : threads)
    t.join();
}

} // namespace fusec
