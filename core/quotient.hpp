// a / d for a divisor d known before the sweep, with the bits of the IEEE
// division and without its cost. With y = RN(1/d) made once,
//   q = RN(a y),  r = a - d q (exact, one fused multiply-add),  q' = RN(q + r y)
// is RN(a / d) (Markstein's theorem: y within half an ulp of 1/d, q within one
// ulp of a/d) wherever nothing underflows or overflows: for |a| in [low, high].
// A zero dividend's quotient is a y (its sign is a's times d's); any other a
// (subnormal, near the overflow threshold, infinite, NaN) takes the slow path:
// in double the division; in float the same three operations in double, where
// every finite float is in range, rounded to float (53 >= 2 x 24 + 2, so the
// double rounding is harmless: Figueroa), which spares a subnormal dividend
// the division's own slow path on a GPU.
// A GPU's division checks its operands on every call and calls a slow path for
// a zero dividend, which a spike problem's grid is mostly made of; this checks
// a single range. See docs/stencils.md, "Dividing by the diagonal".
#pragma once

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <type_traits>

#include "core/stencil_update.hpp"  // HETSTENCIL_HOST_DEVICE

namespace hetstencil {

template <class T>
struct Quotient {
  T divisor = T(1);
  T reciprocal = T(1);  ///< RN(1 / divisor), or its sign where that is not a normal number
  T low = T(1);         ///< |a| in [low, high] take the multiplications
  T high = T(0);
  double wide_reciprocal = 1.0;  ///< RN(1 / divisor) in double, for float's slow path

  /// The quotients by `d` (finite and non-zero).
  static Quotient by(T d) {
    constexpr int digits = std::numeric_limits<T>::digits;
    constexpr int emin = std::numeric_limits<T>::min_exponent - 1;  // of the smallest normal number
    constexpr int emax = std::numeric_limits<T>::max_exponent - 1;
    Quotient q;
    q.divisor = d;
    q.reciprocal = T(1) / d;
    q.wide_reciprocal = 1.0 / static_cast<double>(d);
    if (!std::isnormal(q.reciprocal)) {
      q.reciprocal = std::copysign(T(1), d);  // every non-zero a takes the slow path
      return q;
    }
    const T size = std::fabs(d);
    // r = a - d q is exact where the exponents of d and q add to at least
    // emin + digits - 1, and q is normal: a clear of both by a factor of 4.
    q.low = std::max(std::ldexp(T(1), emin + digits + 2), size * std::ldexp(T(1), emin + 2));
    // a y and d q stay finite.
    q.high = std::min(std::ldexp(T(1), emax - 1), size * std::ldexp(T(1), emax - 2));
    return q;
  }

  /// RN(a / divisor).
  HETSTENCIL_HOST_DEVICE T operator()(T a) const {
    using std::fabs;
    using std::fma;
    const T q = a * reciprocal;
    const T r = fma(-divisor, q, a);
    const T magnitude = fabs(a);
    if (magnitude >= low && magnitude <= high) return fma(r, reciprocal, q);
    if (a == T(0)) return q;
    return slow(a);
  }

  /// RN(a / divisor) for every a, the way that takes any: the division, or
  /// in float the operations in double.
  HETSTENCIL_HOST_DEVICE T slow(T a) const {
    if constexpr (std::is_same_v<T, float>) {
      using std::fabs;
      using std::fma;
      const double w = a;
      const double q = w * wide_reciprocal;
      const double r = fma(-static_cast<double>(divisor), q, w);
      // A zero's or an infinity's quotient is q (the remainder would lose a
      // zero's sign, or be NaN); NaN stays NaN either way.
      const bool q_alone = w == 0.0 || fabs(w) > static_cast<double>(FLT_MAX);
      return static_cast<float>(q_alone ? q : fma(r, wide_reciprocal, q));
    } else {
      return a / divisor;
    }
  }
};

}  // namespace hetstencil
