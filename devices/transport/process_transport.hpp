// The transport of one process's part of a solve over several: its devices
// talk through the shared-memory transport, and its first and last devices
// exchange edge rows with the neighbouring processes. Where both ends are GPUs
// the rows go GPU to GPU (link_paths.hpp): through memory each opens of the
// other's on one node (CUDA IPC, ipc_link.hpp), through NCCL or a CUDA-aware
// MPI between nodes. Otherwise they go by messages staged in host memory (a
// GPU's rows through its mover's host copies), sent and received with
// persistent requests, since every round moves the same buffers.
// Residual checks gather the nodes of the residual's tree that each process's
// rows cover, so that all find the same root.
#pragma once

#include <memory>
#include <vector>

#include "devices/transport/ipc_link.hpp"
#include "devices/transport/link_paths.hpp"
#include "devices/transport/nccl_links.hpp"
#include "devices/transport/processes.hpp"
#include "devices/transport/shared_memory.hpp"
#include "devices/transport/transport.hpp"

namespace hetstencil {

class ProcessTransport final : public Transport {
 public:
  /// `halos` and `rows`: this process's devices, in row order. Collective
  /// over the processes where GPU memory may cross a link (gpu_links_built:
  /// it asks which ends are GPUs, and opens the CUDA IPC links).
  ProcessTransport(std::vector<HaloRows*> halos, std::vector<RowRange> rows, const StencilJob& job, double h,
                   int spins, ProcessLinks links);
  ~ProcessTransport() override;

  void connect(std::size_t k) override { local_.connect(k); }
  Endpoint& endpoint(std::size_t k) override;
  void abort() override;
  Progress progress() override { return local_.progress(); }
  void finish() override;
  ExchangeOutcome outcome() override;
  /// By link (element r: between ranks r and r + 1), the path its ghost rows take.
  const std::vector<LinkPath>& paths() const { return paths_; }

 private:
  class End;

  // Which path each link takes, and the NCCL ends of this process.
  void choose_paths();
  // Opens the CUDA IPC links of paths_ (all processes at once); a link whose
  // memory cannot be opened at either end takes the path it would take
  // between nodes, or the solve is refused where the option asked for IPC.
  void open_ipc_links(const std::vector<ProcessBoundary>& all);
  // ResidualCheck's Combine: every process's nodes, in row order.
  void combine_cover(std::vector<TreeNode>& cover, double& max_abs);

  std::vector<HaloRows*> halos_;
  const StencilJob& job_;
  ProcessLinks links_;
  SharedMemoryTransport local_;
  std::vector<LinkPath> paths_;
  std::vector<NcclEnd> nccl_ends_;
  std::unique_ptr<NcclLinks> nccl_;  // where a link of this process is NCCL's
  std::unique_ptr<IpcLink> ipc_[2];  // by side: the CUDA IPC link of our first (Top) or last device
  std::vector<std::unique_ptr<End>> ends_;
  // The residual tree's nodes over each process's rows, in rank order, and their count by rank.
  std::vector<TreeNode> every_cover_;
  std::vector<int> cover_counts_;
};

}  // namespace hetstencil
