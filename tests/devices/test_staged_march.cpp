// The staged GPU kernel's planes a march (devices/cuda/staged_march.hpp), a
// plain function: tested here without a GPU.
#include <gtest/gtest.h>

#include <cstdint>

#include "devices/cuda/staged_march.hpp"

namespace hetstencil::cuda {
namespace {

// Whole waves of blocks times the planes each march reads, as
// staged_march.hpp says the GPU runs them.
std::int64_t walk(std::int64_t units, std::int64_t planes, std::int64_t tiles, std::int64_t resident, int radius) {
  const std::int64_t blocks = tiles * ((units + planes - 1) / planes);
  return (blocks + resident - 1) / resident * (planes + 2 * radius);
}

TEST(StagedMarch, NoOtherMarchFinishesSooner) {
  for (const std::int64_t units : {1024, 512, 300, 128, 97, 33, 8}) {
    for (const std::int64_t tiles : {128, 256, 37, 1}) {
      for (const std::int64_t resident : {264, 132, 1000}) {
        for (const std::int64_t longest : {128, 32}) {
          for (const int radius : {1, 4}) {
            const std::int64_t chosen = staged_march(units, tiles, resident, longest, radius);
            ASSERT_GE(chosen, 1);
            ASSERT_LE(chosen, std::min(units, longest));
            const std::int64_t cost = walk(units, chosen, tiles, resident, radius);
            for (std::int64_t planes = 1; planes <= std::min(units, longest); ++planes) {
              ASSERT_LE(cost, walk(units, planes, tiles, resident, radius))
                  << units << " planes, " << tiles << " tiles, " << resident << " slots: " << planes << " beats " << chosen;
            }
          }
        }
      }
    }
  }
}

TEST(StagedMarch, FillsTheSlotsWithWholeWaves) {
  // star4 float on an H200, 512^2 planes: 128 tiles, 264 slots, radius 4.
  EXPECT_EQ(staged_march(128, 128, 264, 128, 4), 64);  // 256 blocks, not 384 of 43 planes
  EXPECT_EQ(staged_march(32, 128, 264, 128, 4), 16);
  EXPECT_EQ(staged_march(256, 128, 264, 128, 4), 128);
  EXPECT_EQ(staged_march(512, 128, 264, 128, 4), 128);
}

TEST(StagedMarch, DegenerateSizes) {
  EXPECT_EQ(staged_march(0, 128, 264, 128, 4), 1);
  EXPECT_EQ(staged_march(1, 128, 264, 128, 4), 1);
  EXPECT_EQ(staged_march(500, 128, 0, 128, 4), 128);  // no slots known: the longest march
  EXPECT_EQ(staged_march(500, 128, 264, 0, 4), 1);
}

}  // namespace
}  // namespace hetstencil::cuda
