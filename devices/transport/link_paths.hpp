// Which path the ghost rows between two neighbouring processes take where both
// devices at the boundary are GPUs and the option allows: on one node, each
// GPU copying from the other's memory (CUDA IPC, where both can open it: else
// as between nodes); between nodes, GPU to GPU through NCCL where the build
// has it, else by MPI messages of GPU memory where both processes' MPI is
// CUDA-aware; through host memory otherwise. Every process decides from the
// same facts, so all agree.
#pragma once

#include <string>
#include <vector>

#include "hetstencil/device_info.hpp"

namespace hetstencil {

enum class LinkPath { HostStaging, Nccl, CudaAwareMpi, CudaIpc };

/// "host staging", "nccl", "cuda-aware mpi" or "cuda ipc", as reports name them.
std::string to_string(LinkPath path);

/// Whether this build has NCCL (HETSTENCIL_NCCL).
bool nccl_built();
/// Whether GPU memory may cross a link between processes in this build: it
/// has a GPU backend (CUDA IPC), NCCL, or an MPI that may be CUDA-aware.
/// Where not, every link is host staging, as every process knows unasked.
bool gpu_links_built();

/// The path between the last device of one process (`upper_gpu`: a GPU) and
/// the first of the next (`lower_gpu`), under `option`, in a build that has
/// NCCL or not, between processes whose MPI is both CUDA-aware or not, on
/// one node or not.
LinkPath choose_link_path(GpuTransport option, bool upper_gpu, bool lower_gpu, bool with_nccl, bool cuda_aware,
                          bool one_node);

/// What a process tells the others about the devices at its boundaries:
/// whether its first and last are GPUs, which (node and PCI bus id, which
/// name a GPU whatever devices each process sees), and whether its MPI is
/// CUDA-aware.
struct ProcessBoundary {
  bool top_gpu = false;
  bool bottom_gpu = false;
  bool cuda_aware = false;
  std::string top_id;     ///< the PCI bus id of its first device, if a GPU
  std::string bottom_id;  ///< of its last
  std::string node;       ///< its host's name
};

/// One line of text, and back (what all_gather carries).
std::string to_text(const ProcessBoundary& boundary);
ProcessBoundary boundary_from_text(const std::string& text);

/// Element r: the path between processes r and r + 1 (`processes` by rank).
/// Two processes sharing one GPU at their boundary (same node, same PCI bus
/// id) stage through host memory. A CUDA IPC link is a candidate: the
/// transport opens it, and one that cannot be opened takes
/// choose_link_path's path between nodes.
std::vector<LinkPath> choose_link_paths(GpuTransport option, const std::vector<ProcessBoundary>& processes,
                                        bool with_nccl);

/// The paths once the CUDA IPC links among `paths` have been opened: `why[r]`
/// says why link r's memory could not be opened at one end or both ("" where
/// it opened); `why` has an element a link, `processes` one more. Such a link
/// takes choose_link_path's path between nodes; under GpuTransport::Ipc,
/// InvalidArgument names why.
std::vector<LinkPath> paths_after_opening(GpuTransport option, std::vector<LinkPath> paths,
                                          const std::vector<std::string>& why,
                                          const std::vector<ProcessBoundary>& processes, bool with_nccl);

/// "r0-r1 nccl, r1-r2 host staging": element r is the link between ranks r and r + 1.
std::string describe_link_paths(const std::vector<LinkPath>& paths);

}  // namespace hetstencil
