/// \file
/// Projection: what the model predicts for a solve over many nodes of a
/// cluster we may not have, from a cluster profile (a node's profile and the
/// network between nodes; docs/json-formats.md), for strong and weak scaling.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hetstencil/export.hpp"
#include "hetstencil/plan.hpp"
#include "hetstencil/problem.hpp"

namespace hetstencil {

/// The model's figures for one node count.
struct ProjectedNodes {
  int nodes = 1;                    ///< nodes in the solve
  double iteration_s = 0.0;         ///< strong scaling: the problem's grid over `nodes` nodes
  double speedup = 1.0;             ///< one node's iteration_s over this one's
  double efficiency = 1.0;          ///< speedup / nodes
  double weak_iteration_s = 0.0;    ///< weak scaling: the problem's grid on every node (ny * nodes rows)
  double weak_efficiency = 1.0;     ///< one node's weak_iteration_s over this one's
};

/// A projection and the assumptions it rests on.
struct Projection {
  std::vector<ProjectedNodes> rows;      ///< one per node count, as asked
  std::vector<std::string> assumptions;  ///< in words: the network's figures and their source, the split
};

/// The model's iteration time of `problem` (a 2-D grid of the poisson5
/// stencil, GPUs sweeping by `variant`) over each of `nodes` node counts of
/// the cluster profile at `cluster_path`. Nodes in a row, each with the
/// next's ghost rows over the network; rows split evenly over the nodes
/// (equal nodes), then over a node's devices by the node's model; nothing
/// overlaps the network's trips but what overlaps a device's exchange within
/// a node. Throws InvalidArgument naming a bad field of the file, a node count
/// below 1, or a device without a curve for the problem.
HETSTENCIL_API Projection project(const std::string& cluster_path, const Problem& problem, const std::vector<int>& nodes,
                                  const VariantChoice& variant = {});

}  // namespace hetstencil
