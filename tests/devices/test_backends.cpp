#include <gtest/gtest.h>

#include <string>

#include "core/timing_grid.hpp"
#include "devices/backend.hpp"
#include "hetstencil/error.hpp"

namespace hetstencil {
namespace {

Topology synthetic(const std::string& description) { return load_topology(TopologySource{"", description}); }

Topology fixture(const std::string& name) {
  return load_topology(TopologySource{std::string(HETSTENCIL_FIXTURES) + "/topology/" + name, ""});
}

TEST(Backends, TheCpuBackendMakesADeviceForEverySpec) {
  const Backend* cpu = backend_of(DeviceKind::Cpu);
  ASSERT_NE(cpu, nullptr);
  EXPECT_STREQ(cpu->name(), "cpu");
  const MachineDevices m = make_devices(synthetic("pack:2 numa:1 core:2 pu:1"), DeviceMapOptions{});
  ASSERT_EQ(m.specs.size(), 2u);
  ASSERT_EQ(m.devices.size(), 2u);
  for (std::size_t k = 0; k < m.devices.size(); ++k) {
    EXPECT_EQ(m.devices[k]->info().name, m.specs[k].info.name);
    EXPECT_EQ(m.devices[k]->info().kind, DeviceKind::Cpu);
  }
  EXPECT_GT(m.spins, 0);
}

// A described machine's GPUs can be planned for (map_devices names them) but
// not run: no device is made for them.
TEST(Backends, ADescribedMachinesGpusAreMappedButNotMade) {
  const Topology t = fixture("one_socket_one_gpu.xml");
  bool gpu_spec = false;
  for (const auto& spec : map_devices(t, DeviceMapOptions{})) gpu_spec = gpu_spec || spec.info.kind == DeviceKind::Gpu;
  EXPECT_TRUE(gpu_spec);
  for (const auto& d : make_devices(t, DeviceMapOptions{}).devices) EXPECT_EQ(d->info().kind, DeviceKind::Cpu);
}

TEST(Backends, ACpuDeviceMeasuresSweepsOnItsAttachedSlab) {
  MachineDevices m = make_devices(synthetic("pack:1 numa:1 core:2 pu:1"), DeviceMapOptions{1, 2, "", false, {}});
  Device& device = *m.devices.front();
  const Grid<double> grid = timing_grid<double>(16, 32);
  StencilJob job;
  job.precision = Precision::Double;
  job.nx = 32;
  job.ny = 16;
  job.initial = grid.data();
  try {
    device.measure_sweeps(job, {4}, 2, false);
    FAIL() << "measured without a slab";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("needs the job's slab attached"), std::string::npos) << e.what();
  }
  device.attach(job, RowRange{1, 16});
  const std::vector<RateSamples> with_checks = device.measure_sweeps(job, {4, 16}, 3, true);
  const std::vector<RateSamples> plain = device.measure_sweeps(job, {8}, 2, false);
  const SweepVsCopy bench = device.sweep_vs_copy(job, 2);
  device.detach();
  ASSERT_EQ(with_checks.size(), 2u);
  EXPECT_EQ(with_checks[0].rows, 4);
  EXPECT_EQ(with_checks[1].rows, 16);
  for (const auto& s : with_checks) {
    EXPECT_EQ(s.sweep_s.size(), 3u);
    EXPECT_EQ(s.check_s.size(), 3u);
    for (double v : s.sweep_s) EXPECT_GT(v, 0.0);
  }
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_EQ(plain[0].sweep_s.size(), 2u);
  EXPECT_TRUE(plain[0].check_s.empty());
  EXPECT_FALSE(bench.skipped);
  EXPECT_GT(bench.sweep_s, 0.0);
  EXPECT_GT(bench.copy_s, 0.0);
  EXPECT_EQ(device.start_load(), nullptr);
}

TEST(Backends, CpuDevicesMeasureTheirLinksToOtherCpuDevices) {
  MachineDevices m = make_devices(synthetic("pack:2 numa:1 core:1 pu:1"), DeviceMapOptions{});
  ASSERT_EQ(m.devices.size(), 2u);
  const std::vector<const Device*> all = {m.devices[0].get(), m.devices[1].get()};
  const std::vector<LinkSamples> links = m.devices[0]->measure_links(all, {64.0, 256.0}, 1);
  ASSERT_EQ(links.size(), 1u);
  EXPECT_EQ(links[0].from, all[0]);
  EXPECT_EQ(links[0].to, all[1]);
  ASSERT_EQ(links[0].samples.size(), 2u);
  EXPECT_EQ(links[0].samples[0].first, 64.0);
  EXPECT_EQ(links[0].samples[1].first, 256.0);
  for (const auto& s : links[0].samples) EXPECT_GT(s.second, 0.0);
}

}  // namespace
}  // namespace hetstencil
