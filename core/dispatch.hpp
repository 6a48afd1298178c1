// Runs a generic lambda with a value of the problem's precision type:
//   dispatch(p, [&](auto zero) { using T = decltype(zero); ... });
#pragma once

#include "hetstencil/problem.hpp"

namespace hetstencil {

template <class F>
decltype(auto) dispatch(Precision precision, F&& f) {
  if (precision == Precision::Float) return f(float{});
  return f(double{});
}

}  // namespace hetstencil
