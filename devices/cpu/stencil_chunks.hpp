// The chunked passes of the CPU sweep of any stencil (stencil_sweep.hpp), as
// templates that inline into their caller: stencil_sweep.cpp compiles them
// once per instruction set, so each build runs the widest vectors the
// machine it runs on has.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/stencil_terms.hpp"
#include "devices/cpu/jacobi_kernels.hpp"
#include "devices/cpu/stencil_sweep.hpp"
#include "hetstencil/grid.hpp"

namespace hetstencil {

namespace sweep_detail {

// sum[j] (= First ? 0 : sum[j]) + w_0 u[j + o_0] + ... + w_{G-1} u[j + o_{G-1}],
// added left to right, each term fused (add_term), for j in [0, n). A Variable
// stencil's w_g is the cell's own, weights[g * stride + j] (weights at a_0 of
// cell 0); else weights[g].
template <class T, int G, bool First, bool Variable>
[[gnu::always_inline]] inline void add_points(T* __restrict sum, const T* __restrict u,
                                              const std::int64_t* offsets, const T* weights, std::int64_t stride,
                                              std::int64_t n) {
  const T* __restrict p[G];
  const T* __restrict c[G];
  T w[G];
  for (int g = 0; g < G; ++g) {
    p[g] = u + offsets[g];
    if constexpr (Variable) {
      c[g] = weights + g * stride;
    } else {
      w[g] = weights[g];
    }
  }
  const auto weight = [&](int g, std::int64_t j) __attribute__((always_inline)) {
    if constexpr (Variable) {
      return c[g][j];
    } else {
      return w[g];
    }
  };
  for (std::int64_t j = 0; j < n; ++j) {
    T s = First ? weight(0, j) * p[0][j] : add_term(sum[j], weight(0, j), p[0][j]);
    for (int g = 1; g < G; ++g) s = add_term(s, weight(g, j), p[g][j]);
    sum[j] = s;
  }
}

template <class T, bool First, bool Variable>
[[gnu::always_inline]] inline void add_points(int g, T* sum, const T* u, const std::int64_t* offsets,
                                              const T* weights, std::int64_t stride, std::int64_t n) {
  switch (g) {
    case 1: return add_points<T, 1, First, Variable>(sum, u, offsets, weights, stride, n);
    case 2: return add_points<T, 2, First, Variable>(sum, u, offsets, weights, stride, n);
    case 3: return add_points<T, 3, First, Variable>(sum, u, offsets, weights, stride, n);
    case 4: return add_points<T, 4, First, Variable>(sum, u, offsets, weights, stride, n);
    case 5: return add_points<T, 5, First, Variable>(sum, u, offsets, weights, stride, n);
    case 6: return add_points<T, 6, First, Variable>(sum, u, offsets, weights, stride, n);
    case 7: return add_points<T, 7, First, Variable>(sum, u, offsets, weights, stride, n);
    default: return add_points<T, 8, First, Variable>(sum, u, offsets, weights, stride, n);
  }
}

// add_term lane by lane, with the same bits in every build. Where the build
// targets FMA, one instruction (left to the compiler, a vector of AVX-512
// doubles went lane by lane through scalar FMAs); else a loop over the lanes:
// in the target_clones builds, scalar FMAs in the x86-64-v3 and v4 clones and
// calls of the library's fma in the baseline one.
#if defined(__FMA__)
[[gnu::always_inline]] inline __m128 add_lanes(__m128 sum, __m128 weight, __m128 value) {
  return _mm_fmadd_ps(weight, value, sum);
}
[[gnu::always_inline]] inline __m128d add_lanes(__m128d sum, __m128d weight, __m128d value) {
  return _mm_fmadd_pd(weight, value, sum);
}
[[gnu::always_inline]] inline __m256 add_lanes(__m256 sum, __m256 weight, __m256 value) {
  return _mm256_fmadd_ps(weight, value, sum);
}
[[gnu::always_inline]] inline __m256d add_lanes(__m256d sum, __m256d weight, __m256d value) {
  return _mm256_fmadd_pd(weight, value, sum);
}
#if defined(__AVX512F__)
[[gnu::always_inline]] inline __m512 add_lanes(__m512 sum, __m512 weight, __m512 value) {
  return _mm512_fmadd_ps(weight, value, sum);
}
[[gnu::always_inline]] inline __m512d add_lanes(__m512d sum, __m512d weight, __m512d value) {
  return _mm512_fmadd_pd(weight, value, sum);
}
#endif
#else
template <class V>
[[gnu::always_inline]] inline V add_lanes(V sum, V weight, V value) {
  V out;
  for (int i = 0; i < static_cast<int>(sizeof(V) / sizeof(out[0])); ++i) out[i] = add_term(sum[i], weight[i], value[i]);
  return out;
}
#endif

// x / d, or x * (1 / d) where d is a power of two: then 1 / d is exact and
// both are the correctly rounded x / d, while a multiply is many times cheaper.
template <class T>
struct Divide {
  T d;
  T reciprocal;
  bool by_reciprocal = false;
  explicit Divide(T divisor) : d(divisor), reciprocal(T(1) / divisor) {
    int exponent = 0;
    by_reciprocal = std::fabs(std::frexp(divisor, &exponent)) == T(0.5) && std::isnormal(reciprocal);
  }
};

// out[j] = (sum[j] + sf[j]) / diagonal[j] (sf nullptr: + 0): a variable
// stencil's finish, each cell divided by its own D.
template <class T>
[[gnu::always_inline]] inline void finish_variable(const T* __restrict sum, const T* __restrict sf,
                                                   const T* __restrict diagonal, T* __restrict out, std::int64_t n) {
  if (sf) {
    for (std::int64_t j = 0; j < n; ++j) out[j] = (sum[j] + sf[j]) / diagonal[j];
  } else {
    for (std::int64_t j = 0; j < n; ++j) out[j] = (sum[j] + T(0)) / diagonal[j];
  }
}

// out[j] = ((sum[j] +) w_0 u[j + o_0] + ... + w_{G-1} u[j + o_{G-1}] + sf[j]) / d
// (Summed: from the sums of the points before; sf nullptr: + 0), added left
// to right, each term fused, with plain stores, the sum never leaving its
// register; dividing as `divide` says.
template <class T, int G, bool Summed, bool ByReciprocal, bool Source>
[[gnu::always_inline]] inline void update_points(T* __restrict out, const T* __restrict sum, const T* __restrict u,
                                                 const std::int64_t* offsets, const T* weights, const T* __restrict sf,
                                                 const Divide<T>& divide, std::int64_t n) {
  const T* __restrict p[G];
  T w[G];
  for (int g = 0; g < G; ++g) {
    p[g] = u + offsets[g];
    w[g] = weights[g];
  }
  const T d = ByReciprocal ? divide.reciprocal : divide.d;
  for (std::int64_t j = 0; j < n; ++j) {
    T s = Summed ? add_term(sum[j], w[0], p[0][j]) : w[0] * p[0][j];
    for (int g = 1; g < G; ++g) s = add_term(s, w[g], p[g][j]);
    const T x = s + (Source ? sf[j] : T(0));
    out[j] = ByReciprocal ? x * d : x / d;
  }
}

// update_points with non-temporal stores where the target has them: the
// cells before out's first whole vector and after its last are stored plainly.
template <class T, int G, bool Summed, bool ByReciprocal, bool Source>
[[gnu::always_inline]] inline void update_points_streaming(T* out, const T* sum, const T* u, const std::int64_t* offsets,
                                                           const T* weights, const T* sf, const Divide<T>& divide,
                                                           std::int64_t n) {
  std::int64_t j = 0;
#if defined(__AVX__) || defined(__SSE2__)
  using L = WideLanes<T>;
  constexpr std::uintptr_t align = L::width * sizeof(T);
  while (j < n && reinterpret_cast<std::uintptr_t>(out + j) % align != 0) ++j;
  update_points<T, G, Summed, ByReciprocal, Source>(out, sum, u, offsets, weights, sf, divide, j);
  const T* p[G];
  typename L::V w[G];
  for (int g = 0; g < G; ++g) {
    p[g] = u + offsets[g];
    w[g] = L::set1(weights[g]);
  }
  const typename L::V d = L::set1(ByReciprocal ? divide.reciprocal : divide.d);
  const typename L::V zero = L::set1(T(0));
  for (; j + L::width <= n; j += L::width) {
    typename L::V s = Summed ? add_lanes(L::load(sum + j), w[0], L::load(p[0] + j)) : w[0] * L::load(p[0] + j);
    for (int g = 1; g < G; ++g) s = add_lanes(s, w[g], L::load(p[g] + j));
    const typename L::V x = s + (Source ? L::load(sf + j) : zero);
    L::stream(out + j, ByReciprocal ? x * d : x / d);
  }
#endif
  update_points<T, G, Summed, ByReciprocal, Source>(out + j, Summed ? sum + j : sum, u + j, offsets, weights,
                                                    Source ? sf + j : sf, divide, n - j);
}

template <class T, bool Streaming, bool Summed, bool ByReciprocal, bool Source>
[[gnu::always_inline]] inline void update_points(int g, T* out, const T* sum, const T* u, const std::int64_t* offsets,
                                                 const T* weights, const T* sf, const Divide<T>& divide,
                                                 std::int64_t n) {
  const auto pass = [&](auto points) __attribute__((always_inline)) {
    constexpr int G = decltype(points)::value;
    if constexpr (Streaming) {
      update_points_streaming<T, G, Summed, ByReciprocal, Source>(out, sum, u, offsets, weights, sf, divide, n);
    } else {
      update_points<T, G, Summed, ByReciprocal, Source>(out, sum, u, offsets, weights, sf, divide, n);
    }
  };
  switch (g) {
    case 1: return pass(std::integral_constant<int, 1>());
    case 2: return pass(std::integral_constant<int, 2>());
    case 3: return pass(std::integral_constant<int, 3>());
    case 4: return pass(std::integral_constant<int, 4>());
    case 5: return pass(std::integral_constant<int, 5>());
    case 6: return pass(std::integral_constant<int, 6>());
    case 7: return pass(std::integral_constant<int, 7>());
    default: return pass(std::integral_constant<int, 8>());
  }
}

template <class T, bool Streaming, bool Summed>
[[gnu::always_inline]] inline void update_points(int g, T* out, const T* sum, const T* u, const std::int64_t* offsets,
                                                 const T* weights, const T* sf, const Divide<T>& divide,
                                                 std::int64_t n) {
  if (divide.by_reciprocal) {
    if (sf) return update_points<T, Streaming, Summed, true, true>(g, out, sum, u, offsets, weights, sf, divide, n);
    return update_points<T, Streaming, Summed, true, false>(g, out, sum, u, offsets, weights, sf, divide, n);
  }
  if (sf) return update_points<T, Streaming, Summed, false, true>(g, out, sum, u, offsets, weights, sf, divide, n);
  update_points<T, Streaming, Summed, false, false>(g, out, sum, u, offsets, weights, sf, divide, n);
}

// A constant stencil's updates of n cells: every pass but the last adds its
// points to `sums` (add_points; n at most the buffer's kMaxChunkValues where
// there are such passes), the last adds its own in registers and finishes the
// cells there (update_points, with non-temporal stores where `streaming`):
// the operations of StencilTerms::update in its order.
template <class T>
[[gnu::always_inline]] inline void update_chunk(const StencilTerms<T>& terms, int per_pass, T* sums, const T* u,
                                                const T* sf, const Divide<T>& divide, T* out, std::int64_t n,
                                                bool streaming) {
  const std::size_t points = terms.offsets.size();
  const auto pass = static_cast<std::size_t>(per_pass);
  const std::size_t last = points - ((points - 1) % pass + 1);  // the last pass's first point
  for (std::size_t k = 0; k < last; k += pass) {
    const int g = static_cast<int>(pass);
    if (k == 0) {
      add_points<T, true, false>(g, sums, u, &terms.offsets[k], &terms.weights[k], 0, n);
    } else {
      add_points<T, false, false>(g, sums, u, &terms.offsets[k], &terms.weights[k], 0, n);
    }
  }
  const int g = static_cast<int>(points - last);
  const std::int64_t* o = &terms.offsets[last];
  const T* w = &terms.weights[last];
  if (streaming) {
    if (last == 0) return update_points<T, true, false>(g, out, sums, u, o, w, sf, divide, n);
    return update_points<T, true, true>(g, out, sums, u, o, w, sf, divide, n);
  }
  if (last == 0) return update_points<T, false, false>(g, out, sums, u, o, w, sf, divide, n);
  update_points<T, false, true>(g, out, sums, u, o, w, sf, divide, n);
}

// Values from p to the first cache line boundary at or after it.
template <class T>
inline std::int64_t to_line(const T* p) {
  constexpr std::int64_t line = 64 / static_cast<std::int64_t>(sizeof(T));
  const auto into = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(p) / sizeof(T) % line);
  return into > 0 ? line - into : 0;
}

}  // namespace sweep_detail

/// row_neighbours (stencil_sweep.hpp), inlined into its caller.
template <class T>
[[gnu::always_inline]] inline void row_neighbours_inline(const StencilTerms<T>& terms, const SweepBlocking& blocking,
                                                         const T* u, T* sums, std::int64_t n,
                                                         const T* coefficients = nullptr, std::int64_t stride = 0) {
  const std::int64_t chunk = std::clamp<std::int64_t>(blocking.chunk_values, 1, kMaxChunkValues);
  const int per_pass = std::clamp(blocking.points_per_pass, 1, kMaxPointsPerPass);
  const std::size_t points = terms.offsets.size();
  for (std::int64_t j0 = 0; j0 < n; j0 += chunk) {
    const std::int64_t m = std::min(chunk, n - j0);
    for (std::size_t k = 0; k < points;) {
      const int g = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(per_pass), points - k));
      const std::int64_t* o = &terms.offsets[k];
      if (coefficients) {
        const T* a = coefficients + static_cast<std::int64_t>(k) * stride + j0;
        if (k == 0) {
          sweep_detail::add_points<T, true, true>(g, sums + j0, u + j0, o, a, stride, m);
        } else {
          sweep_detail::add_points<T, false, true>(g, sums + j0, u + j0, o, a, stride, m);
        }
      } else if (k == 0) {
        sweep_detail::add_points<T, true, false>(g, sums + j0, u + j0, o, &terms.weights[k], 0, m);
      } else {
        sweep_detail::add_points<T, false, false>(g, sums + j0, u + j0, o, &terms.weights[k], 0, m);
      }
      k += static_cast<std::size_t>(g);
    }
  }
}

/// sweep_units (stencil_sweep.hpp), inlined into its caller.
template <class T>
[[gnu::always_inline]] inline void sweep_units_inline(const StencilTerms<T>& terms, const GridShape& slab,
                                                      const T* __restrict in, T* __restrict out,
                                                      const SlabSource<T>& source, std::int64_t begin,
                                                      std::int64_t end, const SweepBlocking& blocking,
                                                      bool streaming, SweepLines lines) {
  const std::int64_t d = slab.depth;
  const std::int64_t nx = slab.nx;
  // Chunks of whole cache lines of `out`, so that non-temporal stores fill
  // every line they touch: a line written partly by plain stores and partly
  // by streaming ones is written to memory piecemeal, several times slower.
  constexpr std::int64_t line = 64 / static_cast<std::int64_t>(sizeof(T));
  const std::int64_t chunk =
      std::clamp<std::int64_t>(blocking.chunk_values, line, kMaxChunkValues) / line * line;
  alignas(64) T sums[kMaxChunkValues];
  const sweep_detail::Divide<T> divide(terms.diagonal);
  // Columns [c0, c1) of a row: c0 is 0 or where a line of out begins.
  const auto sweep_row = [&](std::int64_t plane, std::int64_t i, std::int64_t c0,
                             std::int64_t c1) __attribute__((always_inline)) {
    const std::int64_t row = (plane * slab.rows() + i) * slab.cols() + d;  // the row's first interior value
    const T* u = in + row;
    T* o = out + row;
    const T* f = source.sf ? source.sf + row : nullptr;
    const T* a = source.coefficients ? source.coefficients + row : nullptr;
    const std::int64_t stride = source.stride;
    const std::int64_t diagonal_grid = static_cast<std::int64_t>(terms.offsets.size()) * stride;  // D after the a_k
    const std::int64_t spike = source.spike_index - row;
    const bool has_spike = !f && spike >= c0 && spike < c1;
    // The spike's row is stored plainly, so that its cell can be overwritten in order.
    const bool stream = streaming && !has_spike;
    // Streaming, the first chunk ends where out's first whole line begins.
    // Plain stores need no such chunk, whose few cells the compiler's loops
    // would sweep one by one, not as vectors.
    std::int64_t m = std::min(c1 - c0, c0 == 0 && stream ? sweep_detail::to_line<T>(o) : chunk);
    if (m == 0) m = std::min(c1 - c0, chunk);
    const int per_pass = std::clamp(blocking.points_per_pass, 1, kMaxPointsPerPass);
    if (!a && terms.offsets.size() <= static_cast<std::size_t>(per_pass)) {
      // Every point in one pass: no sums to keep, the row in one go.
      sweep_detail::update_chunk(terms, per_pass, sums, u + c0, f ? f + c0 : nullptr, divide, o + c0, c1 - c0, stream);
      if (has_spike) o[spike] = terms.update(u + spike, T(1));
      return;
    }
    for (std::int64_t j0 = c0; j0 < c1; j0 += m, m = std::min(chunk, c1 - j0)) {
      if (a) {
        row_neighbours_inline(terms, blocking, u + j0, sums, m, a + j0, stride);
        // Each cell's own D: plain stores (a variable stencil's sweep reads K + 1 more grids than it writes).
        sweep_detail::finish_variable(sums, f ? f + j0 : nullptr, a + j0 + diagonal_grid, o + j0, m);
      } else {
        sweep_detail::update_chunk(terms, per_pass, sums, u + j0, f ? f + j0 : nullptr, divide, o + j0, m, stream);
      }
    }
    if (has_spike) o[spike] = a ? terms.update(u + spike, a + spike, stride, T(1)) : terms.update(u + spike, T(1));
  };
  if (slab.dimension() == 3) {
    const SweepTile tile = sweep_tile(slab, blocking, sizeof(T));
    const std::int64_t tile_x = tile.columns, tile_rows = tile.lines;
    const std::int64_t tiles_x = nx / tile_x + 1;
    const std::int64_t last_line = lines.end < 0 ? slab.ny : std::min(lines.end, slab.ny);
    for (std::int64_t y0 = lines.begin; y0 < last_line; y0 += tile_rows) {
      const std::int64_t y1 = std::min(last_line, y0 + tile_rows);
      for (std::int64_t t = 0; t < tiles_x; ++t) {
        for (std::int64_t unit = begin; unit < end; ++unit) {
          for (std::int64_t i = y0; i < y1; ++i) {
            T* const first = out + ((d + unit) * slab.rows() + d + i) * slab.cols() + d;
            const std::int64_t aligned = sweep_detail::to_line<T>(first);  // where its first whole line begins
            const std::int64_t c0 = t == 0 ? 0 : std::min(nx, aligned + t * tile_x);
            const std::int64_t c1 = t == tiles_x - 1 ? nx : std::min(nx, aligned + (t + 1) * tile_x);
            if (c0 < c1) sweep_row(d + unit, d + i, c0, c1);
          }
        }
      }
    }
  } else {
    for (std::int64_t unit = begin; unit < end; ++unit) sweep_row(0, d + unit, 0, nx);
  }
  if (streaming) stream_fence();
}

}  // namespace hetstencil
