// The transport of one process's part of a solve over several: its devices
// talk through the shared-memory transport, and its first and last devices
// exchange edge rows with the neighbouring processes by messages, staged in
// host memory (a GPU's rows go through its mover's host copies; a transport
// that moves GPU memory directly, NCCL or a CUDA-aware MPI, would replace the
// staging in send/post/receive). Residual checks gather every process's row
// sums, so that all reduce the same rows in the same order.
#pragma once

#include <memory>
#include <vector>

#include "devices/transport/processes.hpp"
#include "devices/transport/shared_memory.hpp"
#include "devices/transport/transport.hpp"

namespace hetstencil {

class ProcessTransport final : public Transport {
 public:
  /// `halos` and `rows`: this process's devices, in row order.
  ProcessTransport(std::vector<HaloRows*> halos, std::vector<RowRange> rows, const StencilJob& job, double h,
                   int spins, ProcessLinks links);
  ~ProcessTransport() override;

  void connect(std::size_t k) override { local_.connect(k); }
  Endpoint& endpoint(std::size_t k) override;
  void abort() override { local_.abort(); }
  Progress progress() override { return local_.progress(); }
  ExchangeOutcome outcome() override { return local_.outcome(); }

 private:
  class End;

  std::vector<HaloRows*> halos_;
  const StencilJob& job_;
  ProcessLinks links_;
  SharedMemoryTransport local_;
  std::vector<std::unique_ptr<End>> ends_;
};

}  // namespace hetstencil
