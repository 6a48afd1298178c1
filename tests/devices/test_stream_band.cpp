// The blocked GPU kernel's band length (devices/cuda/stream_band.hpp), a plain
// function: tested here without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

#include "devices/cuda/stream_band.hpp"

namespace hetstencil::cuda {
namespace {

// The blocks' walks over the resident slots, then the tail, as stream_band.hpp
// says the GPU runs them.
double walk(std::int64_t rows, std::int64_t band, std::int64_t strip_blocks, std::int64_t resident, int depth) {
  const std::int64_t blocks = strip_blocks * ((rows + band - 1) / band);
  const double waves = static_cast<double>(std::max(blocks, resident)) / static_cast<double>(resident);
  return (waves + kStreamTail) * static_cast<double>(band + 2 * depth);
}

TEST(StreamBand, NoOtherBandFinishesSooner) {
  for (const std::int64_t rows : {16384, 8208, 4112, 2064, 1000, 97}) {
    for (const std::int64_t resident : {528, 1056, 37, 1}) {
      for (const int depth : {1, 4, 8}) {
        const std::int64_t chosen = stream_band(rows, 37, resident, depth);
        ASSERT_GE(chosen, 4 * depth) << rows;
        ASSERT_LE(chosen, rows);
        const double cost = walk(rows, chosen, 37, resident, depth);
        for (std::int64_t band = 4 * depth; band <= rows; ++band) {
          ASSERT_LE(cost, walk(rows, band, 37, resident, depth)) << rows << " rows, band " << band << " beats "
                                                                 << chosen << " (" << resident << " resident)";
        }
      }
    }
  }
}

TEST(StreamBand, ManyWavesOfShortBandsOrFewOfLongOnes) {
  // Slots for every block of the shortest bands: many blocks at once beat rows swept twice.
  EXPECT_EQ(stream_band(8208, 37, 100000, 8), 32);
  // The H200's float depth-8 pass, 528 slots: bands between the shortest and one wave.
  const std::int64_t band = stream_band(16384, 37, 528, 8);
  EXPECT_GT(band, 128);
  EXPECT_LT(band, (16384 + 13) / 14);
}

TEST(StreamBand, FewRowsAreOneBand) {
  EXPECT_EQ(stream_band(20, 37, 528, 8), 20);
  EXPECT_EQ(stream_band(0, 37, 528, 8), 1);
}

}  // namespace
}  // namespace hetstencil::cuda
