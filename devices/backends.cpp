// The registry of the backends compiled into this build.
#include "devices/backend.hpp"

#include "devices/sync.hpp"
#include "hetstencil/error.hpp"

namespace hetstencil {

// backend_list.inc, made by devices/CMakeLists.txt, holds HETSTENCIL_BACKEND(name)
// for each backend folder of this build; each defines name_backend().
#define HETSTENCIL_BACKEND(name) const Backend& name##_backend();
#include "backend_list.inc"
#undef HETSTENCIL_BACKEND

const std::vector<const Backend*>& backends() {
  static const std::vector<const Backend*> all = {
#define HETSTENCIL_BACKEND(name) &name##_backend(),
#include "backend_list.inc"
#undef HETSTENCIL_BACKEND
  };
  return all;
}

const Backend* backend_of(DeviceKind kind) {
  for (const Backend* b : backends()) {
    if (b->kind() == kind) return b;
  }
  return nullptr;
}

std::unique_ptr<Device> make_device(const DeviceSpec& spec, int spins) {
  const Backend* backend = backend_of(spec.info.kind);
  if (!backend) HETSTENCIL_THROW(NotCompiled, spec.info.name + ": this build of hetstencil has no backend for it");
  return backend->make(spec, spins);
}

void probe_backends(Topology& topology) {
  for (const Backend* b : backends()) b->probe(topology);
}

int driver_version() {
  for (const Backend* b : backends()) {
    if (const int v = b->driver_version()) return v;
  }
  return 0;
}

MachineDevices make_devices(const Topology& topology, DeviceMapOptions options, bool one_at_a_time) {
  const Backend* gpus = backend_of(DeviceKind::Gpu);
  options.gpus = options.gpus && gpus && gpus->runs_on(topology);
  MachineDevices out;
  out.specs = map_devices(topology, options);
  int threads = 0;
  for (const auto& s : out.specs) threads += s.info.threads;
  out.spins = spin_limit_for(threads, topology.hardware_threads());
  for (const auto& spec : out.specs) {
    const int alone = spin_limit_for(spec.info.threads, topology.hardware_threads());
    out.devices.push_back(make_device(spec, one_at_a_time ? alone : out.spins));
  }
  return out;
}

}  // namespace hetstencil
