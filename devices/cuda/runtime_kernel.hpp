// A kernel compiled at run time with NVRTC (opened when first needed, not
// linked) for one GPU's architecture and loaded with the runtime's library API
// (no driver API to link). Compiled
// code is kept on disk, in the kernels/ folder beside the profiles
// ($XDG_CACHE_HOME/hetstencil/kernels, else ~/.cache/hetstencil/kernels),
// under a hash of the source, the options, the architecture and NVRTC's
// version: a second solve of the same stencil loads it in milliseconds.
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <vector>

namespace hetstencil::cuda {

class RuntimeKernel {
 public:
  /// The entry point `entry` of `source`, for GPU `gpu`; `what` says what it
  /// is in messages ("the sweep of the stencil 'box27' in double"). Throws
  /// CudaError naming the GPU and NVRTC's log when it does not compile or load.
  RuntimeKernel(const std::string& source, const char* entry, int gpu, const std::string& what);
  ~RuntimeKernel();
  RuntimeKernel(const RuntimeKernel&) = delete;
  RuntimeKernel& operator=(const RuntimeKernel&) = delete;

  /// What cudaLaunchKernel takes.
  const void* function() const { return reinterpret_cast<const void*>(kernel_); }

 private:
  cudaLibrary_t library_ = nullptr;
  cudaKernel_t kernel_ = nullptr;
};

/// Compiles those of `sources` (each a kernel of `what`, "the sweep of the
/// stencil 'box27' in float") that the folder of compiled kernels does not
/// hold for GPU `gpu`, side by side on the host's cores, and keeps them there:
/// a RuntimeKernel of each then loads it. A source that does not compile is
/// left out; its RuntimeKernel says why.
void compile_ahead(const std::vector<std::string>& sources, int gpu, const std::string& what);

/// The folder compiled kernels are kept in.
std::string kernel_cache_folder();

/// The CUBIN of `source` for GPUs of compute capability `architecture` (90:
/// sm_90); no GPU needed. Throws CudaError naming `where` with NVRTC's log,
/// or why NVRTC cannot be opened.
std::vector<char> compile_kernel(const std::string& source, int architecture, const std::string& where);

}  // namespace hetstencil::cuda
