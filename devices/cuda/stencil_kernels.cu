#include "devices/cuda/stencil_kernels.cuh"

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "core/log.hpp"
#include "core/quotient.hpp"
#include "core/residual.hpp"
#include "devices/cuda/cuda_check.hpp"
#include "devices/cuda/runtime_kernel.hpp"
#include "devices/cuda/staged_codegen.hpp"
#include "devices/cuda/staged_march.hpp"
#include "devices/cuda/tensor_map.hpp"
#include "devices/cuda/segment_residual.cuh"
#include "hetstencil/stencil.hpp"

namespace hetstencil::cuda {
namespace {

constexpr int kLanes = 32;
constexpr int kCells = 4;                    // cells per lane, kLanes apart
constexpr int kSegmentCells = kLanes * kCells;  // core/residual.hpp's segment
constexpr int kWarps = 4;                    // lines side by side in a block
// Units each warp walks along the split axis: in 3-D long enough that the 2r
// planes a walk reads beyond its own are few (r = 4: a quarter more).
constexpr int kWalkRows = 8;
constexpr int kWalkPlanes = 32;

// Every point a description may have (radius 4 in 3 axes), and what the
// built-ins and most descriptions fit in: a smaller argument to copy per launch.
constexpr int kMostPoints = (2 * kMaxStencilRadius + 1) * (2 * kMaxStencilRadius + 1) * (2 * kMaxStencilRadius + 1);
constexpr int kFewPoints = 32;

template <class T, int Capacity>
struct PointTable {
  int count = 0;
  Quotient<T> quotient;  // by the diagonal
  std::int64_t offset[Capacity];
  T weight[Capacity];
};

// The lines a block's warps walk: in 2-D, kWarps x kWalkRows consecutive units
// a chunk, each warp kWalkRows of them; in 3-D, kWarps neighbouring rows
// (blockIdx.y) across kWalkPlanes planes a chunk. Chunks beyond the grid's
// are taken in strides.
template <class T, int Capacity, bool Update, bool Residual>
__global__ void __launch_bounds__(kLanes * kWarps)
    stencil_kernel(const __grid_constant__ PointTable<T, Capacity> table, const StencilSlab slab,
                   const __grid_constant__ StencilPass<T> pass, std::int64_t chunks) {
  const int lane = static_cast<int>(threadIdx.x);
  const int warp = static_cast<int>(threadIdx.y);
  const bool three_d = slab.three_d;
  const std::int64_t line = three_d ? static_cast<std::int64_t>(blockIdx.y) * kWarps + warp : 0;
  if (line >= slab.lines) return;  // the whole warp
  const std::int64_t x = static_cast<std::int64_t>(blockIdx.x) * kSegmentCells + lane;
  bool valid[kCells];
#pragma unroll
  for (int c = 0; c < kCells; ++c) valid[c] = x + c * kLanes < slab.nx;
  const T diagonal = table.quotient.divisor;
  for (std::int64_t chunk = three_d ? blockIdx.z : blockIdx.y; chunk < chunks; chunk += three_d ? gridDim.z : gridDim.y) {
    const std::int64_t first =
        pass.unit_begin + (three_d ? chunk * kWalkPlanes : (chunk * kWarps + warp) * kWalkRows);
    const int walk = three_d ? kWalkPlanes : kWalkRows;
    for (int step = 0; step < walk; ++step) {
      const std::int64_t unit = first + step;
      if (unit >= pass.unit_end) break;  // the whole warp
      const std::int64_t at = unit * slab.unit_values + (three_d ? (slab.depth + line) * slab.cols : 0) + slab.depth + x;
      const T* p = pass.in + at;
      T sum[kCells];
      {
        const std::int64_t o = table.offset[0];
        const T w = table.weight[0];
#pragma unroll
        for (int c = 0; c < kCells; ++c) sum[c] = valid[c] ? w * p[o + c * kLanes] : T(0);
      }
      // Unrolled so that several points' loads are in flight; the sum stays in order.
#pragma unroll 4
      for (int k = 1; k < table.count; ++k) {
        const std::int64_t o = table.offset[k];
        const T w = table.weight[k];
#pragma unroll
        for (int c = 0; c < kCells; ++c) {
          if (valid[c]) sum[c] = add_term(sum[c], w, p[o + c * kLanes]);
        }
      }
      T sf[kCells];
#pragma unroll
      for (int c = 0; c < kCells; ++c) {
        const std::int64_t cell = at + c * kLanes;
        sf[c] = !valid[c] ? T(0) : pass.sf ? pass.sf[cell] : cell == pass.spike ? T(1) : T(0);
      }
      if (Update) {
#pragma unroll
        for (int c = 0; c < kCells; ++c) {
          if (valid[c]) pass.out[at + c * kLanes] = table.quotient(sum[c] + sf[c]);
        }
      }
      if (Residual && unit >= pass.check_begin && unit < pass.check_end) {
        static_assert(kLanes == 32 && kCells == 4, "store_segment_residual's segment");
        T rho[kCells];
#pragma unroll
        for (int c = 0; c < kCells; ++c) rho[c] = valid[c] ? T(sf[c] - (diagonal * p[c * kLanes] - sum[c])) : T(0);
        const std::int64_t k = ((unit - pass.check_begin) * slab.lines + line) * slab.segments + blockIdx.x;
        store_segment_residual(rho, lane, k, pass.segment_sums, pass.segment_max);
      }
    }
  }
}

__global__ void unit_sums_kernel(const StencilSlab slab, const double* __restrict__ segment_sums,
                                 const double* __restrict__ segment_max, std::int64_t units,
                                 double* __restrict__ unit_sums) {
  const std::int64_t u = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (u >= units) return;
  double total = 0.0, largest = 0.0;
  for (std::int64_t line = 0; line < slab.lines; ++line) {
    const std::int64_t first = (u * slab.lines + line) * slab.segments;
    // core/residual.hpp's order: the segments in groups, the groups in order.
    double row = 0.0, group = 0.0;
    for (std::int64_t s = 0; s < slab.segments; ++s) {
      group += segment_sums[first + s];
      largest = fmax(largest, segment_max[first + s]);
      if (s % kResidualGroup == kResidualGroup - 1 || s == slab.segments - 1) {
        row += group;
        group = 0.0;
      }
    }
    total += row;
  }
  unit_sums[u] = total;
  unit_sums[units + u] = largest;
}

template <class T, int Capacity, bool Update, bool Residual>
void launch_with(const PointTable<T, Capacity>& table, const StencilSlab& slab, const StencilPass<T>& pass,
                 cudaStream_t stream) {
  const std::int64_t units = pass.unit_end - pass.unit_begin;
  const bool three_d = slab.three_d;
  const std::int64_t per_chunk = three_d ? kWalkPlanes : kWarps * kWalkRows;
  const std::int64_t chunks = (units + per_chunk - 1) / per_chunk;
  const std::int64_t most = 65535;
  dim3 grid(static_cast<unsigned>(slab.segments), 1, 1);
  if (three_d) {
    grid.y = static_cast<unsigned>((slab.lines + kWarps - 1) / kWarps);
    grid.z = static_cast<unsigned>(std::min(chunks, most));
  } else {
    grid.y = static_cast<unsigned>(std::min(chunks, most));
  }
  stencil_kernel<T, Capacity, Update, Residual><<<grid, dim3(kLanes, kWarps), 0, stream>>>(table, slab, pass, chunks);
}

template <class T, int Capacity>
void launch_table(const PointTable<T, Capacity>& table, const StencilSlab& slab, const StencilPass<T>& pass,
                  cudaStream_t stream) {
  const bool residual = pass.check_end > pass.check_begin;
  if (!pass.out) {
    launch_with<T, Capacity, false, true>(table, slab, pass, stream);
  } else if (residual) {
    launch_with<T, Capacity, true, true>(table, slab, pass, stream);
  } else {
    launch_with<T, Capacity, true, false>(table, slab, pass, stream);
  }
}

template <class T, int Capacity>
void fill(PointTable<T, Capacity>& table, const StencilTerms<T>& terms) {
  table.count = static_cast<int>(terms.offsets.size());
  table.quotient = Quotient<T>::by(terms.diagonal);
  for (int k = 0; k < table.count; ++k) {
    table.offset[k] = terms.offsets[static_cast<std::size_t>(k)];
    table.weight[k] = terms.weights[static_cast<std::size_t>(k)];
  }
}

}  // namespace

StencilSlab StencilSlab::of(const GridShape& shape) {
  StencilSlab s;
  s.three_d = shape.dimension() == 3;
  s.nx = shape.nx;
  s.lines = shape.dimension() == 3 ? shape.ny : 1;
  s.grid_cols = shape.cols();
  s.depth = shape.depth;
  s.segments = (shape.nx + kSegmentCells - 1) / kSegmentCells;
  // Every line's first interior cell on 128 bytes of floats (a warp's loads
  // and stores whole cache lines, a group's cells one aligned vector), and
  // room in the line for the values beside its last group of cells; in 3-D,
  // for the ring before it rounded up to whole groups (a staged copy's box of
  // a line starts that far before its first cell: StagedRing::lead_x).
  constexpr std::int64_t kAligned = 32;
  const std::int64_t before = s.three_d ? (shape.depth + kMostVectorCells - 1) / kMostVectorCells * kMostVectorCells : shape.depth;
  const std::int64_t widest = (shape.nx + kMostVectorCells - 1) / kMostVectorCells * kMostVectorCells + shape.depth + before;
  s.cols = (widest + kAligned - 1) / kAligned * kAligned;
  s.lead = kAligned - shape.depth;
  s.unit_lines = s.three_d ? shape.rows() : 1;
  s.unit_values = s.unit_lines * s.cols;
  return s;
}

void copy_units(const StencilSlab& slab, std::size_t value_bytes, void* to, const void* from, std::int64_t units,
                cudaMemcpyKind kind, cudaStream_t stream, const std::string& doing) {
  if (units <= 0) return;
  const bool to_slab = kind == cudaMemcpyHostToDevice;
  const std::size_t slab_pitch = static_cast<std::size_t>(slab.cols) * value_bytes;
  const std::size_t grid_pitch = static_cast<std::size_t>(slab.grid_cols) * value_bytes;
  if (slab_pitch == grid_pitch) {
    HETSTENCIL_CUDA_CHECK(cudaMemcpyAsync(to, from, static_cast<std::size_t>(units * slab.unit_values) * value_bytes, kind, stream), doing);
  } else {
    HETSTENCIL_CUDA_CHECK(cudaMemcpy2DAsync(to, to_slab ? slab_pitch : grid_pitch, from, to_slab ? grid_pitch : slab_pitch,
                                            grid_pitch, static_cast<std::size_t>(units * slab.unit_lines), kind, stream),
                          doing);
  }
  if (stream == nullptr) HETSTENCIL_CUDA_CHECK(cudaStreamSynchronize(nullptr), doing);
}

// Descriptions of up to kFewPoints points launch with the small table; the
// large one is made only for those with more.
template <class T>
struct StencilCode<T>::Tables {
  PointTable<T, kFewPoints> few;
  std::unique_ptr<PointTable<T, kMostPoints>> most;
};

// The sweep generated for the description, and how it is laid out.
template <class T>
struct StencilCode<T>::Generated {
  SweepShape shape;
  SweepLayout layout;  // the sizes a 3-D register or staged kernel has as constants
  bool tiled;          // in shared memory (tiled_in_shared)
  bool staged;         // staged in shared memory (staged_in_shared), else in registers
  StagedRing ring;     // the staged kernel's
  int radius;
  int gpu;
  RuntimeKernel kernel;
  std::int64_t resident = 0;  // the staged kernel's blocks the GPU holds at once

  // Whether it sweeps `pass`: a plain sweep, in 3-D of planes with at least
  // the lines a thread updates unless it tiles or stages them in shared memory.
  bool takes(const StencilSlab& slab, const StencilPass<T>& pass) const {
    const bool laid_out = slab.nx == layout.nx && slab.lines == layout.lines && slab.cols == layout.cols &&
                          slab.unit_values == layout.unit_values && slab.depth == layout.depth;
    return laid_out && pass.out && pass.check_end <= pass.check_begin &&
           (!slab.three_d || tiled || staged || slab.lines >= shape.lines) && aligned(slab, pass);
  }

  // Whether each line's first interior cell of `pass`'s buffers is where a
  // group's vector may be loaded from (StencilSlab puts it there), and for
  // the staged kernel where its copies' boxes may start.
  bool aligned(const StencilSlab& slab, const StencilPass<T>& pass) const {
    if (tiled || (shape.vector == 1 && !staged)) return true;
    const std::uintptr_t bytes = staged ? 16 : std::min<std::uintptr_t>(16, shape.vector * sizeof(T));
    const auto at = [&](const T* p) { return p == nullptr || reinterpret_cast<std::uintptr_t>(p + slab.depth) % bytes == 0; };
    return at(pass.in) && at(pass.out) && at(pass.sf);
  }

  void launch(const StencilSlab& slab, const StencilPass<T>& pass, cudaStream_t stream) const {
    using i64 = long long;
    const i64 units = pass.unit_end - pass.unit_begin;
    const i64 most = 65535;
    const i64 lines_per_block = static_cast<i64>(shape.warps) * shape.lines;
    // The cells of a line a warp updates.
    const i64 row_cells = 32 * (staged ? shape.vector : static_cast<i64>(shape.columns) * (tiled ? 1 : shape.vector));
    // A 3-D unit's tiles: along the line, and across its lines.
    const i64 tiles_x = (slab.nx + row_cells - 1) / row_cells;
    const i64 tiles_y = (slab.lines + lines_per_block - 1) / lines_per_block;
    i64 per_block = shape.units;
    if (staged) {
      // Marches that fill the GPU's block slots in whole waves: a slab of few
      // planes (a GPU's share of a split) would leave SMs idle at the
      // default's 128 planes.
      per_block = staged_march(units, tiles_x * tiles_y, resident, shape.units, radius);
    }
    per_block = std::max<i64>(per_block, (units + most - 1) / most);
    const i64 chunks = (units + per_block - 1) / per_block;
    dim3 grid;
    if (slab.three_d) {
      grid = dim3(static_cast<unsigned>(tiles_x), static_cast<unsigned>(tiles_y), static_cast<unsigned>(chunks));
    } else {
      const i64 block_cols = static_cast<i64>(shape.warps) * row_cells;
      grid = dim3(static_cast<unsigned>((slab.nx + block_cols - 1) / block_cols), static_cast<unsigned>(chunks));
    }
    const T* in = pass.in;
    T* out = pass.out;
    const T* sf = pass.sf;
    i64 spike = pass.spike, begin = pass.unit_begin, end = pass.unit_end, nx = slab.nx, lines = slab.lines,
        cols = slab.cols, unit_values = slab.unit_values, depth = slab.depth;
    // The staged kernel's copies read the planes the pass reaches, each box
    // from lead_x values before its tile's first cell, each line up to its end.
    TensorMapBytes planes{};
    if (staged) {
      const i64 from_first = slab.cols - std::max<i64>(0, depth - ring.lead_x);
      planes = planes_map(in + depth - ring.lead_x, sizeof(T), from_first, slab.cols, slab.unit_lines, slab.unit_values,
                          end + radius, ring.box_x, ring.box_y, gpu);
    }
    void* args[] = {&in, &out, &sf, &spike, &begin, &end, &per_block, &nx, &lines, &cols, &unit_values, &depth, planes.data()};
    const unsigned threads_y = static_cast<unsigned>(shape.warps) + (staged ? 1 : 0);
    // Its error is the caller's to check, as a <<<>>> launch's: cudaGetLastError.
    (void)cudaLaunchKernel(kernel.function(), grid, dim3(32, threads_y), args, staged ? ring.bytes : 0, stream);
  }
};

namespace {

// The sizes of `slab` that the generated sweep has as constants.
SweepLayout layout_of(const StencilSlab& slab) {
  return {slab.nx, slab.lines, slab.cols, slab.unit_values, slab.depth};
}

std::string sweep_what(const Stencil& stencil, Precision precision) {
  return "the sweep of the stencil '" + stencil.name + "' in " + to_string(precision);
}

// `shape`, or, where it stages a ring larger than a block of GPU `gpu` may
// have in shared memory (large tiles in double), `shape` from registers.
SweepShape runnable(const Stencil& stencil, Precision precision, SweepShape shape, int gpu) {
  if (!staged_in_shared(stencil, precision, shape)) return shape;
  int most = 0;
  HETSTENCIL_CUDA_CHECK(cudaDeviceGetAttribute(&most, cudaDevAttrMaxSharedMemoryPerBlockOptin, gpu),
                        "gpu" + std::to_string(gpu) + ": asking the shared memory a block may have");
  const std::size_t bytes = StagedRing::of(stencil, precision, shape).bytes;
  if (bytes <= static_cast<std::size_t>(most)) return shape;
  log::info("gpu{}: the staged sweep of '{}' at this shape needs {} bytes of shared memory a block, more than its {}; it sweeps from registers",
            gpu, stencil.name, bytes, most);
  shape.staged = false;
  return shape;
}

}  // namespace

void compile_sweeps_ahead(const std::string& device, const StencilJob& job, const std::vector<Tuning>& tunings, int gpu) {
  const SweepLayout layout = layout_of(StencilSlab::of(job.shape()));
  const bool stages = gpu_stages(gpu);
  std::vector<std::string> sources;
  for (const Tuning& tuning : tunings) {
    StencilJob tuned = job;
    tuned.tuning = tuning;
    const SweepChoice choice = sweep_choice(device, tuned, stages);
    if (!choice.generated) continue;
    const SweepShape shape = runnable(job.stencil, job.precision, choice.shape, gpu);
    sources.push_back(sweep_kernel_source(job.stencil, job.precision, shape, &layout));
  }
  compile_ahead(sources, gpu, sweep_what(job.stencil, job.precision));
}

template <class T>
StencilCode<T>::StencilCode(const Stencil& stencil, const GridShape& shape, int gpu, const SweepChoice& sweep)
    : tables_(std::make_unique<Tables>()) {
  const StencilSlab slab = StencilSlab::of(shape);
  if (sweep.generated) {
    const Precision precision = std::is_same_v<T, float> ? Precision::Float : Precision::Double;
    const std::string what = sweep_what(stencil, precision);
    try {
      const SweepLayout layout = layout_of(slab);
      const SweepShape made = runnable(stencil, precision, sweep.shape, gpu);
      const bool staged = staged_in_shared(stencil, precision, made);
      if (staged) check_tensor_maps(gpu);
      auto kernel = std::unique_ptr<Generated>(new Generated{
          made, layout, tiled_in_shared(stencil, precision, made), staged, StagedRing::of(stencil, precision, made),
          stencil.radius(), gpu, RuntimeKernel(sweep_kernel_source(stencil, precision, made, &layout), kSweepEntry, gpu, what)});
      if (staged) {
        HETSTENCIL_CUDA_CHECK(cudaFuncSetAttribute(kernel->kernel.function(), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                   static_cast<int>(kernel->ring.bytes)),
                              "gpu" + std::to_string(gpu) + ": giving " + what + " its shared memory");
        int per_sm = 0, sms = 0;
        HETSTENCIL_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel->kernel.function(), kernel->ring.threads,
                                                                            kernel->ring.bytes),
                              "gpu" + std::to_string(gpu) + ": asking how many blocks of " + what + " an SM holds");
        HETSTENCIL_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, gpu),
                              "gpu" + std::to_string(gpu) + ": asking its SMs");
        kernel->resident = static_cast<std::int64_t>(per_sm) * sms;
      }
      generated_ = std::move(kernel);
    } catch (const CudaError& e) {
      // The table-driven kernel gives the same bits, more slowly.
      log::warn("{}; its plain sweeps run the table-driven kernel", e.what());
    }
  }
  const StencilTerms<T> terms = stencil_terms<T>(stencil, slab.cols, slab.unit_values);
  if (terms.offsets.size() <= static_cast<std::size_t>(kFewPoints)) {
    fill(tables_->few, terms);
  } else {
    tables_->most = std::make_unique<PointTable<T, kMostPoints>>();
    fill(*tables_->most, terms);
  }
}

template <class T>
StencilCode<T>::~StencilCode() = default;

template <class T>
bool StencilCode<T>::staged() const {
  return generated_ && generated_->staged;
}

template <class T>
bool StencilCode<T>::generated(const StencilSlab& slab, const StencilPass<T>& pass) const {
  return generated_ && generated_->takes(slab, pass);
}

template <class T>
void StencilCode<T>::launch(const StencilSlab& slab, const StencilPass<T>& pass, cudaStream_t stream) const {
  if (pass.unit_end <= pass.unit_begin || slab.nx <= 0) return;
  if (generated(slab, pass)) {
    generated_->launch(slab, pass, stream);
  } else if (tables_->most) {
    launch_table(*tables_->most, slab, pass, stream);
  } else {
    launch_table(tables_->few, slab, pass, stream);
  }
}

template class StencilCode<float>;
template class StencilCode<double>;

void stencil_unit_sums(const StencilSlab& slab, const double* segment_sums, const double* segment_max,
                       std::int64_t units, double* unit_sums, cudaStream_t stream) {
  if (units <= 0) return;
  unit_sums_kernel<<<static_cast<unsigned>((units + 127) / 128), 128, 0, stream>>>(slab, segment_sums, segment_max,
                                                                                   units, unit_sums);
}

}  // namespace hetstencil::cuda
