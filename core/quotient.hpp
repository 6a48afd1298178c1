// a / d for a divisor d known before the sweep, with the bits of the IEEE
// division and without its cost. With y = RN(1/d) made once,
//   q = RN(a y),  r = a - d q (exact, one fused multiply-add),  q' = RN(q + r y)
// is RN(a / d) (Markstein's theorem: y within half an ulp of 1/d, q within one
// ulp of a/d) wherever nothing underflows or overflows: for |a| in [low, high].
// A zero dividend's quotient is a y (its sign is a's times d's); any other a
// (subnormal, near the overflow threshold, infinite, NaN) takes the division.
// A GPU's division checks its operands on every call and calls a slow path for
// a zero dividend, which a spike problem's grid is mostly made of; this checks
// a single range. See docs/stencils.md, "Dividing by the diagonal".
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/stencil_update.hpp"  // HETSTENCIL_HOST_DEVICE

namespace hetstencil {

template <class T>
struct Quotient {
  T divisor = T(1);
  T reciprocal = T(1);  ///< RN(1 / divisor), or its sign where that is not a normal number
  T low = T(1);         ///< |a| in [low, high] take the multiplications
  T high = T(0);

  /// The quotients by `d` (finite and non-zero).
  static Quotient by(T d) {
    constexpr int digits = std::numeric_limits<T>::digits;
    constexpr int emin = std::numeric_limits<T>::min_exponent - 1;  // of the smallest normal number
    constexpr int emax = std::numeric_limits<T>::max_exponent - 1;
    Quotient q;
    q.divisor = d;
    q.reciprocal = T(1) / d;
    if (!std::isnormal(q.reciprocal)) {
      q.reciprocal = std::copysign(T(1), d);  // every non-zero a divides
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
    return a / divisor;
  }
};

}  // namespace hetstencil
