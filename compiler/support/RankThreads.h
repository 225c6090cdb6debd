//===- RankThreads.h - the ranks of a split program as threads ------------===//
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
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

/// Where the rank threads of a process wait for each other: meet() returns
/// true once all `n` have called it (and can be met again), or false at
/// once, for good, after abandon() (a rank that failed and will not come).
class Rendezvous {
public:
  explicit Rendezvous(int n) : n(n) {}
  bool meet() {
    std::unique_lock<std::mutex> lock(m);
    if (abandoned)
      return false;
    const uint64_t round = generation;
    if (++arrived == n) {
      arrived = 0;
      ++generation;
      cv.notify_all();
      return true;
    }
    cv.wait(lock, [&] { return generation != round || abandoned; });
    return generation != round;
  }
  void abandon() {
    std::lock_guard<std::mutex> lock(m);
    abandoned = true;
    cv.notify_all();
  }

private:
  std::mutex m;
  std::condition_variable cv;
  const int n;
  int arrived = 0;
  uint64_t generation = 0;
  bool abandoned = false;
};

} // namespace fusec
