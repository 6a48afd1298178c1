#include "devices/transport/link_paths.hpp"

#include <sstream>

#include "devices/backend.hpp"
#include "devices/transport/processes.hpp"
#include "devices/transport/transport.hpp"
#include "hetstencil/error.hpp"

namespace hetstencil {

std::string to_string(LinkPath path) {
  switch (path) {
    case LinkPath::Nccl:
      return "nccl";
    case LinkPath::CudaAwareMpi:
      return "cuda-aware mpi";
    case LinkPath::CudaIpc:
      return "cuda ipc";
    case LinkPath::HostStaging:
      break;
  }
  return "host staging";
}

bool gpu_links_built() { return backend_of(DeviceKind::Gpu) || nccl_built() || cuda_aware_mpi_built(); }

void check_gpu_transport(GpuTransport option) {
  if (option == GpuTransport::Nccl && !nccl_built()) {
    HETSTENCIL_THROW(InvalidArgument, "the GPU transport nccl was asked for, but this hetstencil was built without "
                                      "NCCL (HETSTENCIL_NCCL=OFF): choose auto, ipc or host");
  }
}

LinkPath choose_link_path(GpuTransport option, bool upper_gpu, bool lower_gpu, bool with_nccl, bool cuda_aware,
                          bool one_node) {
  if (!upper_gpu || !lower_gpu || option == GpuTransport::Host) return LinkPath::HostStaging;
  if (one_node && option != GpuTransport::Nccl) return LinkPath::CudaIpc;
  if (with_nccl) return LinkPath::Nccl;
  return cuda_aware && option != GpuTransport::Nccl ? LinkPath::CudaAwareMpi : LinkPath::HostStaging;
}

namespace {

// An id in a line of words: "-" for none.
std::string word(const std::string& id) { return id.empty() ? "-" : id; }
std::string id_of(const std::string& word) { return word == "-" ? "" : word; }

}  // namespace

std::string to_text(const ProcessBoundary& b) {
  return std::to_string(b.top_gpu) + " " + std::to_string(b.bottom_gpu) + " " + std::to_string(b.cuda_aware) + " " +
         word(b.top_id) + " " + word(b.bottom_id) + " " + b.node;
}

ProcessBoundary boundary_from_text(const std::string& text) {
  ProcessBoundary b;
  std::istringstream in(text);
  if (!(in >> b.top_gpu >> b.bottom_gpu >> b.cuda_aware >> b.top_id >> b.bottom_id)) {
    HETSTENCIL_THROW(Error, "a process described its boundary devices as '" + text + "'");
  }
  b.top_id = id_of(b.top_id);
  b.bottom_id = id_of(b.bottom_id);
  std::getline(in >> std::ws, b.node);
  return b;
}

std::vector<LinkPath> choose_link_paths(GpuTransport option, const std::vector<ProcessBoundary>& processes,
                                        bool with_nccl) {
  std::vector<LinkPath> paths;
  for (std::size_t r = 0; r + 1 < processes.size(); ++r) {
    const ProcessBoundary& upper = processes[r];
    const ProcessBoundary& lower = processes[r + 1];
    const bool one_gpu = upper.node == lower.node && !upper.bottom_id.empty() && upper.bottom_id == lower.top_id;
    paths.push_back(choose_link_path(option, upper.bottom_gpu, lower.top_gpu && !one_gpu, with_nccl,
                                     upper.cuda_aware && lower.cuda_aware, upper.node == lower.node));
  }
  return paths;
}

std::vector<LinkPath> paths_after_opening(GpuTransport option, std::vector<LinkPath> paths,
                                          const std::vector<std::string>& why,
                                          const std::vector<ProcessBoundary>& processes, bool with_nccl) {
  if (why.size() != paths.size() || processes.size() != paths.size() + 1) {
    HETSTENCIL_THROW(Error, "the CUDA IPC links' outcomes do not match the processes");
  }
  for (std::size_t r = 0; r < paths.size(); ++r) {
    if (paths[r] != LinkPath::CudaIpc || why[r].empty()) continue;
    if (option == GpuTransport::Ipc) {
      HETSTENCIL_THROW(InvalidArgument, "the GPU transport ipc was asked for, but " + why[r]);
    }
    paths[r] = choose_link_path(option, true, true, with_nccl, processes[r].cuda_aware && processes[r + 1].cuda_aware,
                                false);
  }
  return paths;
}

std::string describe_link_paths(const std::vector<LinkPath>& paths) {
  std::string text;
  for (std::size_t r = 0; r < paths.size(); ++r) {
    text += (r ? ", r" : "r") + std::to_string(r) + "-r" + std::to_string(r + 1) + " " + to_string(paths[r]);
  }
  return text;
}

}  // namespace hetstencil
