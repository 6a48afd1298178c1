// How the transport moves a GPU's halo rows: copies queued on the stream the
// device gave it, to and from pinned host memory, or straight from another GPU
// of the process where peer access allows, or of another process of the node
// (CUDA IPC: the allocation's handle, opened there with peer access).
#pragma once

#include <cuda_runtime.h>

#include <map>
#include <string>

#include "devices/transport/halo_rows.hpp"

namespace hetstencil {

class CudaRowMover final : public RowMover {
 public:
  /// Rows in the memory of CUDA device `gpu`; `who` names it in messages.
  CudaRowMover(int gpu, const std::string& who);
  /// The stream the copies are queued on: the device's transfer stream.
  void use_stream(cudaStream_t stream) { stream_ = stream; }

  void to_host(RowBlock to, RowBlock from, std::int64_t rows, std::size_t row_bytes) override;
  void from_host(RowBlock to, RowBlock from, std::int64_t rows, std::size_t row_bytes) override;
  /// Another GPU's mover whose memory this GPU may access (peer access,
  /// enabled here the first time in the process: it costs milliseconds).
  bool reaches(const RowMover& other) override;
  void from_peer(RowBlock to, const RowMover& other, RowBlock from, std::int64_t rows,
                 std::size_t row_bytes) override;
  std::optional<SharedHandle> share(const void* base) override;
  void* open_shared(const SharedHandle& handle) override;
  void close_shared(void* base) override;
  void from_shared(RowBlock to, RowBlock from, std::int64_t rows, std::size_t row_bytes) override;
  std::optional<GpuQueue> gpu_queue() const override { return GpuQueue{gpu_, stream_, pci_bus_id_}; }

 private:
  int gpu_;
  std::string who_;
  std::string pci_bus_id_;
  cudaStream_t stream_ = nullptr;
  // Made once: the copies run every iteration.
  std::string to_host_context_;
  std::string from_host_context_;
  std::string from_shared_context_;
  std::map<int, std::string> peer_contexts_;  // by the GPU reached
};

}  // namespace hetstencil
