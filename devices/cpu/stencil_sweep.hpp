// The CPU sweep of any stencil description (core/stencil_terms.hpp), on a slab
// of whole units of the split axis (rows of a 2-D grid, planes of a 3-D one)
// laid out as a grid of its own: GridShape with the slab's units on the split
// axis and a ring `depth` deep, whose ghost units hold the neighbours' values
// or the boundary. The points' linear offsets are the grid's, so one table
// serves every slab of a grid.
//
// A row is updated a chunk at a time (SweepBlocking::chunk_values values):
// the chunk's sums live in an L1-resident buffer while the points are added
// to them a few at a time, sum = w_0 u[j + o_0], then sum = fma(w_k, u[j + o_k],
// sum) in the points' order (add_term), and the finished chunk is written once,
// out[j] = (sum + s f[j]) / d. A constant stencil's last pass finishes its
// cells itself, each sum kept in a register, and one whose points fit one
// pass needs no buffer (on a 2-core EPYC VM, one thread, float 256^3, plain
// stores: poisson7 13.1 ms against 17.4 through the buffer, box27 28.5 against
// 32.0; streaming: poisson7 15.3-16.4 against 26.3-28.0, box27 29.5-30.4
// against 40.8-41.6). Every pass is a plain loop the compiler
// vectorizes, and every cell sees the operations of StencilTerms::update in
// its order, so the bits equal the sequential reference's for any split and
// any blocking. A 3-D slab is swept in tiles of rows and columns, every plane
// of a tile in turn, so that the planes a row reads (2 radius + 1 of them)
// stay in cache.
#pragma once

#include <cstdint>

#include "core/stencil_terms.hpp"
#include "hetstencil/grid.hpp"

namespace hetstencil {

/// The most values of a chunk (the size of the sums' buffer on the stack).
constexpr std::int64_t kMaxChunkValues = 2048;
/// The most points one pass over a chunk adds.
constexpr int kMaxPointsPerPass = 8;

/// The sweep's blocking parameters, in one place so that a tuner can set them;
/// none changes a bit of the result.
struct SweepBlocking {
  /// Values of a row updated together (1..kMaxChunkValues): their sums stay in
  /// L1 while every point is added.
  std::int64_t chunk_values = 256;
  /// Points added per pass over a chunk (1..kMaxPointsPerPass): fewer trips of
  /// the sums through L1, more input streams per loop.
  int points_per_pass = 8;
  /// 3-D: bytes of the neighbourhood of a tile (2 radius + 1 planes of the
  /// tile's rows and columns, radius more on each side) that should stay in
  /// the cache while the tile is swept plane after plane.
  std::int64_t tile_bytes = std::int64_t(1) << 20;
  /// 3-D: a tile is as wide as a row unless that leaves it fewer rows than
  /// this many times the radius; then it is narrowed (halved, in whole cache
  /// lines) until it has them, so that the radius-deep edges each tile reads
  /// again stay a small part of what it reads.
  int tile_rows_per_radius = 4;
};

/// What a slab's cells add besides u: s*f per value of the slab (nullptr:
/// zero) and the slab's index of the spike (s*f = 1 there), or -1; and a
/// variable stencil's weights per cell (core/stencil_terms.hpp): its grid a_0
/// from the slab's first value, a_k and D `stride` values apart each (nullptr:
/// the stencil's constant weights).
template <class T>
struct SlabSource {
  const T* sf = nullptr;
  std::int64_t spike_index = -1;
  const T* coefficients = nullptr;
  std::int64_t stride = 0;
};

/// 3-D: the lines [begin, end) of each plane a sweep updates (end -1: to
/// the plane's last).
struct SweepLines {
  std::int64_t begin = 0;
  std::int64_t end = -1;
};

/// Updates the interior cells of the slab's interior units [begin, end)
/// (0-based, ghost units not counted) from `in` into `out`, in 3-D those of
/// `lines`; both are laid out as `slab`. Workers may sweep disjoint unit
/// ranges, or line ranges, of one slab at once. With `streaming`, the new
/// values go straight to memory (non-temporal stores, fenced before return):
/// for slabs larger than the cache.
void sweep_units(const StencilTerms<float>& terms, const GridShape& slab, const float* in, float* out,
                 const SlabSource<float>& source, std::int64_t begin, std::int64_t end,
                 const SweepBlocking& blocking = {}, bool streaming = false, SweepLines lines = {});
void sweep_units(const StencilTerms<double>& terms, const GridShape& slab, const double* in, double* out,
                 const SlabSource<double>& source, std::int64_t begin, std::int64_t end,
                 const SweepBlocking& blocking = {}, bool streaming = false, SweepLines lines = {});

/// 3-D: a tile of the sweep, `columns` values of `lines` lines, every plane
/// of it in turn (a slab of values of value_bytes). Lines swept from a
/// multiple of `lines` are tiled as in a sweep of every line.
struct SweepTile {
  std::int64_t columns = 0;
  std::int64_t lines = 0;
};
SweepTile sweep_tile(const GridShape& slab, const SweepBlocking& blocking, std::size_t value_bytes);

/// sums[j] = sum_k w_k u[j + o_k] for j in [0, n) (StencilTerms::neighbours of
/// each cell, the same bits), a chunk at a time: the residual's sums. With
/// `coefficients` (a variable stencil's a_0 of cell 0, a_k `stride` values
/// further each), the cells' own weights.
void row_neighbours(const StencilTerms<float>& terms, const SweepBlocking& blocking, const float* u, float* sums,
                    std::int64_t n, const float* coefficients = nullptr, std::int64_t stride = 0);
void row_neighbours(const StencilTerms<double>& terms, const SweepBlocking& blocking, const double* u, double* sums,
                    std::int64_t n, const double* coefficients = nullptr, std::int64_t stride = 0);

}  // namespace hetstencil
