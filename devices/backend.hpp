// A device kind as a plug-in: each backend folder (cpu/, cuda/) provides one
// Backend, registered in backends.cpp. Nothing outside a backend's folder
// names its types: the rest of hetstencil finds devices through this registry.
#pragma once

#include <memory>
#include <vector>

#include "devices/device.hpp"
#include "devices/device_map.hpp"
#include "devices/variant_grid.hpp"
#include "hetstencil/device_info.hpp"
#include "hetstencil/topology.hpp"

namespace hetstencil {

class Backend {
 public:
  virtual ~Backend() = default;
  /// "cpu", "cuda", ...
  virtual const char* name() const = 0;
  /// The kind of device it makes.
  virtual DeviceKind kind() const = 0;
  /// Adds to a topology of this machine the devices of its kind that hwloc does
  /// not name (GPUs and their links, locality left unknown for the probe to fill
  /// in from the PCI bus id); nothing where a driver or device is missing.
  virtual void probe(Topology& /*topology*/) const {}
  /// The version of the driver its devices run on, for a profile's
  /// fingerprint; 0 where it has none or there is no driver.
  virtual int driver_version() const { return 0; }
  /// Whether it can make the devices of `topology`: a described machine's GPUs
  /// can be planned for, not run.
  virtual bool runs_on(const Topology& topology) const = 0;
  /// The device for `spec` (of its kind). spins: how long its threads spin at
  /// a barrier before they sleep (spin_limit_for).
  virtual std::unique_ptr<Device> make(const DeviceSpec& spec, int spins) const = 0;
  /// A problem's grid on its device `index` (Topology::gpus for a GPU), for the
  /// variants benchmark; nullptr where its devices run no variants.
  virtual std::unique_ptr<VariantGrid> variant_grid(int /*index*/, const Problem& /*problem*/) const { return nullptr; }
};

/// The backends of this build, in registration order.
const std::vector<const Backend*>& backends();

/// The backend that makes devices of `kind`, nullptr where this build has none.
const Backend* backend_of(DeviceKind kind);

/// The device for `spec`, made by its kind's backend; throws NotCompiled where
/// this build has none.
std::unique_ptr<Device> make_device(const DeviceSpec& spec, int spins);

/// Runs every backend's probe on a topology of this machine.
void probe_backends(Topology& topology);

/// The first driver version a backend reports (0: none), for a profile's fingerprint.
int driver_version();

/// The devices a run uses, made once: the specs map_devices chose and, in the
/// same order, a device for each from its kind's backend.
struct MachineDevices {
  std::vector<DeviceSpec> specs;
  std::vector<std::unique_ptr<Device>> devices;
  int spins = 0;  ///< how long their threads spin at a barrier when all run together
};

/// Maps `topology` to devices (GPUs only where options.gpus and a GPU backend
/// runs on it) and makes each through the registry. Their threads spin as
/// those of all the devices running together do, or with `one_at_a_time` (a
/// benchmark measuring one device after another) as each device's alone.
MachineDevices make_devices(const Topology& topology, DeviceMapOptions options, bool one_at_a_time = false);

}  // namespace hetstencil
