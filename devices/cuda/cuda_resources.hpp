// Owners of CUDA resources: memory on a GPU, pinned host memory, streams,
// events and graphs. Each frees what it holds on destruction; failures there are logged,
// not thrown.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <utility>

#include "devices/cuda/cuda_check.hpp"

namespace hetstencil::cuda {

// Memory from one CUDA allocator: Kind::allocate and Kind::release.
template <class Kind>
class Allocation {
 public:
  Allocation() = default;
  Allocation(std::size_t bytes, const std::string& context) {
    if (bytes > 0) HETSTENCIL_CUDA_CHECK(Kind::allocate(&data_, bytes), context);
  }
  ~Allocation() { reset(); }
  Allocation(Allocation&& o) noexcept : data_(std::exchange(o.data_, nullptr)) {}
  Allocation& operator=(Allocation&& o) noexcept {
    if (this != &o) {
      reset();
      data_ = std::exchange(o.data_, nullptr);
    }
    return *this;
  }
  template <class T = void>
  T* get() const {
    return static_cast<T*>(data_);
  }
  void reset() {
    if (data_) Kind::release(data_);
    data_ = nullptr;
  }

 private:
  void* data_ = nullptr;
};

struct OnDevice {
  static cudaError_t allocate(void** p, std::size_t bytes) { return cudaMalloc(p, bytes); }
  static void release(void* p) { cudaFree(p); }
};

struct PinnedOnHost {
  static cudaError_t allocate(void** p, std::size_t bytes) { return cudaMallocHost(p, bytes); }
  static void release(void* p) { cudaFreeHost(p); }
};

/// Memory on the current GPU.
using DeviceMemory = Allocation<OnDevice>;
/// Page-locked host memory, for asynchronous copies.
using PinnedMemory = Allocation<PinnedOnHost>;

class Stream {
 public:
  Stream() = default;
  /// urgent: the device's highest priority, so that its blocks are scheduled
  /// ahead of those of ordinary streams.
  explicit Stream(const std::string& context, bool urgent = false) {
    int least = 0, greatest = 0;
    HETSTENCIL_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest), context);
    HETSTENCIL_CUDA_CHECK(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking, urgent ? greatest : least),
                          context);
  }
  ~Stream() {
    if (stream_) cudaStreamDestroy(stream_);
  }
  Stream(Stream&& o) noexcept : stream_(std::exchange(o.stream_, nullptr)) {}
  Stream& operator=(Stream&& o) noexcept {
    std::swap(stream_, o.stream_);
    return *this;
  }
  operator cudaStream_t() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

class Event {
 public:
  Event() = default;
  Event(const std::string& context, bool timing = false) {
    HETSTENCIL_CUDA_CHECK(cudaEventCreateWithFlags(&event_, timing ? cudaEventDefault : cudaEventDisableTiming),
                          context);
  }
  ~Event() {
    if (event_) cudaEventDestroy(event_);
  }
  Event(Event&& o) noexcept : event_(std::exchange(o.event_, nullptr)) {}
  Event& operator=(Event&& o) noexcept {
    std::swap(event_, o.event_);
    return *this;
  }
  operator cudaEvent_t() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

/// Work captured once from a stream and launched again as one graph: the
/// launches `queue` makes on `stream`, with nothing between them for the host to do.
class Graph {
 public:
  Graph() = default;
  template <class Queue>
  Graph(cudaStream_t stream, const std::string& context, Queue&& queue) {
    HETSTENCIL_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), context);
    cudaGraph_t graph = nullptr;
    try {
      queue();
    } catch (...) {
      if (cudaStreamEndCapture(stream, &graph) == cudaSuccess && graph) cudaGraphDestroy(graph);
      throw;
    }
    HETSTENCIL_CUDA_CHECK(cudaStreamEndCapture(stream, &graph), context);
    const cudaError_t made = cudaGraphInstantiate(&exec_, graph, 0);
    cudaGraphDestroy(graph);
    HETSTENCIL_CUDA_CHECK(made, context);
  }
  ~Graph() {
    if (exec_) cudaGraphExecDestroy(exec_);
  }
  Graph(Graph&& o) noexcept : exec_(std::exchange(o.exec_, nullptr)) {}
  Graph& operator=(Graph&& o) noexcept {
    std::swap(exec_, o.exec_);
    return *this;
  }
  void launch(cudaStream_t stream, const std::string& context) const {
    HETSTENCIL_CUDA_CHECK(cudaGraphLaunch(exec_, stream), context);
  }

 private:
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace hetstencil::cuda
