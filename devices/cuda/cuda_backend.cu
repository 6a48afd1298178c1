// The CUDA backend: the GPUs the CUDA runtime sees, each a device driven by a
// host thread bound near it.
#include "devices/backend.hpp"
#include "devices/cuda/cuda_device.hpp"
#include "devices/cuda/cuda_info.hpp"
#include "devices/cuda/gpu_variants.hpp"

namespace hetstencil {
namespace {

class CudaBackend final : public Backend {
 public:
  const char* name() const override { return "cuda"; }
  DeviceKind kind() const override { return DeviceKind::Gpu; }
  void probe(Topology& topology) const override {
    topology.gpus = cuda_gpus();
    topology.links = cuda_links();
  }
  int driver_version() const override { return cuda_driver_version(); }
  bool runs_on(const Topology& topology) const override { return topology.this_machine; }
  std::unique_ptr<Device> make(const DeviceSpec& spec, int /*spins*/) const override {
    return make_cuda_device(spec.info, spec.gpu, spec.worker_cpus.front(), spec.own_core);
  }
  std::unique_ptr<VariantGrid> variant_grid(int index, const Problem& problem) const override {
    return std::make_unique<GpuVariantSolver>(index, problem);
  }
};

}  // namespace

const Backend& cuda_backend() {
  static const CudaBackend backend;
  return backend;
}

}  // namespace hetstencil
