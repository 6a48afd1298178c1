#include "devices/transport/link_paths.hpp"

#include "devices/transport/transport.hpp"
#include "hetstencil/error.hpp"

namespace hetstencil {

std::string to_string(LinkPath path) {
  switch (path) {
    case LinkPath::Nccl:
      return "nccl";
    case LinkPath::CudaAwareMpi:
      return "cuda-aware mpi";
    case LinkPath::HostStaging:
      break;
  }
  return "host staging";
}

void check_gpu_transport(GpuTransport option) {
  if (option == GpuTransport::Nccl && !nccl_built()) {
    HETSTENCIL_THROW(InvalidArgument, "the GPU transport nccl was asked for, but this hetstencil was built without "
                                      "NCCL (HETSTENCIL_NCCL=OFF): choose auto or host");
  }
}

LinkPath choose_link_path(GpuTransport option, bool upper_gpu, bool lower_gpu, bool with_nccl, bool cuda_aware) {
  if (!upper_gpu || !lower_gpu || option == GpuTransport::Host) return LinkPath::HostStaging;
  if (with_nccl) return LinkPath::Nccl;
  return cuda_aware && option == GpuTransport::Auto ? LinkPath::CudaAwareMpi : LinkPath::HostStaging;
}

std::string describe_link_paths(const std::vector<LinkPath>& paths) {
  std::string text;
  for (std::size_t r = 0; r < paths.size(); ++r) {
    text += (r ? ", r" : "r") + std::to_string(r) + "-r" + std::to_string(r + 1) + " " + to_string(paths[r]);
  }
  return text;
}

}  // namespace hetstencil
