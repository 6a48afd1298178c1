// The stencil's arithmetic, written once: the update of a cell and its residual.
// The CPU and CUDA kernels, the GPU variants, the sequential reference and the
// residual all call these functions, so they agree bit for bit: each expression
// fixes its order of operations, and the build forbids the compiler to contract
// a multiply and an add into an FMA (-ffp-contract=off, nvcc -fmad=false), so
// that a fused multiply-add is where the code asks for one (add_term), alike
// on every backend.
#pragma once

#include <cmath>

#if defined(__CUDACC__)
#define HETSTENCIL_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define HETSTENCIL_HOST_DEVICE inline
#endif

namespace hetstencil {

/// sum + weight * value with one rounding: how every backend adds a stencil's
/// terms after the first. A fused term halves a stencil's arithmetic
/// instructions (on an H200, box27 float 512^3 swept in 0.34 ms against 0.41
/// with a product and a sum), and the C library's fma and the CPU's and GPU's
/// fused multiply-add instructions give the same correctly rounded bits.
template <class T>
HETSTENCIL_HOST_DEVICE T add_term(T sum, T weight, T value) {
  using std::fma;
  return fma(weight, value, sum);
}

/// The 2-D 5-point Poisson stencil in precision T: for a cell with neighbours
/// n, s, w, e (north, south, west, east), centre c and h2f = h*h*f,
///   u'  = 0.25 * ((((n + s) + w) + e) + h2f)
///   rho = h2f - (4 c - (((n + s) + w) + e))      (h*h times f - A u)
/// V is T, or a SIMD register of T whose + and * act lane by lane (the CPU's
/// streaming sweep): the same expression then updates several cells at once.
template <class T>
struct Poisson5 {
  /// The neighbours' sum, in the order every update and residual adds them.
  template <class V>
  HETSTENCIL_HOST_DEVICE static V neighbours(V n, V s, V w, V e) {
    return ((n + s) + w) + e;
  }

  /// The next iterate of a cell.
  template <class V>
  HETSTENCIL_HOST_DEVICE static V update(V n, V s, V w, V e, V h2f) {
    return T(0.25) * (neighbours(n, s, w, e) + h2f);
  }

  /// h*h times the residual f - A u of a cell, in precision T.
  HETSTENCIL_HOST_DEVICE static T residual(T n, T s, T w, T e, T c, T h2f) {
    const T sum = neighbours(n, s, w, e);
    return h2f - (T(4) * c - sum);
  }
};

}  // namespace hetstencil
