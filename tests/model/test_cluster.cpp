// Cluster profiles and the projection over nodes: its arithmetic on a
// hand-made cluster, and refusals naming the bad field.
#include <cstdio>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hetstencil/error.hpp"
#include "hetstencil/projection.hpp"
#include "model/cluster.hpp"

namespace hetstencil {
namespace {

// One CPU device sweeping a row of 100 doubles in 1 us, no loop cost; the
// network 1 ms + bytes at 1 GB/s.
nlohmann::json small_cluster() {
  return nlohmann::json::parse(R"({
    "schema": "hetstencil-cluster", "schema_version": 1,
    "node": {"format": "hetstencil-profile-1",
             "fingerprint": {"host": "hand", "cpu_model": "hand", "sockets": 1, "cores": 1, "gpus": [],
                             "driver_version": 0, "kernels": "hand"},
             "devices": {"cpu0": {"kind": "cpu", "rates": {"double/100": [[1, 1e-6], [100, 1e-4]]}}},
             "links": {}},
    "devices": ["cpu0"],
    "network": {"latency_s": 1e-3, "bytes_per_s": 1e9, "source": "assumed for the test"}})");
}

std::string written(const nlohmann::json& cluster) {
  const std::string path = ::testing::TempDir() + "cluster_" +
                           ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".json";
  std::ofstream(path) << cluster.dump();
  return path;
}

Problem grid(std::int64_t ny) {
  Problem p;
  p.nx = 100;
  p.ny = ny;
  p.precision = Precision::Double;
  p.stop.max_iterations = 10;
  return p;
}

TEST(Projection, TwoNodesAddTheNetworksTripToHalfTheSweep) {
  const Projection p = project(written(small_cluster()), grid(100), {1, 2});
  ASSERT_EQ(p.rows.size(), 2u);
  const double link = 1e-3 + static_cast<double>(row_bytes(100, Precision::Double)) / 1e9;
  EXPECT_NEAR(p.rows[0].iteration_s, 100e-6, 1e-9);
  EXPECT_NEAR(p.rows[1].iteration_s, 50e-6 + link, 1e-9);
  EXPECT_NEAR(p.rows[1].speedup, 100e-6 / (50e-6 + link), 1e-9);
  EXPECT_NEAR(p.rows[1].efficiency, p.rows[1].speedup / 2, 1e-12);
  // Weak: each node keeps 100 rows and pays the trip too.
  EXPECT_NEAR(p.rows[1].weak_iteration_s, 100e-6 + link, 1e-9);
  EXPECT_NEAR(p.rows[1].weak_efficiency, 100e-6 / (100e-6 + link), 1e-9);
  // A middle node hears from both sides: two trips.
  EXPECT_NEAR(project(written(small_cluster()), grid(99), {3}).rows[0].iteration_s, 33e-6 + 2 * link, 1e-9);
  ASSERT_FALSE(p.assumptions.empty());
  EXPECT_NE(p.assumptions[0].find("1000.00 us + bytes at 1.00 GB/s"), std::string::npos) << p.assumptions[0];
  EXPECT_NE(p.assumptions[0].find("assumed for the test"), std::string::npos);
}

TEST(Projection, RefusesANodeCountBelowOne) {
  EXPECT_THROW(project(written(small_cluster()), grid(100), {0}), InvalidArgument);
}

// The refusal's message for `cluster`.
std::string refusal(const nlohmann::json& cluster) {
  try {
    cluster_from_json(cluster.dump(), "c.json");
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "accepted";
}

TEST(ClusterProfile, RefusalsNameTheField) {
  nlohmann::json c = small_cluster();
  c["network"].erase("bytes_per_s");
  EXPECT_NE(refusal(c).find("c.json: network.bytes_per_s is missing"), std::string::npos) << refusal(c);
  c = small_cluster();
  c["network"]["latency_s"] = -1;
  EXPECT_NE(refusal(c).find("network.latency_s must be a number >= 0"), std::string::npos) << refusal(c);
  c = small_cluster();
  c["network"]["bytes_per_s"] = 0;
  EXPECT_NE(refusal(c).find("network.bytes_per_s must be a number > 0"), std::string::npos) << refusal(c);
  c = small_cluster();
  c["network"].erase("source");
  EXPECT_NE(refusal(c).find("network.source must say where"), std::string::npos) << refusal(c);
  c = small_cluster();
  c["devices"] = {"gpu9"};
  EXPECT_NE(refusal(c).find("devices names \"gpu9\", which is no device"), std::string::npos) << refusal(c);
  c = small_cluster();
  c.erase("node");
  EXPECT_NE(refusal(c).find("c.json: node must be a profile"), std::string::npos) << refusal(c);
  c = small_cluster();
  c["schema"] = "hetstencil-plan";
  EXPECT_NE(refusal(c).find("hetstencil-cluster"), std::string::npos) << refusal(c);
  c = small_cluster();
  c.erase("schema");
  EXPECT_NE(refusal(c).find("c.json: schema is missing"), std::string::npos) << refusal(c);
  EXPECT_EQ(refusal(small_cluster()), "accepted");
}

TEST(ClusterProfile, TheFixtureReads) {
  std::ifstream in(std::string(HETSTENCIL_FIXTURES) + "/clusters/eight_h200_nodes.json");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const Cluster c = cluster_from_json(text);
  EXPECT_EQ(c.devices.size(), 8u);
  EXPECT_NE(c.network_source.find("assumed"), std::string::npos);
}

}  // namespace
}  // namespace hetstencil
