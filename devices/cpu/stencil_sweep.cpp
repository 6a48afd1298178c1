// The sweep's entry points, each compiled for several instruction sets (GCC's
// target_clones on x86-64: the loader picks the widest the machine has), so
// that the default build vectorizes with AVX-512 or AVX2 where they exist.
// Without FMA contraction (-ffp-contract=off) every clone does the same
// operations in the same order: the same bits.
#include "devices/cpu/stencil_sweep.hpp"

#include "devices/cpu/stencil_chunks.hpp"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__AVX512F__)
#define HETSTENCIL_SWEEP_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define HETSTENCIL_SWEEP_CLONES
#endif

namespace hetstencil {

HETSTENCIL_SWEEP_CLONES
void sweep_units(const StencilTerms<float>& terms, const GridShape& slab, const float* in, float* out,
                 const SlabSource<float>& source, std::int64_t begin, std::int64_t end,
                 const SweepBlocking& blocking, bool streaming) {
  sweep_units_inline(terms, slab, in, out, source, begin, end, blocking, streaming);
}

HETSTENCIL_SWEEP_CLONES
void sweep_units(const StencilTerms<double>& terms, const GridShape& slab, const double* in, double* out,
                 const SlabSource<double>& source, std::int64_t begin, std::int64_t end,
                 const SweepBlocking& blocking, bool streaming) {
  sweep_units_inline(terms, slab, in, out, source, begin, end, blocking, streaming);
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
