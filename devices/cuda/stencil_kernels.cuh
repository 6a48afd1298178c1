// The GPU sweeps of any stencil description (core/stencil_terms.hpp). A plain
// sweep runs a kernel generated for the description and compiled at run time
// (stencil_codegen.hpp, runtime_kernel.hpp). A sweep that also folds the
// residual runs one kernel for every description: the points' offsets and
// weights travel as a kernel argument (__grid_constant__, read through the
// constant cache, the same value broadcast to a whole warp). See
// docs/stencils.md, "How GPUs run a stencil".
//
// The slab holds units of the split axis one after the other. A unit's lines
// (the row of a 2-D unit, the rows of a 3-D plane) are a pitch of a multiple
// of 32 values apart and every line's first interior cell is 128-byte
// aligned, so that each warp's loads and stores of a line are whole cache
// lines (an H100's generated 3-D sweeps ran 3-11% faster than on the grid's
// dense lines) and a generated kernel's group of cells is one aligned vector.
// A line has room after its last group of cells for the radius, and in 3-D
// for the radius rounded up to whole groups before its first (where a staged
// copy's box of the line starts): a 3-D line may be 32 values longer.
// Offsets are the slab's (stencil_terms with its pitches).
// In the table-driven kernel each warp owns one 128-cell segment of a line and walks
// along the split axis (down the rows in 2-D, across the planes of one row in
// 3-D), each lane holding 4 cells 32 apart, so that every load of the warp is
// coalesced; the lines before it are still in L1/L2 when it reads them again.
// Each cell gets the operations of StencilTerms::update in its order (its
// fused terms as fused multiply-adds, no others: the build uses -fmad=false),
// so the bits equal the CPU's. A checked sweep also
// folds the residual of the iterate it reads, in the order of
// core/residual.hpp: a segment's squares as a balanced tree (two lanes' cells
// 1..16 apart by shuffles, then the 4 cells of lane 0), the segments of a line
// in column order, the lines of a unit in row order (stencil_unit_sums).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/stencil_terms.hpp"
#include "devices/cuda/stencil_tuning.hpp"

namespace hetstencil::cuda {

/// Where a stencil's slab lives on the GPU: unit u (0-based, ghost units
/// included) at base + lead + u * unit_values, line l of it cols further.
struct StencilSlab {
  bool three_d = false;          ///< units are planes (else rows)
  std::int64_t nx = 0;           ///< interior cells of a line
  std::int64_t lines = 1;        ///< interior lines of a unit: ny in 3-D, 1 in 2-D
  std::int64_t cols = 0;         ///< values from a line to the next: a multiple of 32
  std::int64_t unit_values = 0;  ///< values from a unit to the next
  std::int64_t depth = 1;        ///< the ring's depth: the stencil's radius
  std::int64_t segments = 0;     ///< 128-cell segments of a line: ceil(nx / 128)
  std::int64_t grid_cols = 0;    ///< values of a line, ring included, as the grid has them
  std::int64_t unit_lines = 1;   ///< lines of a unit, ring included (1 in 2-D)
  std::int64_t lead = 0;         ///< values before unit 0 in a buffer

  /// The slab of `shape`'s units (rows in 2-D, planes in 3-D).
  static StencilSlab of(const GridShape& shape);
  /// Values of a buffer of `units` units, lead included.
  std::int64_t buffer_values(std::int64_t units) const { return lead + units * unit_values; }
};

/// Copies `units` units between the grid's dense layout on the host and a
/// slab's on the GPU (its unit 0), host to device or device to host as `kind`
/// says, as one 2-D copy of their lines, on `stream` (0: the legacy stream,
/// waited for). Throws CudaError with `doing`.
void copy_units(const StencilSlab& slab, std::size_t value_bytes, void* to, const void* from, std::int64_t units,
                cudaMemcpyKind kind, cudaStream_t stream, const std::string& doing);

/// One launch: units [unit_begin, unit_end) of `in` swept into `out`, the
/// residual of units [check_begin, check_end) among them folded on the way.
template <class T>
struct StencilPass {
  const T* in = nullptr;
  T* out = nullptr;               ///< nullptr: the residual alone
  const T* sf = nullptr;          ///< s*f laid out as the slab, or nullptr: zero but at the spike
  std::int64_t spike = -1;        ///< the spike's index in the slab (s*f = 1 there), or -1
  std::int64_t unit_begin = 0;
  std::int64_t unit_end = 0;
  std::int64_t check_begin = 0;   ///< no residual where check_begin == check_end
  std::int64_t check_end = 0;
  /// Per checked line (unit - check_begin) * lines + line, per segment: the
  /// segment's sum of rho^2 and largest |rho|.
  double* segment_sums = nullptr;
  double* segment_max = nullptr;
};

/// Compiles side by side the generated sweeps that `job` with each of
/// `tunings` would make on GPU `gpu` (`device`'s), where the folder of
/// compiled kernels does not hold them yet (compile_ahead): the StencilCode
/// of each then loads its kernel from disk.
void compile_sweeps_ahead(const std::string& device, const StencilJob& job, const std::vector<Tuning>& tunings, int gpu);

/// A stencil's kernels in precision T for one GPU, made once per solve.
template <class T>
class StencilCode {
 public:
  /// `stencil`'s kernels for grids of `shape` on GPU `gpu`. Where `sweep`
  /// chooses the generated sweep, it is compiled now (or found on disk);
  /// else plain sweeps run the table-driven kernel too.
  StencilCode(const Stencil& stencil, const GridShape& shape, int gpu, const SweepChoice& sweep);
  ~StencilCode();
  StencilCode(const StencilCode&) = delete;
  StencilCode& operator=(const StencilCode&) = delete;

  /// Queues `pass` on `stream` (nothing when it has no units); launch errors
  /// are the caller's to check with cudaGetLastError. Throws CudaError where
  /// the staged sweep's tensor map of `pass`'s planes cannot be made.
  void launch(const StencilSlab& slab, const StencilPass<T>& pass, cudaStream_t stream) const;

  /// Whether plain sweeps run the staged kernel (staged_codegen.hpp).
  bool staged() const;

  /// Whether launch() runs `pass` with the kernel generated for the
  /// description, else with the table-driven one.
  bool generated(const StencilSlab& slab, const StencilPass<T>& pass) const;

 private:
  struct Tables;
  struct Generated;
  std::unique_ptr<Tables> tables_;
  std::unique_ptr<Generated> generated_;
};

/// Each checked unit's sum of rho^2 (its lines' segment sums in column order,
/// the lines in order) and largest |rho|: unit_sums[k] and unit_sums[units + k].
void stencil_unit_sums(const StencilSlab& slab, const double* segment_sums, const double* segment_max,
                       std::int64_t units, double* unit_sums, cudaStream_t stream);

}  // namespace hetstencil::cuda
