// Which path the ghost rows between two neighbouring processes take: GPU to
// GPU through NCCL where both devices at the boundary are GPUs, the build has
// NCCL and the option allows it; through host memory otherwise. Every process
// decides from the same facts, so all agree without asking each other.
#pragma once

#include <string>
#include <vector>

#include "hetstencil/device_info.hpp"

namespace hetstencil {

enum class LinkPath { HostStaging, Nccl };

/// "host staging" or "nccl", as reports name them.
std::string to_string(LinkPath path);

/// Whether this build has NCCL (HETSTENCIL_NCCL).
bool nccl_built();

/// The path between the last device of one process (`upper_gpu`: a GPU) and
/// the first of the next (`lower_gpu`), under `option`, in a build that has
/// NCCL or not.
LinkPath choose_link_path(GpuTransport option, bool upper_gpu, bool lower_gpu, bool with_nccl);

/// "r0-r1 nccl, r1-r2 host staging": element r is the link between ranks r and r + 1.
std::string describe_link_paths(const std::vector<LinkPath>& paths);

}  // namespace hetstencil
