// The CPU sweep: one Jacobi update of a row, each cell by Poisson5::update
// (core/stencil_update.hpp), so the bits equal the sequential reference's.
// The plain loops are vectorized by the compiler; the streaming loop applies
// the same update to whole vector registers.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__AVX__) || defined(__SSE2__)
#include <immintrin.h>
#endif

#include "core/stencil_update.hpp"

namespace hetstencil {

template <class T>
inline T jacobi_cell(const T* n, const T* c, const T* s, std::int64_t j, T h2f) {
  return Poisson5<T>::update(n[j], s[j], c[j - 1], c[j + 1], h2f);
}

/// out[j] for j in 1..nx from the rows above (n), at (c) and below (s); h2f is
/// h*h*f for the row or nullptr (zero); spike_col is where h*h*f = 1, or -1.
/// Plain stores: the new row stays in cache, which pays when the slab fits there.
template <class T>
inline void jacobi_row(const T* __restrict n, const T* __restrict c, const T* __restrict s,
                       const T* __restrict h2f, std::int64_t spike_col, T* __restrict out, std::int64_t nx) {
  if (h2f) {
    for (std::int64_t j = 1; j <= nx; ++j) out[j] = Poisson5<T>::update(n[j], s[j], c[j - 1], c[j + 1], h2f[j]);
  } else {
    for (std::int64_t j = 1; j <= nx; ++j) out[j] = Poisson5<T>::update(n[j], s[j], c[j - 1], c[j + 1], T(0));
  }
  if (spike_col > 0) out[spike_col] = jacobi_cell(n, c, s, spike_col, T(1));
}

/// The bandwidth yardstick for a sweep: the same bytes read and written.
template <class T>
inline void copy_row(const T* __restrict c, T* __restrict out, std::int64_t nx) {
  std::memcpy(out + 1, c + 1, static_cast<std::size_t>(nx) * sizeof(T));
}

#if defined(__AVX__) || defined(__SSE2__)
// Vector registers for the streaming sweep: 32 bytes with AVX, 16 with SSE2.
// GCC and Clang define them as vector types whose + and * act lane by lane,
// so Poisson5::update takes them as it takes a scalar.
template <class T>
struct Lanes;
#if defined(__AVX__)
template <>
struct Lanes<double> {
  using V = __m256d;
  static constexpr int width = 4;
  static V load(const double* p) { return _mm256_loadu_pd(p); }
  static V set1(double v) { return _mm256_set1_pd(v); }
  static void stream(double* p, V v) { _mm256_stream_pd(p, v); }
};
template <>
struct Lanes<float> {
  using V = __m256;
  static constexpr int width = 8;
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static V set1(float v) { return _mm256_set1_ps(v); }
  static void stream(float* p, V v) { _mm256_stream_ps(p, v); }
};
#else
template <>
struct Lanes<double> {
  using V = __m128d;
  static constexpr int width = 2;
  static V load(const double* p) { return _mm_loadu_pd(p); }
  static V set1(double v) { return _mm_set1_pd(v); }
  static void stream(double* p, V v) { _mm_stream_pd(p, v); }
};
template <>
struct Lanes<float> {
  using V = __m128;
  static constexpr int width = 4;
  static V load(const float* p) { return _mm_loadu_ps(p); }
  static V set1(float v) { return _mm_set1_ps(v); }
  static void stream(float* p, V v) { _mm_stream_ps(p, v); }
};
#endif

// The widest vectors the build targets: 64 bytes with AVX-512, else Lanes'.
// (GCC's target_clones do not define __AVX512F__ in their AVX-512 clone:
// there it is the build's flags that decide.)
template <class T>
struct WideLanes : Lanes<T> {};
#if defined(__AVX512F__)
template <>
struct WideLanes<double> {
  using V = __m512d;
  static constexpr int width = 8;
  static V load(const double* p) { return _mm512_loadu_pd(p); }
  static V set1(double v) { return _mm512_set1_pd(v); }
  static void stream(double* p, V v) { _mm512_stream_pd(p, v); }
};
template <>
struct WideLanes<float> {
  using V = __m512;
  static constexpr int width = 16;
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static V set1(float v) { return _mm512_set1_ps(v); }
  static void stream(float* p, V v) { _mm512_stream_ps(p, v); }
};
#endif

/// jacobi_row with non-temporal stores: for slabs larger than the cache, the
/// new row goes straight to memory without first being read for ownership,
/// so a sweep moves 2 words a cell, like a copy. The caller issues
/// stream_fence() before other threads read the rows.
template <class T>
inline void jacobi_row_streaming(const T* __restrict n, const T* __restrict c, const T* __restrict s,
                                 const T* __restrict h2f, std::int64_t spike_col, T* __restrict out,
                                 std::int64_t nx) {
  using L = Lanes<T>;
  constexpr std::uintptr_t align = L::width * sizeof(T);
  std::int64_t j = 1;
  for (; j <= nx && reinterpret_cast<std::uintptr_t>(out + j) % align != 0; ++j) {
    out[j] = jacobi_cell(n, c, s, j, h2f ? h2f[j] : T(0));
  }
  const typename L::V zero = L::set1(T(0));
  for (; j + L::width - 1 <= nx; j += L::width) {
    L::stream(out + j, Poisson5<T>::update(L::load(n + j), L::load(s + j), L::load(c + j - 1), L::load(c + j + 1),
                                           h2f ? L::load(h2f + j) : zero));
  }
  for (; j <= nx; ++j) out[j] = jacobi_cell(n, c, s, j, h2f ? h2f[j] : T(0));
  if (spike_col > 0) out[spike_col] = jacobi_cell(n, c, s, spike_col, T(1));
}

/// The copy with the same non-temporal stores, as a yardstick for the streaming sweep.
template <class T>
inline void copy_row_streaming(const T* __restrict c, T* __restrict out, std::int64_t nx) {
  using L = Lanes<T>;
  constexpr std::uintptr_t align = L::width * sizeof(T);
  std::int64_t j = 1;
  for (; j <= nx && reinterpret_cast<std::uintptr_t>(out + j) % align != 0; ++j) out[j] = c[j];
  for (; j + L::width - 1 <= nx; j += L::width) L::stream(out + j, L::load(c + j));
  for (; j <= nx; ++j) out[j] = c[j];
}

inline void stream_fence() { _mm_sfence(); }
inline constexpr bool kHasStreamingStores = true;
#else
template <class T>
inline void jacobi_row_streaming(const T* n, const T* c, const T* s, const T* h2f, std::int64_t spike_col, T* out,
                                 std::int64_t nx) {
  jacobi_row(n, c, s, h2f, spike_col, out, nx);
}
template <class T>
inline void copy_row_streaming(const T* c, T* out, std::int64_t nx) {
  copy_row(c, out, nx);
}
inline void stream_fence() {}
inline constexpr bool kHasStreamingStores = false;
#endif

}  // namespace hetstencil
