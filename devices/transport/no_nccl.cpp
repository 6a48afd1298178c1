// A build without NCCL: ghost rows between processes go through host memory.
#include "devices/transport/link_paths.hpp"
#include "devices/transport/nccl_links.hpp"
#include "hetstencil/error.hpp"

namespace hetstencil {

bool nccl_built() { return false; }

std::unique_ptr<NcclLinks> connect_nccl(Processes&, const std::vector<bool>&, std::vector<NcclEnd>, std::atomic<bool>&,
                                        double) {
  HETSTENCIL_THROW(NotCompiled, "this hetstencil was built without NCCL (HETSTENCIL_NCCL=OFF)");
}

}  // namespace hetstencil
