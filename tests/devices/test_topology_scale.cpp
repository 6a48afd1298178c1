// Machines of thousands of cores are read in seconds: ctest's TIMEOUT on these
// tests (tests/CMakeLists.txt) fails a reading that grows with the square of
// the machine, which would take minutes for the larger one.
#include <gtest/gtest.h>

#include "devices/device_map.hpp"
#include "hetstencil/topology.hpp"

namespace hetstencil {
namespace {

TEST(TopologyScale, ReadsA2048CoreMachineAndMakesADevicePerNumaNode) {
  const Topology t = load_topology(TopologySource{"", "pack:16 numa:2 core:64 pu:2"});
  ASSERT_EQ(t.packages.size(), 16u);
  ASSERT_EQ(t.numa_nodes.size(), 32u);
  ASSERT_EQ(t.cores.size(), 2048u);
  EXPECT_EQ(t.hardware_threads(), 4096);
  for (std::size_t c = 0; c < t.cores.size(); ++c) {
    const CoreInfo& core = t.cores[c];
    EXPECT_EQ(core.os_index, static_cast<int>(c));
    EXPECT_EQ(core.pus, (std::vector<int>{2 * core.os_index, 2 * core.os_index + 1})) << "core " << c;
    EXPECT_EQ(core.numa, static_cast<int>(c / 64)) << "core " << c;
    EXPECT_EQ(core.package, static_cast<int>(c / 128)) << "core " << c;
  }
  for (std::size_t p = 0; p < t.packages.size(); ++p) {
    const int first = static_cast<int>(2 * p);
    EXPECT_EQ(t.packages[p].numa_nodes, (std::vector<int>{first, first + 1})) << "package " << p;
    EXPECT_EQ(t.packages[p].cores.size(), 128u) << "package " << p;
  }

  const auto devices = map_devices(t, DeviceMapOptions{});
  ASSERT_EQ(devices.size(), 32u);
  for (std::size_t d = 0; d < devices.size(); ++d) {
    const DeviceInfo& info = devices[d].info;
    EXPECT_EQ(info.name, "cpu" + std::to_string(d));
    EXPECT_EQ(info.numa_node, static_cast<int>(d));
    EXPECT_EQ(info.threads, 64);
    ASSERT_EQ(info.cores.size(), 64u) << info.name;
    EXPECT_EQ(info.cores.front(), static_cast<int>(64 * d)) << info.name;
    EXPECT_EQ(info.cores.back(), static_cast<int>(64 * d + 63)) << info.name;
    EXPECT_EQ(info.description.rfind("package " + std::to_string(d / 2) + ",", 0), 0u) << info.description;
  }
}

TEST(TopologyScale, ReadsAn8192CoreMachine) {
  const Topology t = load_topology(TopologySource{"", "pack:64 numa:2 core:64 pu:2"});
  ASSERT_EQ(t.cores.size(), 8192u);
  EXPECT_EQ(t.hardware_threads(), 16384);
  EXPECT_EQ(t.cores.back().pus, (std::vector<int>{16382, 16383}));
  EXPECT_EQ(t.cores.back().numa, 127);
  EXPECT_EQ(t.cores.back().package, 63);
  const auto devices = map_devices(t, DeviceMapOptions{4, 0, "", true, {}});
  ASSERT_EQ(devices.size(), 4u);
  EXPECT_EQ(devices[3].info.cores.size(), 2048u);
  EXPECT_EQ(devices[3].info.cores.front(), 6144);
}

}  // namespace
}  // namespace hetstencil
