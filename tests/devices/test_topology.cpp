#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "devices/device_map.hpp"
#include "hetstencil/error.hpp"
#include "hetstencil/topology.hpp"
#include "hetstencil/version.hpp"

namespace hetstencil {
namespace {

Topology fixture(const std::string& name) {
  return load_topology(TopologySource{std::string(HETSTENCIL_FIXTURES) + "/topology/" + name, ""});
}

std::vector<DeviceSpec> devices_of(const Topology& t, const std::string& selection = "", int cpu_devices = 0) {
  return map_devices(t, DeviceMapOptions{cpu_devices, 0, selection, true, {}});
}

TEST(Topology, ThisMachineHasCores) {
  const Topology t = load_topology();
  ASSERT_FALSE(t.cores.empty());
  ASSERT_FALSE(t.packages.empty());
  EXPECT_TRUE(t.this_machine);
  for (const auto& c : t.cores) EXPECT_FALSE(c.pus.empty());
  EXPECT_EQ(t.links.size(), t.gpus.size());
}

// Binds the process to its last CPU, as taskset or mpirun --bind-to core
// would, before anything (the GPU probe) starts threads of its own, then checks
// that its CPU device is there and its fingerprint still counts every core.
// Exits 0 when it is so, else says what is not and exits 1.
int check_bound_process() {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return 2;
  int last = -1;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) last = cpu;
  }
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(last, &one);
  if (sched_setaffinity(0, sizeof one, &one) != 0) return 2;
  const Topology bound = load_topology();
  const std::vector<DeviceSpec> cpu = devices_of(bound, "cpu");
  if (sched_setaffinity(0, sizeof allowed, &allowed) != 0) return 2;
  const Topology whole = load_topology();
  const bool ok = bound.cores.size() == 1 && bound.cores.front().pus == std::vector<int>{last} &&
                  bound.cores.size() + static_cast<std::size_t>(bound.unbound_cores) == whole.cores.size() &&
                  cpu.size() == 1 && cpu.front().info.cores == std::vector<int>{bound.cores.front().os_index};
  if (!ok) {
    std::fprintf(stderr, "bound to CPU %d: %zu core(s), %d unbound, the whole machine %zu, %zu CPU device(s)\n",
                 last, bound.cores.size(), bound.unbound_cores, whole.cores.size(), cpu.size());
  }
  return ok ? 0 : 1;
}

// A process a launcher bound to one core puts its CPU device there, and its
// profile stays the whole machine's. In a fresh process (the threadsafe death
// test style runs this test again from the start): threads started before the
// binding would keep the process's binding the whole machine's.
TEST(Topology, ABoundProcessKeepsToItsCores) {
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs 2 CPUs";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(std::exit(check_bound_process()), testing::ExitedWithCode(0), "");
}

TEST(Topology, OneSocketOneGpu) {
  const Topology t = fixture("one_socket_one_gpu.xml");
  EXPECT_FALSE(t.this_machine);
  ASSERT_EQ(t.packages.size(), 1u);
  ASSERT_EQ(t.numa_nodes.size(), 1u);
  ASSERT_EQ(t.cores.size(), 16u);
  EXPECT_EQ(t.hardware_threads(), 32);
  ASSERT_EQ(t.gpus.size(), 1u);
  const GpuInfo& g = t.gpus[0];
  EXPECT_EQ(g.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(g.memory_bytes, 81559ull * 1024 * 1024);
  EXPECT_EQ(g.sm_count, 132);
  EXPECT_EQ(g.compute_major, 9);
  EXPECT_EQ(g.pci_bus_id, "0000:1b:00.0");
  EXPECT_EQ(g.uuid.rfind("GPU-", 0), 0u);
  EXPECT_EQ(g.numa, 0);
  EXPECT_EQ(g.package, 0);

  // The GPU's host thread takes core 0; the CPU device keeps the other 15.
  const auto d = devices_of(t);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].info.name, "cpu0");
  EXPECT_EQ(d[0].info.cores.size(), 15u);
  EXPECT_EQ(d[0].info.cores.front(), 1);
  EXPECT_EQ(d[1].info.name, "gpu0");
  EXPECT_EQ(d[1].info.kind, DeviceKind::Gpu);
  EXPECT_EQ(d[1].info.cores, std::vector<int>{0});
  EXPECT_EQ(d[1].gpu, 0);
  for (const auto& spec : d) {
    for (const auto& w : spec.worker_cpus) EXPECT_TRUE(w.empty()) << "bound to another machine's cores";
  }
}

TEST(Topology, TwoSocketsWithGpusOnBoth) {
  const Topology t = fixture("two_sockets_four_gpus.xml");
  ASSERT_EQ(t.packages.size(), 2u);
  ASSERT_EQ(t.numa_nodes.size(), 2u);
  ASSERT_EQ(t.gpus.size(), 4u);
  EXPECT_EQ(t.gpus[1].package, 0);
  EXPECT_EQ(t.gpus[2].package, 1);
  EXPECT_EQ(t.gpus[3].numa, 1);
  EXPECT_EQ(t.gpus[3].memory_bytes, 143771ull * 1024 * 1024);

  const auto d = devices_of(t);
  ASSERT_EQ(d.size(), 6u);
  EXPECT_EQ(d[0].info.cores, (std::vector<int>{2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(d[1].info.cores, (std::vector<int>{10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(d[1].info.numa_node, 1);
  EXPECT_EQ(d[2].info.cores, std::vector<int>{0});
  EXPECT_EQ(d[3].info.cores, std::vector<int>{1});
  EXPECT_EQ(d[4].info.cores, std::vector<int>{8});
  EXPECT_EQ(d[5].info.cores, std::vector<int>{9});
}

TEST(Topology, FourSocketsMakeOneDevicePerNumaNode) {
  const Topology t = fixture("four_sockets.xml");
  ASSERT_EQ(t.packages.size(), 4u);
  ASSERT_EQ(t.numa_nodes.size(), 8u);
  ASSERT_EQ(t.cores.size(), 32u);
  EXPECT_TRUE(t.gpus.empty());
  const auto d = devices_of(t);
  ASSERT_EQ(d.size(), 8u);
  EXPECT_EQ(d[7].info.numa_node, 7);
  EXPECT_EQ(d[7].info.threads, 4);
  EXPECT_EQ(d[5].info.description.rfind("package 2,", 0), 0u) << d[5].info.description;
}

TEST(Topology, AGpuOfUnknownLocalityStillGetsAHostCore) {
  const Topology t = fixture("two_sockets_gpu_unknown_locality.xml");
  ASSERT_EQ(t.gpus.size(), 1u);
  EXPECT_EQ(t.gpus[0].numa, -1);
  EXPECT_EQ(t.gpus[0].package, -1);
  const auto d = devices_of(t);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[2].info.cores, std::vector<int>{0});  // the first NUMA node with cores
  EXPECT_NE(d[2].info.description.find("locality unknown"), std::string::npos) << d[2].info.description;
  EXPECT_EQ(d[0].info.cores, (std::vector<int>{1, 2, 3}));
}

TEST(DeviceMap, SelectionChoosesAndLeavesOut) {
  const Topology t = fixture("two_sockets_four_gpus.xml");
  const auto some = devices_of(t, "cpu1,gpu2");
  ASSERT_EQ(some.size(), 2u);
  EXPECT_EQ(some[0].info.name, "cpu1");
  // gpu3 is not chosen, so its core stays with cpu1.
  EXPECT_EQ(some[0].info.cores, (std::vector<int>{9, 10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(some[1].info.name, "gpu2");
  EXPECT_EQ(devices_of(t, "gpu").size(), 4u);
  const auto cpus_only = devices_of(t, "-gpu");
  ASSERT_EQ(cpus_only.size(), 2u);
  EXPECT_EQ(cpus_only[0].info.cores.size(), 8u) << "no GPU runs, so no core is reserved";
  const auto without = devices_of(t, "-gpu0,-cpu1");
  ASSERT_EQ(without.size(), 4u);
  // Without gpu0, gpu1 takes socket 0's first core and cpu0 keeps the other seven.
  EXPECT_EQ(without[0].info.cores, (std::vector<int>{1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(without[1].info.name, "gpu1");
  EXPECT_EQ(without[1].info.cores, std::vector<int>{0});
}

// Processes of one node that take a device each (--rank-devices local) must
// not all put their GPU's host thread on the node's first core.
TEST(DeviceMap, OneDeviceOfManyIsPlacedAsOneProcessWouldPlaceIt) {
  const Topology t = fixture("two_sockets_four_gpus.xml");
  const auto all = map_devices(t, DeviceMapOptions{});
  ASSERT_EQ(all.size(), 6u);
  for (const auto& whole : all) {
    DeviceMapOptions one;
    one.only = whole.info.name;
    const auto mine = map_devices(t, one);
    ASSERT_EQ(mine.size(), 1u);
    EXPECT_EQ(mine[0].info.name, whole.info.name);
    EXPECT_EQ(mine[0].info.cores, whole.info.cores) << whole.info.name;
  }
  DeviceMapOptions gpu1;
  gpu1.only = "gpu1";
  EXPECT_EQ(map_devices(t, gpu1)[0].info.cores, std::vector<int>{1}) << "gpu0's host thread keeps core 0";
  DeviceMapOptions missing;
  missing.selection = "gpu";
  missing.only = "cpu0";
  try {
    map_devices(t, missing);
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("does not offer 'cpu0'"), std::string::npos) << e.what();
  }
}

TEST(DeviceMap, BadSelectionsFailClearly) {
  const Topology t = fixture("one_socket_one_gpu.xml");
  try {
    devices_of(t, "cpu0,gpu7");
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("no device 'gpu7'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cpu0, gpu0"), std::string::npos) << e.what();
  }
  EXPECT_THROW(devices_of(t, "cpu0,-gpu0"), InvalidArgument);
  EXPECT_THROW(devices_of(t, "-cpu0,-gpu0"), InvalidArgument);
}

TEST(DeviceMap, CutsCoresIntoGroupsAndSharesWhenShort) {
  const Topology t = load_topology(TopologySource{"", "pack:1 numa:1 core:16 pu:1"});
  const auto three = devices_of(t, "", 3);
  ASSERT_EQ(three.size(), 3u);
  EXPECT_EQ(three[0].info.cores.size() + three[1].info.cores.size() + three[2].info.cores.size(), 16u);
  EXPECT_LE(three[2].info.cores.size() - three[0].info.cores.size(), 1u);
  const Topology two = load_topology(TopologySource{"", "pack:1 numa:1 core:2 pu:1"});
  const auto four = map_devices(two, DeviceMapOptions{4, 3, "", true, {}});
  ASSERT_EQ(four.size(), 4u);
  EXPECT_EQ(four[2].info.cores, std::vector<int>{0});
  EXPECT_EQ(four[2].info.threads, 3);
  EXPECT_THROW(map_devices(two, DeviceMapOptions{-1, 0, "", true, {}}), InvalidArgument);
}

// The message a bad source gets (empty when it loads).
std::string failure_of(const TopologySource& source) {
  try {
    load_topology(source);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

std::string file_failure(const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("bad_topology_" + std::to_string(getpid()) + ".xml");
  { std::ofstream(path) << text; }
  const std::string message = failure_of(TopologySource{path.string(), ""});
  std::filesystem::remove(path);
  return message;
}

// The file is checked before hwloc reads it, so that every hwloc build (with or
// without its XML plugin) gives the same messages.
TEST(Topology, BadSourcesFailClearly) {
  EXPECT_EQ(failure_of(TopologySource{"/nonexistent/topo.xml", ""}),
            "topology file '/nonexistent/topo.xml' does not exist");
  const std::string folder = std::filesystem::temp_directory_path().string();
  EXPECT_NE(failure_of(TopologySource{folder, ""}).find("topology file '" + folder + "' is a directory"),
            std::string::npos);
  EXPECT_NE(failure_of(TopologySource{"/dev/null", ""}).find("'/dev/null' is not a regular file"), std::string::npos);
  EXPECT_NE(file_failure("").find("' is empty"), std::string::npos);
  EXPECT_NE(file_failure("cores: 8\n").find("is not an hwloc XML topology (no <topology> element)"), std::string::npos);
  EXPECT_NE(file_failure("<?xml version=\"1.0\"?>\n<machine/>\n").find("is not an hwloc XML topology"),
            std::string::npos);
  EXPECT_NE(file_failure("<topology><object type=\"Machine\"").find("is not a valid hwloc XML topology"),
            std::string::npos);
  EXPECT_NE(file_failure("<?xml version=\"1.0\"?><!DOCTYPE t [<!ENTITY a \"aaaa\">]><topology>&a;</topology>")
                .find("declares XML entities"),
            std::string::npos);
  EXPECT_NE(failure_of(TopologySource{"", "pack:banana"}).find("'pack:banana' is not an hwloc synthetic topology"),
            std::string::npos);
  // A huge description is not echoed whole.
  const std::string huge(100000, 'x');
  const std::string message = failure_of(TopologySource{"", huge});
  EXPECT_NE(message.find("is not an hwloc synthetic topology"), std::string::npos) << message;
  EXPECT_LT(message.size(), 400u);
}

TEST(Topology, JsonHasSocketsGpusAndLinks) {
  const auto j = nlohmann::json::parse(to_json(fixture("two_sockets_four_gpus.xml")));
  ASSERT_EQ(j["sockets"].size(), 2u);
  EXPECT_EQ(j["sockets"][1]["numa_nodes"][0]["cores"].size(), 8u);
  ASSERT_EQ(j["gpus"].size(), 4u);
  EXPECT_EQ(j["gpus"][2]["numa_node"], 1);
  EXPECT_EQ(j["gpus"][2]["name"], "NVIDIA H200");
  EXPECT_EQ(j["links"].size(), 12u);
  EXPECT_EQ(j["schema"], "hetstencil-topology");
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["hetstencil_version"], version());
}

}  // namespace
}  // namespace hetstencil
