#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/quotient.hpp"

namespace hetstencil {
namespace {

template <class T, class Bits>
Bits bits_of(T x) {
  Bits b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

std::uint32_t float_bits(float x) { return bits_of<float, std::uint32_t>(x); }

// The quotient's bits are the division's, NaN for NaN.
template <class T, class Bits>
::testing::AssertionResult same_as_division(const Quotient<T>& quotient, T a) {
  const T want = a / quotient.divisor;
  const T got = quotient(a);
  if (bits_of<T, Bits>(want) == bits_of<T, Bits>(got) || (want != want && got != got)) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << a << " / " << quotient.divisor << ": " << got << " instead of " << want;
}

// The built-ins' diagonals, awkward ones, extremes, and random ones.
std::vector<float> float_divisors() {
  std::vector<float> d = {20.0f, 6.0f, 43050.0f, 128.0f, 3.0f, 7.0f, -20.0f, 0.1f, 1.0f / 3.0f, 1e-30f, 3e30f,
                          std::numeric_limits<float>::min(), 1e-39f, std::numeric_limits<float>::max()};
  std::mt19937 rng(3);
  for (int k = 0; k < 10; ++k) {
    const std::uint32_t b = (rng() & 0x807FFFFFu) | ((100u + rng() % 55u) << 23);
    float f;
    std::memcpy(&f, &b, sizeof f);
    d.push_back(f);
  }
  return d;
}

// How many of the floats of [1, 2) `quotient` takes to other bits than the
// division by d.
template <class F>
std::uint64_t wrong_in_a_binade(float d, F quotient) {
  std::uint64_t wrong = 0;
  for (std::uint32_t m = 0; m < (1u << 23); ++m) {
    const std::uint32_t b = (127u << 23) | m;
    float a;
    std::memcpy(&a, &b, sizeof a);
    if (float_bits(quotient(a)) != float_bits(a / d)) ++wrong;
  }
  return wrong;
}

TEST(Quotient, EqualsTheDivisionForEveryFloatSignificandOfABinade) {
  // Within [low, high] the operations scale with a's exponent: one binade
  // stands for all of them.
  for (float d : {20.0f, 6.0f, 43050.0f}) {
    const Quotient<float> q = Quotient<float>::by(d);
    EXPECT_EQ(wrong_in_a_binade(d, [&](float a) { return q(a); }), 0u) << "divisor " << d;
  }
}

TEST(Quotient, EqualsTheDivisionForFloatsOfEveryKind) {
  std::mt19937 rng(5);
  for (float d : float_divisors()) {
    const Quotient<float> q = Quotient<float>::by(d);
    // Zeros of both signs, subnormals, the edges of the range, infinities, NaN.
    for (float a : {0.0f, -0.0f, 1e-45f, -1e-40f, std::numeric_limits<float>::min(), q.low, -q.low,
                    std::nextafter(q.low, 0.0f), q.high, std::nextafter(q.high, 1e38f), std::numeric_limits<float>::max(),
                    std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                    std::numeric_limits<float>::quiet_NaN()}) {
      EXPECT_TRUE((same_as_division<float, std::uint32_t>(q, a)));
    }
    for (int k = 0; k < 200000; ++k) {
      const std::uint32_t b = rng();
      float a;
      std::memcpy(&a, &b, sizeof a);
      ASSERT_TRUE((same_as_division<float, std::uint32_t>(q, a)));
    }
  }
}

// A GPU kernel takes every cell of a step by the slow path once one of them
// needs it, so in float that path must give the division's bits for any a.
TEST(Quotient, AFloatsSlowPathEqualsTheDivisionForFloatsOfEveryKind) {
  std::mt19937 rng(11);
  for (float d : float_divisors()) {
    const Quotient<float> q = Quotient<float>::by(d);
    for (float a : {0.0f, -0.0f, std::numeric_limits<float>::max(), std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
      EXPECT_TRUE(a != a || float_bits(q.slow(a)) == float_bits(a / d)) << a << " / " << d;
    }
    std::uint64_t wrong = 0;
    for (int k = 0; k < 200000; ++k) {
      const std::uint32_t b = rng();
      float a;
      std::memcpy(&a, &b, sizeof a);
      if (a == a && float_bits(q.slow(a)) != float_bits(a / d)) ++wrong;
    }
    EXPECT_EQ(wrong, 0u) << "divisor " << d;
  }
}

TEST(Quotient, AFloatsSlowPathEqualsTheDivisionForEveryFloatSignificandOfABinade) {
  // The double operations scale with a's exponent wherever the quotient is
  // normal: one binade's significands stand for those dividends.
  for (float d : {20.0f, 6.0f, 43050.0f, 3.0f, 7.0f, 0.1f, 1.0f / 3.0f}) {
    const Quotient<float> q = Quotient<float>::by(d);
    EXPECT_EQ(wrong_in_a_binade(d, [&](float a) { return q.slow(a); }), 0u) << "divisor " << d;
  }
}

TEST(Quotient, AFloatsSlowPathEqualsTheDivisionForEverySubnormal) {
  // The dividends a spike's front passes through in float; quotients by a
  // large divisor are subnormal too.
  for (float d : {43050.0f, 6.0f, 0.1f, 3e30f}) {
    const Quotient<float> q = Quotient<float>::by(d);
    std::uint64_t wrong = 0;
    for (std::uint32_t m = 1; m < (1u << 23); ++m) {
      for (std::uint32_t sign : {0u, 1u << 31}) {
        const std::uint32_t b = sign | m;
        float a;
        std::memcpy(&a, &b, sizeof a);
        if (float_bits(q.slow(a)) != float_bits(a / d)) ++wrong;
      }
    }
    EXPECT_EQ(wrong, 0u) << "divisor " << d;
  }
}

TEST(Quotient, AFloatsSlowPathRoundsSubnormalQuotientsHalfwayToEven) {
  // a = (2k + 1) n 2^(s - 150) by d = n 2^s (n odd): a / d = (2k + 1) 2^-150
  // lies exactly halfway between two subnormals. The product a RN(1/d) in
  // double alone would miss some of them (by 98 = 49 x 2, for one); the
  // remainder's correction makes the double quotient exact there.
  std::uint64_t wrong = 0, cases = 0;
  for (int n : {1, 3, 49, 101, 4095}) {
    for (int s : {1, 5, 20}) {
      const float d = std::ldexp(static_cast<float>(n), s);
      const Quotient<float> q = Quotient<float>::by(d);
      for (long k = 0; (2 * k + 1) * n < (1L << 24) && k < 2000; ++k) {
        const float a = std::ldexp(static_cast<float>((2 * k + 1) * n), s - 150);
        ++cases;
        if (float_bits(q.slow(a)) != float_bits(a / d)) ++wrong;
      }
    }
  }
  EXPECT_GT(cases, 10000u);
  EXPECT_EQ(wrong, 0u);
}

TEST(Quotient, EqualsTheDivisionForRandomDoubles) {
  std::mt19937_64 rng(7);
  std::vector<double> divisors = {20.0, 6.0, 43050.0, 128.0, 3.0, -7.0, 0.1, 1e-300, 3e300,
                                  std::numeric_limits<double>::min(), 5e-324};
  for (int k = 0; k < 10; ++k) {
    const std::uint64_t b = (rng() & 0x800FFFFFFFFFFFFFull) | ((900ull + rng() % 250ull) << 52);
    double f;
    std::memcpy(&f, &b, sizeof f);
    divisors.push_back(f);
  }
  for (double d : divisors) {
    const Quotient<double> q = Quotient<double>::by(d);
    for (double a : {0.0, -0.0, 5e-324, q.low, std::nextafter(q.low, 0.0), q.high, std::nextafter(q.high, 1e308),
                     std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}) {
      EXPECT_TRUE((same_as_division<double, std::uint64_t>(q, a)));
    }
    for (int k = 0; k < 200000; ++k) {
      std::uint64_t b = rng();
      // Half of them in the range the multiplications take.
      if (k % 2) b = (b & 0x800FFFFFFFFFFFFFull) | ((800ull + rng() % 400ull) << 52);
      double a;
      std::memcpy(&a, &b, sizeof a);
      ASSERT_TRUE((same_as_division<double, std::uint64_t>(q, a)));
    }
  }
}

TEST(Quotient, ZeroKeepsTheSignOfTheQuotient) {
  const Quotient<double> q = Quotient<double>::by(-6.0);
  EXPECT_TRUE(std::signbit(q(0.0)));
  EXPECT_FALSE(std::signbit(q(-0.0)));
}

TEST(Quotient, ADivisorWithoutANormalReciprocalAlwaysTakesTheSlowPath) {
  const Quotient<float> q = Quotient<float>::by(1e-39f);  // 1 / d overflows
  EXPECT_GT(q.low, q.high);
  EXPECT_TRUE((same_as_division<float, std::uint32_t>(q, 3.0f)));
}

}  // namespace
}  // namespace hetstencil
