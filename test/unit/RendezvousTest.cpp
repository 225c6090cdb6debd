//===- RendezvousTest.cpp - rank threads meeting, and giving up -----------===//
#include "compiler/support/RankThreads.h"

#include <gtest/gtest.h>

#include <atomic>

using namespace fusec;

TEST(Rendezvous, NoRankPassesBeforeAllHaveCome) {
  // Four rounds: in each, every rank counts itself in and then meets; past
  // the meeting, each sees the whole round counted.
  constexpr int kRanks = 4, kRounds = 4;
  Rendezvous rv(kRanks);
  std::atomic<int> counted{0}, wrong{0}, refused{0};
  onRankThreads(kRanks, [&](int) {
    for (int round = 1; round <= kRounds; ++round) {
      ++counted;
      if (!rv.meet())
        ++refused;
      if (counted.load() < round * kRanks)
        ++wrong;
      if (!rv.meet())  // nobody counts the next round before all have looked
        ++refused;
    }
  });
  EXPECT_EQ(counted.load(), kRanks * kRounds);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(refused.load(), 0);
}

TEST(Rendezvous, AbandonedReleasesTheWaitingAndRefusesLaterComers) {
  // Rank 0 fails instead of coming: the others, waiting or yet to come,
  // are told so rather than waiting for ever.
  Rendezvous rv(3);
  std::atomic<int> released{0};
  onRankThreads(3, [&](int r) {
    if (r == 0) {
      rv.abandon();
      return;
    }
    if (!rv.meet())
      ++released;
  });
  EXPECT_EQ(released.load(), 2);
  EXPECT_FALSE(rv.meet());
}
