#include "devices/cuda/cuda_row_mover.hpp"

#include <cstring>

#include "devices/cuda/cuda_check.hpp"
#include "devices/cuda/peer_access.hpp"

namespace hetstencil {

CudaRowMover::CudaRowMover(int gpu, const std::string& who)
    : gpu_(gpu),
      who_(who),
      to_host_context_(who + ": copying its edge rows to the host"),
      from_host_context_(who + ": copying ghost rows from the host"),
      from_shared_context_(who + ": copying ghost rows from another process's GPU") {
  char bus_id[32] = {};
  HETSTENCIL_CUDA_CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, gpu), who + ": asking for its PCI bus id");
  pci_bus_id_ = bus_id;
}

namespace {

// One row (a sync solve's) as a plain copy, several as one 2-D copy.
void copy_rows(RowBlock to, RowBlock from, std::int64_t rows, std::size_t row_bytes, cudaMemcpyKind kind,
               cudaStream_t stream, const std::string& context) {
  if (rows == 1) {
    HETSTENCIL_CUDA_CHECK(cudaMemcpyAsync(to.data, from.data, row_bytes, kind, stream), context);
  } else {
    HETSTENCIL_CUDA_CHECK(cudaMemcpy2DAsync(to.data, to.pitch, from.data, from.pitch, row_bytes,
                                            static_cast<std::size_t>(rows), kind, stream),
                          context);
  }
}

}  // namespace

std::optional<SharedHandle> CudaRowMover::share(const void* base) {
  const std::string context = who_ + ": sharing its memory with another process (CUDA IPC)";
  HETSTENCIL_CUDA_CHECK(cudaSetDevice(gpu_), context);
  cudaIpcMemHandle_t handle{};
  const cudaError_t rc = cudaIpcGetMemHandle(&handle, const_cast<void*>(base));
  if (rc != cudaSuccess) (void)cudaGetLastError();  // the link takes another path: no error is left behind
  HETSTENCIL_CUDA_CHECK(rc, context);
  static_assert(sizeof handle == sizeof(SharedHandle), "a CUDA IPC handle fills a SharedHandle");
  SharedHandle shared{};
  std::memcpy(shared.data(), &handle, sizeof handle);
  return shared;
}

void* CudaRowMover::open_shared(const SharedHandle& shared) {
  const std::string context = who_ + ": opening another process's GPU memory (CUDA IPC)";
  HETSTENCIL_CUDA_CHECK(cudaSetDevice(gpu_), context);
  cudaIpcMemHandle_t handle{};
  std::memcpy(&handle, shared.data(), sizeof handle);
  void* base = nullptr;
  const cudaError_t rc = cudaIpcOpenMemHandle(&base, handle, cudaIpcMemLazyEnablePeerAccess);
  if (rc != cudaSuccess) (void)cudaGetLastError();  // the link takes another path: no error is left behind
  HETSTENCIL_CUDA_CHECK(rc, context);
  return base;
}

void CudaRowMover::close_shared(void* base) {
  const std::string context = who_ + ": closing another process's GPU memory";
  HETSTENCIL_CUDA_CHECK(cudaSetDevice(gpu_), context);
  HETSTENCIL_CUDA_CHECK(cudaIpcCloseMemHandle(base), context);
}

void CudaRowMover::from_shared(RowBlock to, RowBlock from, std::int64_t rows, std::size_t row_bytes) {
  copy_rows(to, from, rows, row_bytes, cudaMemcpyDefault, stream_, from_shared_context_);
}

void CudaRowMover::to_host(RowBlock to, RowBlock from, std::int64_t rows, std::size_t row_bytes) {
  copy_rows(to, from, rows, row_bytes, cudaMemcpyDeviceToHost, stream_, to_host_context_);
}

void CudaRowMover::from_host(RowBlock to, RowBlock from, std::int64_t rows, std::size_t row_bytes) {
  copy_rows(to, from, rows, row_bytes, cudaMemcpyHostToDevice, stream_, from_host_context_);
}

bool CudaRowMover::reaches(const RowMover& other) {
  const auto* peer = dynamic_cast<const CudaRowMover*>(&other);
  if (!peer || peer->gpu_ == gpu_) return false;
  const std::string context = who_ + ": connecting to " + peer->who_;
  HETSTENCIL_CUDA_CHECK(cudaSetDevice(gpu_), context);
  int can = 0;
  HETSTENCIL_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, gpu_, peer->gpu_), context + ": asking about peer access");
  if (!can) return false;
  enable_peer_access(gpu_, peer->gpu_, context + ": enabling peer access");
  peer_contexts_[peer->gpu_] = who_ + ": copying ghost rows from " + peer->who_;
  return true;
}

void CudaRowMover::from_peer(RowBlock to, const RowMover& other, RowBlock from, std::int64_t rows,
                             std::size_t row_bytes) {
  const auto& peer = static_cast<const CudaRowMover&>(other);  // reaches(other) said it is one
  if (rows == 1) {
    HETSTENCIL_CUDA_CHECK(cudaMemcpyPeerAsync(to.data, gpu_, from.data, peer.gpu_, row_bytes, stream_),
                          peer_contexts_.at(peer.gpu_));
  } else {
    HETSTENCIL_CUDA_CHECK(cudaMemcpy2DAsync(to.data, to.pitch, from.data, from.pitch, row_bytes,
                                            static_cast<std::size_t>(rows), cudaMemcpyDefault, stream_),
                          peer_contexts_.at(peer.gpu_));
  }
}

}  // namespace hetstencil
