// Kernels for the GPU variants beside the synchronous sweep (the original
// study's chapter V).
//
//   blocked (deterministic temporal blocking), streamed: a warp owns a strip
//     of columns with K ghost columns a side and walks down a band of rows,
//     keeping the last rows of every one of K iterates in flight. Each row read
//     from the grid becomes iterate 1 one row behind, iterate 2 two rows behind,
//     ... iterate K K rows behind, which is written back: the bits of K plain
//     sweeps for a read and a write of the grid per K iterations. Iterate l is
//     exact on the strip but its l outer columns, and on the band but its first
//     rows, which start K rows early. Everything lives in registers: vertical
//     neighbours in a thread, horizontal ones from the next lane by shuffles.
//
// The tile variants load a tile of the grid with a ghost ring into shared
// memory and sweep it several times there before writing it back:
//
//   async2 (the study's Async 2): a ghost ring one deep, left as it was loaded;
//     alpha sweeps of the tile with block barriers only, no exchange with the
//     neighbouring tiles until the kernel ends.
//   async3 (the study's Async 3, "most wild"): one buffer updated in place
//     without barriers; the ring is read from device memory at every sweep and
//     the tile's edge cells are written there at every sweep, so tiles see each
//     other's progress whenever it lands. Not deterministic.
//
// Each thread owns one column and walks down it. Every update is the
// reference's Poisson5::update (core/stencil_update.hpp), built with
// -fmad=false like the synchronous kernel.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "devices/cuda/cuda_check.hpp"
#include "devices/cuda/jacobi_kernels.cuh"
#include "devices/cuda/stream_band.hpp"
#include "hetstencil/variant.hpp"

namespace hetstencil::cuda {

// The async tiles' shape: 128 x 32, the best of 128/256 x 16/32/64 for a tiled
// Jacobi sweep on an H100 (not tuned for the async variants themselves).
// Overridable at build time.
#ifndef HETSTENCIL_TILE_COLUMNS
#define HETSTENCIL_TILE_COLUMNS 128
#endif
#ifndef HETSTENCIL_TILE_ROWS
#define HETSTENCIL_TILE_ROWS 32
#endif
constexpr int kTileColumns = HETSTENCIL_TILE_COLUMNS;  // threads per block: one per column of tile and ghost zone
constexpr int kTileRows = HETSTENCIL_TILE_ROWS;        // rows of the tile a block writes back
constexpr int kTileHalo = 1;                           // the ghost ring around a tile

/// A whole grid on one GPU: rows 0..ny+1 of a slab of make_layout(nx).
struct TileArgs {
  SlabLayout layout;
  std::int64_t ny = 0;
  std::int64_t spike_row = -1;  // grid row and column of the spike, -1 when none
  std::int64_t spike_col = -1;
  int steps = 1;   // sweeps in this pass

  __host__ __device__ int tile_columns() const { return kTileColumns - 2 * kTileHalo; }
  __host__ __device__ int height() const { return kTileRows + 2 * kTileHalo; }
};

template <class T>
std::size_t tile_shared_bytes(const TileArgs& a, int buffers) {
  return static_cast<std::size_t>(buffers) * static_cast<std::size_t>(a.height()) * kTileColumns * sizeof(T);
}

inline dim3 tile_grid(const TileArgs& a) {
  return dim3(static_cast<unsigned>((a.layout.nx + a.tile_columns() - 1) / a.tile_columns()),
              static_cast<unsigned>((a.ny + kTileRows - 1) / kTileRows));
}

template <class T>
__device__ __forceinline__ T source_at(const T* h2f, const TileArgs& a, std::int64_t gr, std::int64_t gc) {
  if (h2f) return h2f[gr * a.layout.pitch + a.layout.offset + gc];
  return gr == a.spike_row && gc == a.spike_col ? T(1) : T(0);
}

/// async2: reads u, writes the tile's cells of the next iterate to v.
template <class T>
__global__ void __launch_bounds__(kTileColumns) tile_kernel(const T* __restrict__ u, T* __restrict__ v,
                                                            const T* __restrict__ h2f, TileArgs a) {
  extern __shared__ unsigned char shared[];
  const int W = kTileColumns;
  const int H = a.height();
  T* buffer[2] = {reinterpret_cast<T*>(shared), reinterpret_cast<T*>(shared) + H * W};
  const SlabLayout& s = a.layout;
  const int j = threadIdx.x;
  const std::int64_t gr0 = 1 + static_cast<std::int64_t>(blockIdx.y) * kTileRows - kTileHalo;
  const std::int64_t gc = 1 + static_cast<std::int64_t>(blockIdx.x) * a.tile_columns() - kTileHalo + j;
  const bool column_in_grid = gc >= 0 && gc <= s.nx + 1;
  const bool column_inside = gc >= 1 && gc <= s.nx;

  // Both buffers get the ghost zone: cells a sweep leaves alone must read the same in either.
  for (int i = 0; i < H; ++i) {
    const std::int64_t gr = gr0 + i;
    const T x = column_in_grid && gr >= 0 && gr <= a.ny + 1 ? u[gr * s.pitch + s.offset + gc] : T(0);
    buffer[0][i * W + j] = x;
    buffer[1][i * W + j] = x;
  }
  __syncthreads();

  for (int step = 1; step <= a.steps; ++step) {
    const T* src = buffer[(step - 1) & 1];
    T* dst = buffer[step & 1];
    const int lo = kTileHalo;  // rows and columns [lo, H - lo) x [lo, W - lo) are swept
    if (j >= lo && j < W - lo) {
      T north = src[(lo - 1) * W + j];
      T centre = src[lo * W + j];
      for (int i = lo; i < H - lo; ++i) {
        const T south = src[(i + 1) * W + j];
        const std::int64_t gr = gr0 + i;
        T next = centre;  // the boundary and cells outside the grid keep their values
        if (column_inside && gr >= 1 && gr <= a.ny) {
          next = Poisson5<T>::update(north, south, src[i * W + j - 1], src[i * W + j + 1], source_at(h2f, a, gr, gc));
        }
        dst[i * W + j] = next;
        north = centre;
        centre = south;
      }
    }
    __syncthreads();
  }

  const T* last = buffer[a.steps & 1];
  if (j >= kTileHalo && j < W - kTileHalo && column_inside) {
    for (int i = kTileHalo; i < kTileHalo + kTileRows; ++i) {
      const std::int64_t gr = gr0 + i;
      if (gr >= 1 && gr <= a.ny) v[gr * s.pitch + s.offset + gc] = last[i * W + j];
    }
  }
}

/// async3: u updated in place.
template <class T>
__global__ void __launch_bounds__(kTileColumns) async3_kernel(T* u, const T* __restrict__ h2f, TileArgs a) {
  static_assert(kTileHalo == 1, "the ring is rows and columns 0 and H - 1, W - 1");
  extern __shared__ unsigned char shared[];
  const int W = kTileColumns;
  const int H = a.height();
  // volatile: with no barriers, every read must go to shared (or device) memory
  // and see whatever a neighbour last stored there.
  volatile T* tile = reinterpret_cast<volatile T*>(shared);
  volatile T* grid = u;
  const SlabLayout& s = a.layout;
  const int j = threadIdx.x;
  const std::int64_t gr0 = 1 + static_cast<std::int64_t>(blockIdx.y) * kTileRows - kTileHalo;
  const std::int64_t gc = 1 + static_cast<std::int64_t>(blockIdx.x) * a.tile_columns() - kTileHalo + j;
  const bool column_in_grid = gc <= s.nx + 1;
  const bool column_inside = gc >= 1 && gc <= s.nx;
  auto at = [&](std::int64_t gr) { return gr * s.pitch + s.offset + gc; };
  auto in_grid = [&](std::int64_t gr) { return column_in_grid && gr <= a.ny + 1; };

  // Rolled loops: unrolled over the constant tile height they take 105
  // registers instead of 32, too many for the resident blocks this variant
  // hides its latency with (2.3x slower on an H100).
#pragma unroll 1
  for (int i = 0; i < H; ++i) tile[i * W + j] = in_grid(gr0 + i) ? grid[at(gr0 + i)] : T(0);
  __syncthreads();
  const bool ring_column = j == 0 || j == W - 1;
  const bool edge_column = j == 1 || j == W - 2;
  for (int step = 1; step <= a.steps; ++step) {
    // The ring as the neighbouring tiles last left it in device memory.
    if (ring_column) {
#pragma unroll 1
      for (int i = 1; i < H - 1; ++i) {
        if (in_grid(gr0 + i)) tile[i * W + j] = grid[at(gr0 + i)];
      }
    }
    if (in_grid(gr0)) tile[j] = grid[at(gr0)];
    if (in_grid(gr0 + H - 1)) tile[(H - 1) * W + j] = grid[at(gr0 + H - 1)];
    if (!ring_column && column_inside) {
#pragma unroll 1
      for (int i = 1; i < H - 1; ++i) {
        const std::int64_t gr = gr0 + i;
        if (gr < 1 || gr > a.ny) continue;
        const T x = Poisson5<T>::update(tile[(i - 1) * W + j], tile[(i + 1) * W + j], tile[i * W + j - 1],
                                       tile[i * W + j + 1], source_at(h2f, a, gr, gc));
        tile[i * W + j] = x;
        if (edge_column || i == 1 || i == H - 2) grid[at(gr)] = x;  // the tile's edge, for the neighbours
      }
    }
  }
  __syncthreads();
  if (!ring_column && column_inside) {
#pragma unroll 1
    for (int i = 1; i < H - 1; ++i) {
      const std::int64_t gr = gr0 + i;
      if (gr >= 1 && gr <= a.ny) grid[at(gr)] = tile[i * W + j];
    }
  }
}

// The streamed blocked kernel's shape: a warp owns a strip of 32 x C columns
// (ghost columns included), C of them a thread, and walks down a band of rows;
// warps never wait for each other. stream_band (stream_band.hpp) sets the
// bands' length.
template <class T>
__host__ __device__ constexpr int stream_columns_per_thread() {
  return sizeof(T) == 4 ? 4 : 2;  // the iterates in flight stay in registers
}
constexpr int kStreamWarpsPerBlock = 4;

/// Grid rows [first, end) of a pass: what it writes. It reads S rows more on
/// each side, so a pass over part of the grid gives the same bits there as one
/// over all of it.
struct PassRows {
  std::int64_t first = 1;
  std::int64_t end = 1;
  std::int64_t count() const { return end - first; }
};

/// blocked: S sweeps of the grid in `a` (rows 1..ny, columns 1..nx) from u
/// into v, written at `rows`, in bands of `band` rows.
template <class T, int S>
__global__ void __launch_bounds__(32 * kStreamWarpsPerBlock)
    stream_kernel(const T* __restrict__ u, T* __restrict__ v, const T* __restrict__ h2f, TileArgs a, PassRows rows,
                  std::int64_t band) {
  constexpr int C = stream_columns_per_thread<T>();
  constexpr int W = 32 * C;
  constexpr unsigned kWarp = 0xffffffffu;
  const SlabLayout& s = a.layout;
  const int lane = threadIdx.x & 31;
  const std::int64_t strip = static_cast<std::int64_t>(blockIdx.x) * kStreamWarpsPerBlock + (threadIdx.x >> 5);
  if (1 + strip * (W - 2 * S) > s.nx) return;  // the whole warp: a strip past the grid
  const std::int64_t c0 = 1 + strip * (W - 2 * S) - S + lane * C;  // this thread's first column
  bool in_grid[C], inside[C], writes[C];
#pragma unroll
  for (int k = 0; k < C; ++k) {
    const std::int64_t gc = c0 + k;
    in_grid[k] = gc >= 0 && gc <= s.nx + 1;
    inside[k] = gc >= 1 && gc <= s.nx;
    writes[k] = inside[k] && lane * C + k >= S && lane * C + k < W - S;  // iterate S is exact there
  }
  const std::int64_t first = rows.first + static_cast<std::int64_t>(blockIdx.y) * band;
  const std::int64_t end = first + band < rows.end ? first + band : rows.end;
  // Iterate l's rows i - l - 2 (north) and i - l - 1 (centre) when row i comes in.
  T north[S][C], centre[S][C];
#pragma unroll
  for (int l = 0; l < S; ++l) {
#pragma unroll
    for (int k = 0; k < C; ++k) north[l][k] = centre[l][k] = T(0);
  }
  for (std::int64_t i = first - S; i < end + S; ++i) {
    T x[C];
    const bool row_in_grid = i >= 0 && i <= a.ny + 1;
    const T* from = u + i * s.pitch + s.offset + c0;
#pragma unroll
    for (int k = 0; k < C; ++k) x[k] = row_in_grid && in_grid[k] ? from[k] : T(0);
#pragma unroll
    for (int l = 0; l < S; ++l) {
      // x is iterate l at row i - l; iterate l + 1 at row i - l - 1 follows.
      const std::int64_t r = i - l - 1;
      const bool row_inside = r >= 1 && r <= a.ny;
      const T west = __shfl_up_sync(kWarp, centre[l][C - 1], 1);
      const T east = __shfl_down_sync(kWarp, centre[l][0], 1);
      T next[C];
#pragma unroll
      for (int k = 0; k < C; ++k) {
        const T w = k == 0 ? west : centre[l][k - 1];
        const T e = k == C - 1 ? east : centre[l][k + 1];
        next[k] = centre[l][k];  // the boundary and cells outside the grid keep their values
        if (row_inside && inside[k]) {
          next[k] = Poisson5<T>::update(north[l][k], x[k], w, e, source_at(h2f, a, r, c0 + k));
        }
      }
#pragma unroll
      for (int k = 0; k < C; ++k) {
        north[l][k] = centre[l][k];
        centre[l][k] = x[k];
        x[k] = next[k];
      }
    }
    const std::int64_t r = i - S;  // x is iterate S there
    if (r >= first && r < end) {
      T* to = v + r * s.pitch + s.offset + c0;
#pragma unroll
      for (int k = 0; k < C; ++k) {
        if (writes[k]) to[k] = x[k];
      }
    }
  }
}

template <class T, int S>
void launch_stream(const T* u, T* v, const T* h2f, const TileArgs& a, PassRows rows, cudaStream_t stream,
                   const std::string& context) {
  constexpr int W = 32 * stream_columns_per_thread<T>();
  constexpr int kThreads = 32 * kStreamWarpsPerBlock;
  const std::int64_t strips = (a.layout.nx + W - 2 * S - 1) / (W - 2 * S);
  const std::int64_t strip_blocks = (strips + kStreamWarpsPerBlock - 1) / kStreamWarpsPerBlock;
  const int sms = multiprocessors(context);
  int per_sm = 0;
  HETSTENCIL_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, stream_kernel<T, S>, kThreads, 0),
                        context + ": sizing a blocked pass");
  const std::int64_t band = stream_band(rows.count(), strip_blocks, static_cast<std::int64_t>(sms) * per_sm, S);
  const dim3 grid(static_cast<unsigned>(strip_blocks), static_cast<unsigned>((rows.count() + band - 1) / band));
  stream_kernel<T, S><<<grid, kThreads, 0, stream>>>(u, v, h2f, a, rows, band);
}

/// blocked: `steps` (1..kMaxBlockedDepth) sweeps from u into v, written at `rows`.
template <class T>
void launch_blocked(int steps, const T* u, T* v, const T* h2f, const TileArgs& a, PassRows rows, cudaStream_t stream,
                    const std::string& context) {
  static_assert(kMaxBlockedDepth == 8, "one instance per depth");
  if (rows.count() <= 0) return;
  switch (steps) {
    case 1: launch_stream<T, 1>(u, v, h2f, a, rows, stream, context); break;
    case 2: launch_stream<T, 2>(u, v, h2f, a, rows, stream, context); break;
    case 3: launch_stream<T, 3>(u, v, h2f, a, rows, stream, context); break;
    case 4: launch_stream<T, 4>(u, v, h2f, a, rows, stream, context); break;
    case 5: launch_stream<T, 5>(u, v, h2f, a, rows, stream, context); break;
    case 6: launch_stream<T, 6>(u, v, h2f, a, rows, stream, context); break;
    case 7: launch_stream<T, 7>(u, v, h2f, a, rows, stream, context); break;
    default: launch_stream<T, 8>(u, v, h2f, a, rows, stream, context); break;
  }
}

/// Lets the tile kernels have all the shared memory a block may have on the
/// current GPU (deep ghost zones need more than the default 48 KiB); returns it.
template <class T>
int allow_tile_shared_memory(int gpu, const std::string& context) {
  int limit = 0;
  HETSTENCIL_CUDA_CHECK(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, gpu), context);
  HETSTENCIL_CUDA_CHECK(cudaFuncSetAttribute(tile_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, limit), context);
  HETSTENCIL_CUDA_CHECK(cudaFuncSetAttribute(async3_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, limit),
                        context);
  return limit;
}

/// One pass of a variant over the grid in `a` (its steps are set here):
/// `steps` sweeps. blocked and async2 read u and write v, and return true (the
/// caller swaps them); async3 updates u in place.
template <class T>
bool launch_tile_pass(const VariantChoice& c, int steps, T* u, T* v, const T* h2f, TileArgs a, int shared_limit,
                      cudaStream_t stream, const std::string& context) {
  if (c.param < 1 || c.param > max_sweeps(c.variant) || steps < 1 || steps > c.param) {
    HETSTENCIL_THROW(InvalidArgument, context + ": " + to_string(c.variant) + " with " + std::to_string(c.param) +
                                          " takes 1.." + std::to_string(max_sweeps(c.variant)) +
                                          " sweeps a pass, not " + std::to_string(steps));
  }
  if (c.variant == Variant::Blocked) {
    launch_blocked<T>(steps, u, v, h2f, a, PassRows{1, a.ny + 1}, stream, context);
    HETSTENCIL_CUDA_CHECK(cudaGetLastError(), context + ": launching a blocked pass");
    return true;
  }
  const bool in_place = c.variant == Variant::Async3;
  a.steps = steps;
  const std::size_t shared = tile_shared_bytes<T>(a, in_place ? 1 : 2);
  if (shared > static_cast<std::size_t>(shared_limit)) {
    HETSTENCIL_THROW(InvalidArgument, context + ": " + to_string(c.variant) + " with " + std::to_string(c.param) +
                                          " needs " + std::to_string(shared / 1024) + " KiB of shared memory a block; " +
                                          "it has " + std::to_string(shared_limit / 1024) + " KiB");
  }
  if (in_place) {
    async3_kernel<T><<<tile_grid(a), kTileColumns, shared, stream>>>(u, h2f, a);
  } else {
    tile_kernel<T><<<tile_grid(a), kTileColumns, shared, stream>>>(u, v, h2f, a);
  }
  HETSTENCIL_CUDA_CHECK(cudaGetLastError(), context + ": launching a " + to_string(c.variant) + " pass");
  return !in_place;
}

}  // namespace hetstencil::cuda
