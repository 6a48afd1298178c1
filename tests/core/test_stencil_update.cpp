#include <gtest/gtest.h>

#include "core/stencil_update.hpp"

namespace hetstencil {
namespace {

using P = Poisson5<float>;

TEST(StencilUpdate, QuarterOfNeighboursAndSource) {
  EXPECT_EQ(P::update(1.0f, 2.0f, 3.0f, 4.0f, 6.0f), 4.0f);
  EXPECT_EQ(Poisson5<double>::update(1.0, 1.0, 1.0, 1.0, 1.0), 1.25);
}

TEST(StencilUpdate, AddsNeighboursNorthSouthWestEastInThatOrder) {
  // In float, 1e8 + 1 rounds back to 1e8: only ((n + s) + w) + e keeps both ones.
  EXPECT_EQ(P::neighbours(1e8f, -1e8f, 1.0f, 1.0f), 2.0f);
  EXPECT_EQ(P::update(1e8f, -1e8f, 1.0f, 1.0f, 0.0f), 0.5f);
  EXPECT_EQ(P::neighbours(1.0f, 1e8f, -1e8f, 1.0f), 1.0f);
}

TEST(StencilUpdate, ResidualIsSourceMinusScaledLaplacian) {
  EXPECT_EQ(P::residual(1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 0.0f), 0.0f);  // a constant is harmonic
  EXPECT_EQ(P::residual(0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 1.0f), 1.0f);
  EXPECT_EQ(P::residual(0.0f, 0.0f, 0.0f, 0.0f, 1.0f, 0.0f), -4.0f);
  // h2f - (4c - nb), not (h2f - 4c) + nb: 1e8 - 1 rounds to 1e8 in float.
  EXPECT_EQ(P::residual(1.0f, 0.0f, 0.0f, 0.0f, 2.5e7f, 1e8f), 0.0f);
}

TEST(StencilUpdate, FixedPointOfTheUpdateHasZeroResidual) {
  // c = 0.25 * (nb + h2f) exactly, so 4c - nb = h2f.
  const double c = Poisson5<double>::update(0.5, 0.25, 1.0, 2.0, 0.25);
  EXPECT_EQ(c, 1.0);
  EXPECT_EQ(Poisson5<double>::residual(0.5, 0.25, 1.0, 2.0, c, 0.25), 0.0);
}

}  // namespace
}  // namespace hetstencil
