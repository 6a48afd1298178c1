#include <gtest/gtest.h>

#include "devices/cpu/cpu_groups.hpp"
#include "devices/topology.hpp"
#include "hetstencil/error.hpp"

namespace hetstencil {
namespace {

TEST(Topology, ThisMachineHasCores) {
  const Topology t = load_topology();
  ASSERT_FALSE(t.cores.empty());
  ASSERT_FALSE(t.packages.empty());
  EXPECT_TRUE(t.this_machine);
  for (const auto& c : t.cores) EXPECT_FALSE(c.pus.empty());
}

TEST(Topology, SyntheticTwoSocketsFourNodes) {
  const Topology t = load_topology(TopologySource{"", "pack:2 numa:2 core:4 pu:2"});
  EXPECT_FALSE(t.this_machine);
  ASSERT_EQ(t.packages.size(), 2u);
  ASSERT_EQ(t.numa_nodes.size(), 4u);
  ASSERT_EQ(t.cores.size(), 16u);
  EXPECT_EQ(t.hardware_threads(), 32);
  for (const auto& n : t.numa_nodes) EXPECT_EQ(n.cores.size(), 4u);
  EXPECT_EQ(t.numa_nodes[2].package, 1);
  EXPECT_EQ(t.cores[5].numa, 1);
  EXPECT_EQ(t.cores[5].package, 0);
}

TEST(Topology, BadSourcesFailClearly) {
  EXPECT_THROW(load_topology(TopologySource{"/nonexistent/topo.xml", ""}), InvalidArgument);
  EXPECT_THROW(load_topology(TopologySource{"", "pack:banana"}), InvalidArgument);
}

TEST(CpuGroups, OnePerNumaNodeByDefault) {
  const Topology t = load_topology(TopologySource{"", "pack:2 numa:2 core:4 pu:2"});
  const auto specs = cpu_device_specs(t, 0, 0);
  ASSERT_EQ(specs.size(), 4u);
  EXPECT_EQ(specs[3].info.name, "cpu3");
  EXPECT_EQ(specs[3].info.numa_node, 3);
  EXPECT_EQ(specs[3].info.threads, 4);
  EXPECT_EQ(specs[3].info.cores, (std::vector<int>{12, 13, 14, 15}));
  // Another machine's processors are not bound to.
  for (const auto& w : specs[3].worker_cpus) EXPECT_TRUE(w.empty());
}

TEST(CpuGroups, CutsCoresIntoGroupsAndSharesWhenShort) {
  const Topology t = load_topology(TopologySource{"", "pack:1 numa:1 core:16 pu:1"});
  const auto three = cpu_device_specs(t, 3, 0);
  ASSERT_EQ(three.size(), 3u);
  EXPECT_EQ(three[0].info.cores.size() + three[1].info.cores.size() + three[2].info.cores.size(), 16u);
  EXPECT_LE(three[2].info.cores.size() - three[0].info.cores.size(), 1u);
  const Topology two = load_topology(TopologySource{"", "pack:1 numa:1 core:2 pu:1"});
  const auto four = cpu_device_specs(two, 4, 3);
  ASSERT_EQ(four.size(), 4u);
  EXPECT_EQ(four[2].info.cores, std::vector<int>{0});
  EXPECT_EQ(four[2].info.threads, 3);
  EXPECT_THROW(cpu_device_specs(two, -1, 0), InvalidArgument);
}

}  // namespace
}  // namespace hetstencil
