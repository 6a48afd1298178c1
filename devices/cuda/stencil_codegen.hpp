// CUDA C++ source of a sweep kernel made for one stencil description, compiled
// at run time (devices/cuda/runtime_kernel.hpp). The description's points and
// weights are constants of the code, so the compiler sees every load: each
// thread keeps the values its cells share in registers (the lines of its own
// cells, and the units it marches through along the split axis), and loads
// each value of the grid about once, or a block loads its tile of each unit
// and the tile's halo into shared memory once (SweepShape::shared); it
// divides by the diagonal as core/quotient.hpp does. See docs/stencils.md,
// "How GPUs run a stencil".
#pragma once

#include <string>
#include <vector>

#include "hetstencil/problem.hpp"
#include "hetstencil/stencil.hpp"

namespace hetstencil::cuda {

/// How a generated kernel lays its threads over the slab: what a tuner may vary.
struct SweepShape {
  int warps = 4;    ///< warps of a block: side by side along x in 2-D, along the lines (y) in 3-D
  int columns = 1;  ///< groups of cells each thread updates along x, 32 x vector cells apart (more loads in flight)
  int lines = 4;    ///< 3-D: neighbouring lines each thread updates (their shared values stay in registers); 1 in 2-D
  int units = 32;   ///< units (rows in 2-D, planes in 3-D) a block marches through; a launch parameter
  /// Whether a block's tile of each unit goes through shared memory (neighbours
  /// within a unit loaded once a block), else every value stays in the registers
  /// of the threads that read it (loaded once a thread).
  bool shared = false;
  /// Register kernel: cells side by side along x in a group, loaded and
  /// stored as aligned vectors (1, 2 or kMostVectorCells), their neighbours
  /// along the line read one by one (but see `halo`); the tiled kernel updates
  /// one cell a group.
  int vector = 1;
  /// Units beyond the next that the march asks L2 to fetch for a thread's own
  /// lines (0: none): more bytes in flight than its registers hold, where too
  /// few warps fit an SM to hide the memory's latency with their loads alone.
  int ahead = 0;
  /// Register kernel: the values beside a group along the line loaded as
  /// aligned vectors where a whole vector lies within the stencil's reach
  /// along the line and the thread reads two or more of its values (groups of
  /// halo_vector_cells).
  bool halo = false;
  /// 3-D, not tiled (`shared` false): whether a block's tile of each plane and
  /// the values its points reach beside it are copied into shared memory by
  /// the GPU's tensor copies, planes ahead (staged_codegen.hpp; sm_90 and
  /// later), `vector` cells a group, one group a thread on each of its lines;
  /// else every value stays in registers.
  bool staged = false;

  /// The shape used unless tuned. Measured on an H100 and an H200 (bench
  /// stencils and the tuner, float and double, 16384^2 and 512^3;
  /// docs/stencils.md): in 2-D, 2 warps of 2 columns over 4 rows (from radius
  /// 2, 1 column over 8 rows); in 3-D, 4 warps of 4 lines, tiled in shared
  /// memory over 32 planes where the radius is 3 or more in double, else from
  /// registers over 8 planes with 2 planes asked of L2 ahead (poisson7-like
  /// stencils in float: over 4 planes, none ahead); groups of 16
  /// bytes of cells (half that from radius 2 in 3-D). From radius 3 in 3-D,
  /// where the GPU `stages` (sm_90 and later), the staged kernel instead: 4
  /// warps of 4 lines of 16-byte groups over 128 planes.
  static SweepShape default_for(const Stencil& stencil, Precision precision, bool stages = true);

  bool operator==(const SweepShape& o) const {
    return warps == o.warps && columns == o.columns && lines == o.lines && units == o.units && shared == o.shared &&
           vector == o.vector && ahead == o.ahead && halo == o.halo && staged == o.staged;
  }
};

/// The most cells a group of SweepShape::vector holds.
constexpr int kMostVectorCells = 4;

/// The groups of cells (SweepShape::vector) with which SweepShape::halo
/// changes the register kernel of `stencil`: those no wider than its reach
/// along the line (none for a reach of 1).
std::vector<int> halo_vector_cells(const Stencil& stencil);

/// The sizes of the slab a kernel sweeps (StencilSlab's), in values.
struct SweepLayout {
  long long nx = 0;
  long long lines = 1;
  long long cols = 0;
  long long unit_values = 0;
  long long depth = 1;
};

/// Whether the kernel sweep_kernel_source makes for `shape` tiles its units in
/// shared memory: `shape.shared`, and the ring of units its tile keeps there
/// fits a block's 48 KB of static shared memory. Else every value stays in
/// registers, in groups of `shape.vector` cells.
bool tiled_in_shared(const Stencil& stencil, Precision precision, const SweepShape& shape);

/// Whether sweep_kernel_source makes the staged kernel for `shape`: a 3-D
/// stencil's, `shape.staged`, and not tiled in shared memory.
bool staged_in_shared(const Stencil& stencil, Precision precision, const SweepShape& shape);

/// The kernel's entry point in the generated source (extern "C").
constexpr const char* kSweepEntry = "hetstencil_sweep";

/// The source of a kernel that sweeps units [unit_begin, unit_end) of a slab
/// laid out as StencilSlab says, with the operations of StencilTerms::update
/// in the description's order, each term after the first a fused multiply-add
/// (so the bits are the reference's when compiled with no other multiply-add
/// contracted, --fmad=false). Its parameters, in order: const T* in, T* out,
/// const T* sf (or null: zero but at the spike), long long spike, unit_begin,
/// unit_end, units_per_block, nx, lines, cols, unit_values, depth. Given a
/// `layout`, a 3-D kernel that keeps its values in registers has those sizes
/// as constants (its offsets become immediates: on an H100, 512^3 float,
/// poisson7 swept in 1.18 of a copy's time against 1.31, box27 1.37 against
/// 1.58) and sweeps slabs of that layout alone; it reads the parameters otherwise.
/// Throws InvalidArgument for groups (SweepShape::vector) of other than 1, 2
/// or kMostVectorCells cells.
std::string sweep_kernel_source(const Stencil& stencil, Precision precision, const SweepShape& shape,
                                const SweepLayout* layout = nullptr);

}  // namespace hetstencil::cuda
