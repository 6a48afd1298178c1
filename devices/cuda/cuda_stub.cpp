// Linked when the build has no CUDA compiler: the same API, with no GPUs.
#include "devices/cuda/cuda_info.hpp"

namespace hetstencil {

bool cuda_compiled() { return false; }
int cuda_device_count() { return 0; }
int cuda_driver_version() { return 0; }
std::vector<GpuInfo> cuda_gpus() { return {}; }
std::vector<std::vector<GpuLink>> cuda_links() { return {}; }

}  // namespace hetstencil

#include "devices/cuda/cuda_bench.hpp"
#include "devices/cuda/cuda_device.hpp"
#include "hetstencil/error.hpp"

namespace hetstencil {

std::unique_ptr<Device> make_cuda_device(DeviceInfo info, int, std::vector<int>, bool) {
  HETSTENCIL_THROW(NotCompiled, info.name + ": this build of hetstencil has no CUDA support");
}

std::vector<GpuSweepTiming> bench_gpu_sweeps(int, const std::vector<std::int64_t>&, const std::vector<Precision>&, int) {
  HETSTENCIL_THROW(NotCompiled, "this build of hetstencil has no CUDA support");
}

}  // namespace hetstencil

namespace hetstencil {

struct GpuLoad::Impl {};
GpuLoad::GpuLoad(int, std::vector<int>, bool, std::int64_t) : impl_(nullptr) {
  HETSTENCIL_THROW(NotCompiled, "this build of hetstencil has no CUDA support");
}
GpuLoad::~GpuLoad() = default;
std::int64_t GpuLoad::sweeps() const { return 0; }

}  // namespace hetstencil

namespace hetstencil {

std::vector<GpuRateSample> gpu_rate_samples(int, Precision, std::int64_t, const std::vector<std::int64_t>&, int,
                                            const VariantChoice&) {
  HETSTENCIL_THROW(NotCompiled, "this build of hetstencil has no CUDA support");
}

GpuLinkSamples gpu_link_samples(int, const std::vector<int>&, const std::vector<double>&, int) {
  HETSTENCIL_THROW(NotCompiled, "this build of hetstencil has no CUDA support");
}

}  // namespace hetstencil

#include "devices/cuda/gpu_variants.hpp"

namespace hetstencil {

struct GpuVariantSolver::Impl {};
GpuVariantSolver::GpuVariantSolver(int, const Problem&) {
  HETSTENCIL_THROW(NotCompiled, "this build of hetstencil has no CUDA support");
}
GpuVariantSolver::~GpuVariantSolver() = default;
void GpuVariantSolver::reset() {}
double GpuVariantSolver::advance(const VariantChoice&, std::int64_t) { return 0.0; }
double GpuVariantSolver::max_relative_error(const GpuVariantSolver&) const { return 0.0; }
Solution GpuVariantSolver::download() const { return {}; }

}  // namespace hetstencil
