// What a GPU tunes for a stencil other than poisson5 (Device::tunables), and
// the sweep a job's tuning asks for: the kernel generated for the description
// or the table-driven one, and the generated one's shape (stencil_codegen.hpp).
// No value changes a bit of a result.
#pragma once

#include <string>
#include <vector>

#include "devices/cuda/stencil_codegen.hpp"
#include "devices/device.hpp"

namespace hetstencil::cuda {

/// The plain sweep's kernel and shape.
struct SweepChoice {
  bool generated = true;  ///< the kernel made for the description, else the table-driven one
  SweepShape shape;       ///< the generated kernel's
};

/// The parameters, for a GPU that `stages` (sm_90 and later:
/// gpu_stages) or not: "generated" (1, or 0 for the table-driven kernel),
/// "shared" (1: the generated kernel tiles each unit in shared memory),
/// "warps", "columns", "units", "vector", "ahead" (units asked of L2 ahead of
/// the march), "halo" (the values beside a group loaded as vectors; where
/// halo_vector_cells has groups), and in 3-D "lines" and, where the GPU
/// stages, "staged" (1: the generated kernel, unless tiled, stages each plane
/// in shared memory with tensor copies; staged_codegen.hpp); none for a
/// variable stencil, whose sweep is its own kernel.
std::vector<Tunable> stencil_tunables(const StencilJob& job, bool stages);

/// The choice `job.tuning` makes on a GPU that `stages` or not, defaults where
/// it names nothing; throws InvalidArgument naming `device` for a value
/// stencil_tunables does not list.
SweepChoice sweep_choice(const std::string& device, const StencilJob& job, bool stages);

/// Whether GPU `gpu` stages sweeps (compute capability 9.0 or later: tensor
/// copies and their barriers). Throws CudaError naming the GPU.
bool gpu_stages(int gpu);

}  // namespace hetstencil::cuda
