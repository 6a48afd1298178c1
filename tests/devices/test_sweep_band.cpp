// The GPU sweep's band (devices/cuda/sweep_band.hpp), a plain function: tested
// here without a GPU.
#include <gtest/gtest.h>

#include <cstdint>

#include "devices/cuda/sweep_band.hpp"

namespace hetstencil::cuda {
namespace {

std::int64_t segments_of(std::int64_t nx) { return (nx + 127) / 128; }

TEST(SweepBand, GridsThatFillTheGpuWalkTheLongBands) {
  EXPECT_EQ(sweep_band(segments_of(16384), 16384, 132), kRows);
  EXPECT_EQ(sweep_band(segments_of(4096), 1024, 132), kRows);
}

TEST(SweepBand, SmallSlabsWalkOneRowSoThatMoreWarpsLoadAtOnce) {
  EXPECT_EQ(sweep_band(segments_of(256), 256, 132), 1);
  EXPECT_EQ(sweep_band(segments_of(4096), 64, 132), 1);
  EXPECT_EQ(sweep_band(segments_of(256), 1, 132), 1);
}

TEST(SweepBand, TheSameSlabOnFewerMultiprocessorsWalksTheLongBands) {
  // A GPU held to a few SMs (MPS) is filled by what leaves a whole one idle.
  EXPECT_EQ(sweep_band(segments_of(256), 256, 132), 1);
  EXPECT_EQ(sweep_band(segments_of(256), 256, 5), kRows);
  EXPECT_EQ(sweep_band(segments_of(256), 256, 0), kRows);  // unknown
}

TEST(SweepBand, MoreRowsOrMoreColumnsNeverShortenTheBand) {
  for (const int sms : {1, 16, 132}) {
    for (std::int64_t nx = 1; nx <= 8192; nx *= 3) {
      int before = 1;
      for (std::int64_t rows = 1; rows <= 8192; rows = rows * 2 + 1) {
        const int band = sweep_band(segments_of(nx), rows, sms);
        ASSERT_GE(band, before) << nx << " x " << rows << " on " << sms << " SMs";
        ASSERT_GE(sweep_band(segments_of(2 * nx), rows, sms), band) << nx << " x " << rows;
        before = band;
      }
    }
  }
}

}  // namespace
}  // namespace hetstencil::cuda
