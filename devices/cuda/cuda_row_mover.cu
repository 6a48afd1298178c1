#include "devices/cuda/cuda_row_mover.hpp"

#include <cuda.h>

#include <cstring>

#include "devices/cuda/cuda_check.hpp"
#include "devices/cuda/peer_access.hpp"

namespace hetstencil {

CudaRowMover::CudaRowMover(int gpu, const std::string& who)
    : gpu_(gpu),
      who_(who),
      to_host_context_(who + ": copying its edge rows to the host"),
      from_host_context_(who + ": copying ghost rows from the host"),
      from_shared_context_(who + ": copying ghost rows from another process's GPU") {}

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

// cuMemGetAddressRange through the runtime's entry point: the library links
// the runtime alone, so that it loads where no driver is installed.
void* allocation_base(const void* rows, const std::string& context) {
  using AddressRange = CUresult (*)(CUdeviceptr*, std::size_t*, CUdeviceptr);
  static AddressRange address_range = [&] {
    void* function = nullptr;
    cudaDriverEntryPointQueryResult found{};
    HETSTENCIL_CUDA_CHECK(
        cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &function, 12000, cudaEnableDefault, &found),
        context + ": finding the driver's cuMemGetAddressRange");
    if (found != cudaDriverEntryPointSuccess) {
      HETSTENCIL_THROW(Error, context + ": the CUDA driver has no cuMemGetAddressRange");
    }
    return reinterpret_cast<AddressRange>(function);
  }();
  CUdeviceptr base = 0;
  std::size_t bytes = 0;
  if (const CUresult rc = address_range(&base, &bytes, reinterpret_cast<CUdeviceptr>(rows)); rc != CUDA_SUCCESS) {
    HETSTENCIL_THROW(Error, context + ": finding the allocation of its rows: CUDA driver error " + std::to_string(rc));
  }
  return reinterpret_cast<void*>(base);
}

}  // namespace

std::optional<SharedRows> CudaRowMover::share(const void* rows) {
  const std::string context = who_ + ": sharing its edge rows with another process";
  HETSTENCIL_CUDA_CHECK(cudaSetDevice(gpu_), context);
  void* base = allocation_base(rows, context);
  cudaIpcMemHandle_t handle{};
  HETSTENCIL_CUDA_CHECK(cudaIpcGetMemHandle(&handle, base), context);
  static_assert(sizeof handle == SharedRows::kHandleBytes, "a CUDA IPC handle fills SharedRows::handle");
  SharedRows shared;
  std::memcpy(shared.handle.data(), &handle, sizeof handle);
  shared.offset = static_cast<std::uint64_t>(static_cast<const char*>(rows) - static_cast<const char*>(base));
  return shared;
}

void* CudaRowMover::open_shared(const std::array<char, SharedRows::kHandleBytes>& shared) {
  const std::string context = who_ + ": opening another process's GPU memory (CUDA IPC)";
  HETSTENCIL_CUDA_CHECK(cudaSetDevice(gpu_), context);
  cudaIpcMemHandle_t handle{};
  std::memcpy(&handle, shared.data(), sizeof handle);
  void* base = nullptr;
  HETSTENCIL_CUDA_CHECK(cudaIpcOpenMemHandle(&base, handle, cudaIpcMemLazyEnablePeerAccess), context);
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
