// The stencil's arithmetic, written once: the update of a cell and its residual.
// The CPU and CUDA kernels, the GPU variants, the sequential reference and the
// residual all call these functions, so they agree bit for bit: each expression
// fixes its order of operations, and the build forbids contracting a multiply
// and an add into an FMA (-ffp-contract=off, nvcc -fmad=false).
#pragma once

#if defined(__CUDACC__)
#define HETSTENCIL_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define HETSTENCIL_HOST_DEVICE inline
#endif

namespace hetstencil {

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
