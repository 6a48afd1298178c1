// The sweep's entry points, each compiled for several instruction sets (GCC's
// target_clones on x86-64: the loader picks the widest the machine has), so
// that the default build vectorizes with AVX-512 or AVX2 where they exist.
// Without FMA contraction (-ffp-contract=off) every clone does the same
// operations in the same order: the same bits.
#include "devices/cpu/stencil_sweep.hpp"

#include "devices/cpu/stencil_chunks.hpp"

#include <algorithm>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__AVX512F__)
#define HETSTENCIL_SWEEP_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define HETSTENCIL_SWEEP_CLONES
#endif

namespace hetstencil {

HETSTENCIL_SWEEP_CLONES
void sweep_units(const StencilTerms<float>& terms, const GridShape& slab, const float* in, float* out,
                 const SlabSource<float>& source, std::int64_t begin, std::int64_t end,
                 const SweepBlocking& blocking, bool streaming, SweepLines lines) {
  sweep_units_inline(terms, slab, in, out, source, begin, end, blocking, streaming, lines);
}

HETSTENCIL_SWEEP_CLONES
void sweep_units(const StencilTerms<double>& terms, const GridShape& slab, const double* in, double* out,
                 const SlabSource<double>& source, std::int64_t begin, std::int64_t end,
                 const SweepBlocking& blocking, bool streaming, SweepLines lines) {
  sweep_units_inline(terms, slab, in, out, source, begin, end, blocking, streaming, lines);
}

SweepTile sweep_tile(const GridShape& slab, const SweepBlocking& blocking, std::size_t value_bytes) {
  // Tiles of whole lines of out (from each row's first whole line) whose
  // neighbourhood fits tile_bytes, narrowed while they have too few rows.
  const std::int64_t d = slab.depth;
  const std::int64_t nx = slab.nx;
  const auto value = static_cast<std::int64_t>(value_bytes);
  const std::int64_t line = 64 / value;
  const auto rows_of = [&](std::int64_t x) {
    return blocking.tile_bytes / ((2 * d + 1) * (std::min(x, nx) + 2 * d) * value) - 2 * d;
  };
  std::int64_t columns = (nx + line - 1) / line * line;
  while (columns > line && rows_of(columns) < blocking.tile_rows_per_radius * d) {
    columns = std::max(line, columns / 2 / line * line);
  }
  return {columns, std::max<std::int64_t>(1, rows_of(columns))};
}

HETSTENCIL_SWEEP_CLONES
void row_neighbours(const StencilTerms<float>& terms, const SweepBlocking& blocking, const float* u, float* sums,
                    std::int64_t n, const float* coefficients, std::int64_t stride) {
  row_neighbours_inline(terms, blocking, u, sums, n, coefficients, stride);
}

HETSTENCIL_SWEEP_CLONES
void row_neighbours(const StencilTerms<double>& terms, const SweepBlocking& blocking, const double* u, double* sums,
                    std::int64_t n, const double* coefficients, std::int64_t stride) {
  row_neighbours_inline(terms, blocking, u, sums, n, coefficients, stride);
}

}  // namespace hetstencil
