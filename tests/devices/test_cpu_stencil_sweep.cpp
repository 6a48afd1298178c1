// The CPU sweep of any stencil over uneven splits of the split axis (rows in
// 2-D, planes in 3-D), each slab swept by its own thread from radius-deep ghost
// units: the same bits as the sequential reference, for every built-in and
// random descriptions, in float and double, whatever the sweep's blocking.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/source_term.hpp"
#include "devices/cpu/stencil_sweep.hpp"
#include "hetstencil/reference.hpp"

namespace hetstencil {
namespace {

// Iterates `p` on slabs of `units` units each (interior units of the split
// axis, in order), exchanging ghost units through the whole grid between
// sweeps; in 3-D each slab's lines swept in the ranges [0, c1), [c1, c2), ...
// of the cuts `lines` (none: in one go).
template <class T>
Grid<T> split_solve(const Problem& p, const std::vector<std::int64_t>& units, const SweepBlocking& blocking,
                    bool streaming, const std::vector<std::int64_t>& lines = {}) {
  const GridShape shape = p.shape();
  const bool three_d = shape.dimension() == 3;
  const std::int64_t d = shape.depth;
  const std::int64_t unit_values = three_d ? shape.rows() * shape.cols() : shape.cols();
  const SourceTerm<T> source = make_source_term<T>(p);
  const StencilTerms<T> terms = stencil_terms<T>(p.stencil, shape);
  Grid<T> u = initial_grid<T>(p);
  Grid<T> next = u;
  for (std::int64_t t = 0; t < p.stop.max_iterations; ++t) {
    std::vector<std::thread> workers;
    std::int64_t first = 0;  // the slab's first interior unit
    for (const std::int64_t count : units) {
      workers.emplace_back([&, first, count] {
        GridShape slab = shape;
        (three_d ? slab.nz : slab.ny) = count;
        // The slab's values are the grid's from unit first (ghosts first).
        const std::int64_t offset = first * unit_values;
        std::vector<T> in(u.data() + offset, u.data() + offset + slab.values());
        std::vector<T> out(in.size());
        SlabSource<T> s;
        if (!source.h2f.empty()) s.sf = source.h2f.data() + offset;
        if (source.spike_index >= 0) s.spike_index = source.spike_index - offset;
        std::int64_t line = 0;
        for (const std::int64_t cut : lines) {
          sweep_units(terms, slab, in.data(), out.data(), s, 0, count, blocking, streaming, SweepLines{line, cut});
          line = cut;
        }
        sweep_units(terms, slab, in.data(), out.data(), s, 0, count, blocking, streaming, SweepLines{line, -1});
        const std::int64_t owned = d * unit_values;  // past the ghost units
        std::memcpy(next.data() + offset + owned, out.data() + owned,
                    static_cast<std::size_t>(count * unit_values) * sizeof(T));
      });
      first += count;
    }
    for (auto& w : workers) w.join();
    // The ring of each owned unit was copied with it: put the boundary back.
    const Grid<T> initial = initial_grid<T>(p);
    for (std::int64_t k = 0; k < next.planes(); ++k) {
      for (std::int64_t i = 0; i < next.rows(); ++i) {
        for (std::int64_t j = 0; j < next.cols(); ++j) {
          const bool ring = (three_d && (k < d || k >= d + p.nz)) || i < d || i >= d + p.ny || j < d || j >= d + p.nx;
          if (ring) next(k, i, j) = initial(k, i, j);
        }
      }
    }
    std::swap(u, next);
  }
  return u;
}

template <class T>
void expect_reference_bits(Problem p, const std::vector<std::int64_t>& units, const SweepBlocking& blocking = {},
                           bool streaming = false, const std::vector<std::int64_t>& lines = {}) {
  p.precision = sizeof(T) == 4 ? Precision::Float : Precision::Double;
  const Grid<T> split = split_solve<T>(p, units, blocking, streaming, lines);
  const Result reference = solve_reference(p);
  EXPECT_TRUE(same_bits(reference.solution, Solution(split)))
      << p.stencil.name << " " << sizeof(T) << " chunk " << blocking.chunk_values << " points per pass "
      << blocking.points_per_pass << " tile bytes " << blocking.tile_bytes << (streaming ? " streaming" : "");
}

Problem problem_of(const Stencil& stencil, bool spike) {
  Problem p;
  p.stencil = stencil;
  p.nx = 13;
  p.ny = 11;
  if (stencil.dimension == 3) p.nz = 11;
  p.stop.max_iterations = 7;
  p.boundary = Boundary::constant(0.5);
  if (!spike) {
    p.source = stencil.dimension == 3 ? Source::from_function_3d([](double x, double y, double z) { return x - y * z; })
                                      : Source::from_function([](double x, double y) { return x * y - 0.25; });
  }
  return p;
}

TEST(CpuStencilSweep, BuiltinsOverUnevenSplitsGiveTheReferenceBits) {
  for (const std::string& name : builtin_stencil_names()) {
    for (bool spike : {true, false}) {
      const Problem p = problem_of(Stencil::builtin(name), spike);
      for (const std::vector<std::int64_t>& units : {std::vector<std::int64_t>{11}, {1, 7, 3}, {5, 1, 1, 4}}) {
        expect_reference_bits<float>(p, units);
        expect_reference_bits<double>(p, units);
      }
    }
  }
}

// A 3-D slab's lines swept a range at a time, as workers that claim them do
// (CpuDevice), ranges of one line and of several, tiled or not.
TEST(CpuStencilSweep, LinesSweptInRangesGiveTheReferenceBits) {
  for (const std::string& name : builtin_stencil_names()) {
    const Problem p = problem_of(Stencil::builtin(name), true);
    if (p.stencil.dimension != 3) continue;
    for (const SweepBlocking& blocking : {SweepBlocking{}, SweepBlocking{8, 2, 1, 1}}) {
      for (bool streaming : {false, true}) {
        expect_reference_bits<float>(p, {1, 7, 3}, blocking, streaming, {1, 2, 6});
        expect_reference_bits<double>(p, {4, 7}, blocking, streaming, {5});
      }
    }
  }
}

TEST(CpuStencilSweep, ARangeOfLinesUpdatesThoseLinesAlone) {
  const Problem p = problem_of(Stencil::builtin("box27"), false);
  const GridShape slab = p.shape();
  const StencilTerms<double> terms = stencil_terms<double>(p.stencil, slab);
  const Grid<double> u = initial_grid<double>(p);
  std::vector<double> whole(static_cast<std::size_t>(slab.values()), -7.0);
  sweep_units(terms, slab, u.data(), whole.data(), SlabSource<double>{}, 0, p.nz);
  std::vector<double> part(whole.size(), -7.0);
  sweep_units(terms, slab, u.data(), part.data(), SlabSource<double>{}, 0, p.nz, SweepBlocking{}, false,
              SweepLines{2, 5});
  std::int64_t updated = 0;
  for (std::int64_t k = 0; k < slab.planes(); ++k) {
    for (std::int64_t i = 0; i < slab.rows(); ++i) {
      for (std::int64_t j = 0; j < slab.cols(); ++j) {
        const auto at = static_cast<std::size_t>((k * slab.rows() + i) * slab.cols() + j);
        const bool in_range = i >= slab.depth + 2 && i < slab.depth + 5;
        EXPECT_EQ(part[at], in_range ? whole[at] : -7.0) << k << " " << i << " " << j;
        if (in_range && part[at] != -7.0) ++updated;
      }
    }
  }
  EXPECT_EQ(updated, p.nz * 3 * p.nx);
}

// Chunks shorter than a row (with a ragged last one), every number of points
// per pass, tiles of one row and of all rows, one line wide and whole rows
// wide (the tile bytes and rows per radius), plain and streaming stores.
TEST(CpuStencilSweep, EveryBlockingGivesTheReferenceBits) {
  const std::vector<SweepBlocking> blockings{
      {1, 1, 1, 1}, {4, 3, 1, 0}, {5, 8, 4096, 64}, {8, 2, 1 << 20, 4}, {2048, 5, 64, 2}};
  for (const std::string& name : builtin_stencil_names()) {
    for (bool spike : {true, false}) {
      Problem p = problem_of(Stencil::builtin(name), spike);
      p.nx = 45;  // rows of several lines, cut into several tiles
      for (const SweepBlocking& blocking : blockings) {
        for (bool streaming : {false, true}) {
          expect_reference_bits<float>(p, {1, 7, 3}, blocking, streaming);
          expect_reference_bits<double>(p, {5, 6}, blocking, streaming);
        }
      }
    }
  }
}

TEST(CpuStencilSweep, RandomDescriptionsOverUnevenSplitsGiveTheReferenceBits) {
  std::mt19937 rng(21);
  std::uniform_int_distribution<int> offset(-4, 4);
  std::uniform_real_distribution<double> weight(-1.0, 1.0);
  for (int trial = 0; trial < 12; ++trial) {
    Stencil s;
    s.name = "random" + std::to_string(trial);
    s.dimension = 2 + trial % 2;
    while (s.points.size() < 9) {
      StencilPoint q{offset(rng), offset(rng), s.dimension == 3 ? offset(rng) : 0, weight(rng)};
      bool fresh = !(q.dx == 0 && q.dy == 0 && q.dz == 0);
      for (const StencilPoint& o : s.points) fresh = fresh && !(o.dx == q.dx && o.dy == q.dy && o.dz == q.dz);
      if (fresh) s.points.push_back(q);
    }
    s.diagonal = 3.0 + weight(rng);
    s.source_scale = {0.5 + weight(rng), trial % 3 != 0};
    const Problem p = problem_of(s, trial % 2 == 0);
    expect_reference_bits<float>(p, {2, 6, 3});
    expect_reference_bits<double>(p, {4, 4, 1, 2});
  }
}

}  // namespace
}  // namespace hetstencil
