// The CPU backend: CPU devices over the cores hwloc finds (device_map cuts them).
#include "devices/backend.hpp"
#include "devices/cpu/cpu_device.hpp"

namespace hetstencil {
namespace {

class CpuBackend final : public Backend {
 public:
  const char* name() const override { return "cpu"; }
  DeviceKind kind() const override { return DeviceKind::Cpu; }
  bool runs_on(const Topology& /*topology*/) const override { return true; }
  std::unique_ptr<Device> make(const DeviceSpec& spec, int spins) const override {
    return std::make_unique<CpuDevice>(spec.info, spec.worker_cpus, spec.cache_bytes, spins);
  }
};

}  // namespace

const Backend& cpu_backend() {
  static const CpuBackend backend;
  return backend;
}

}  // namespace hetstencil
