#include "hetstencil/projection.hpp"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <spdlog/fmt/fmt.h>

#include "core/even_split.hpp"
#include "hetstencil/error.hpp"
#include "model/cluster.hpp"
#include "model/predict.hpp"
#include "partition/policy.hpp"

namespace hetstencil {

namespace {

std::string read_cluster(const std::string& path) {
  std::error_code error;
  // Never opened otherwise: a FIFO would block the read.
  if (!std::filesystem::is_regular_file(path, error)) {
    HETSTENCIL_THROW(InvalidArgument, "the cluster profile " + path + " is not a regular file");
  }
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) HETSTENCIL_THROW(InvalidArgument, "cannot read the cluster profile " + path);
  return text.str();
}

// One node count's prediction for `rows` rows in all.
double iteration_s(const Cluster& cluster, const std::vector<DeviceInfo>& node, const Problem& problem,
                   const VariantChoice& variant, int nodes, std::int64_t rows) {
  if (rows < nodes) {
    HETSTENCIL_THROW(InvalidArgument, std::to_string(nodes) + " nodes for " + std::to_string(rows) +
                                          " rows: every node takes a row at least");
  }
  Topology described;  // another machine: no memory bounds known
  described.this_machine = false;
  // A node's split by its model, for each node's count of rows (at most two differ).
  std::map<std::int64_t, std::vector<std::int64_t>> splits;
  Profile all;
  std::vector<PlannedDevice> planned;
  for (int k = 0; k < nodes; ++k) {
    const std::int64_t mine = even_block(rows, nodes, k).size();
    auto split = splits.find(mine);
    if (split == splits.end()) {
      Problem part = problem;
      part.ny = mine;
      std::vector<std::int64_t> shares(node.size(), 0);
      for (const Assignment& a : model_plan(cluster.node, node, described, part, variant).parts) shares[a.device] = a.rows;
      split = splits.emplace(mine, shares).first;
    }
    const std::string prefix = "n" + std::to_string(k) + ".";
    for (std::size_t d = 0; d < node.size(); ++d) {
      all.devices[prefix + node[d].name] = cluster.node.devices.at(node[d].name);
      for (std::size_t e = 0; e < node.size(); ++e) {
        const auto link = cluster.node.links.find(link_key(node[d].name, node[e].name));
        if (link != cluster.node.links.end()) all.links[link_key(prefix + node[d].name, prefix + node[e].name)] = link->second;
        if (k + 1 == nodes) continue;
        const std::string next = "n" + std::to_string(k + 1) + ".";
        all.links[link_key(prefix + node[d].name, next + node[e].name)] = cluster.network;
        all.links[link_key(next + node[e].name, prefix + node[d].name)] = cluster.network;
      }
      planned.push_back(PlannedDevice{prefix + node[d].name, node[d].kind, split->second[d]});
    }
  }
  return predict(all, planned, problem.precision, problem.nx, problem.stop, variant).iteration_s;
}

}  // namespace

Projection project(const std::string& cluster_path, const Problem& problem, const std::vector<int>& nodes,
                   const VariantChoice& variant) {
  const Cluster cluster = cluster_from_json(read_cluster(cluster_path), cluster_path);
  if (problem.dimension() != 2 || !is_poisson5(problem.stencil)) {
    HETSTENCIL_THROW(InvalidArgument, "a projection models the poisson5 stencil alone");
  }
  std::vector<DeviceInfo> node;
  for (const std::string& name : cluster.devices) {
    DeviceInfo d;
    d.name = name;
    d.kind = kind_of(cluster.node.devices.at(name));
    node.push_back(d);
  }
  Projection out;
  double one = 0.0, weak_one = 0.0;
  for (int n : nodes) {
    if (n < 1) HETSTENCIL_THROW(InvalidArgument, "a node count must be 1 or more, not " + std::to_string(n));
    if (one == 0.0) {
      one = iteration_s(cluster, node, problem, variant, 1, problem.ny);
      weak_one = one;
    }
    ProjectedNodes p;
    p.nodes = n;
    p.iteration_s = iteration_s(cluster, node, problem, variant, n, problem.ny);
    p.speedup = one / p.iteration_s;
    p.efficiency = p.speedup / n;
    p.weak_iteration_s = iteration_s(cluster, node, problem, variant, n, problem.ny * n);
    p.weak_efficiency = weak_one / p.weak_iteration_s;
    out.rows.push_back(p);
  }
  out.assumptions = {
      fmt::format("network between neighbouring nodes: {:.2f} us + bytes at {:.2f} GB/s a message ({})",
                  cluster.network.latency_s * 1e6, cluster.network.bytes_per_s / 1e9, cluster.network_source),
      "nodes in a row, each exchanging ghost rows with the next over the network; the network's trips overlap a "
      "GPU's interior sweep as a link within a node does, and a CPU device waits for them",
      "rows split evenly over the nodes (the nodes are equal), then over a node's devices by the node's model",
      "GPU memory is not checked: a node's share must fit in it",
      "residual checks are not priced: a check gathers from each node the few nodes of the residual's sum tree "
      "its rows cover (at most 2 log2(ny) + 1 numbers), one all-gather of a few hundred bytes a node",
  };
  return out;
}

}  // namespace hetstencil
