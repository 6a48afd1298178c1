// Which path the ghost rows between two neighbouring processes take where both
// devices at the boundary are GPUs and the option allows: GPU to GPU through
// NCCL where the build has it, else by MPI messages of GPU memory where both
// processes' MPI is CUDA-aware; through host memory otherwise. Every process
// decides from the same facts, so all agree.
#pragma once

#include <string>
#include <vector>

#include "hetstencil/device_info.hpp"

namespace hetstencil {

enum class LinkPath { HostStaging, Nccl, CudaAwareMpi };

/// "host staging", "nccl" or "cuda-aware mpi", as reports name them.
std::string to_string(LinkPath path);

/// Whether this build has NCCL (HETSTENCIL_NCCL).
bool nccl_built();

/// The path between the last device of one process (`upper_gpu`: a GPU) and
/// the first of the next (`lower_gpu`), under `option`, in a build that has
/// NCCL or not, between processes whose MPI is both CUDA-aware or not.
LinkPath choose_link_path(GpuTransport option, bool upper_gpu, bool lower_gpu, bool with_nccl, bool cuda_aware);

/// "r0-r1 nccl, r1-r2 host staging": element r is the link between ranks r and r + 1.
std::string describe_link_paths(const std::vector<LinkPath>& paths);

}  // namespace hetstencil
