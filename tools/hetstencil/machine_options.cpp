#include "tools/hetstencil/machine_options.hpp"

#include <cstdio>

#include <spdlog/fmt/fmt.h>

#include "tools/hetstencil/option_checks.hpp"

namespace hetstencil::cli {

void add_machine_options(CLI::App* command, RuntimeOptions& o) {
  command->add_option("--cpu-devices", o.cpu_devices,
                      "CPU devices: 0 = one per socket (NUMA node); N = the cores cut into N groups")
      ->transform(integer_in(0, kMaxCpuDevices))->capture_default_str();
  command->add_option("--threads", o.threads_per_device, "worker threads per CPU device (0 = one per core)")
      ->transform(integer_in(0, kMaxThreadsPerDevice))->capture_default_str();
  command->add_option("--devices", o.devices,
                      "devices to use, e.g. cpu0,gpu1 or gpu (every GPU), or to leave out, e.g. -cpu0 (default: all)")
      ->check(naming("devices, e.g. cpu0,gpu1, gpu or -cpu0"));
  auto* xml = command->add_option("--topology", o.topology.xml_file,
                                  "describe the machine with an hwloc XML file (lstopo file.xml) instead of probing")
                   ->check(naming("a file"));
  auto* synthetic = command->add_option("--synthetic", o.topology.synthetic,
                                        "describe the machine with an hwloc synthetic description, "
                                        "e.g. \"pack:2 numa:1 core:8 pu:1\"")
                        ->check(naming("a machine, e.g. \"pack:2 numa:1 core:8 pu:1\""));
  xml->excludes(synthetic);
}

void tell(const std::string& what) {
  fmt::print(stderr, "hetstencil: {}\n", what);
  std::fflush(stderr);
}

}  // namespace hetstencil::cli
