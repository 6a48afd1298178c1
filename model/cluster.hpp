// A cluster profile: a machine we may not have, as one node's profile, the
// devices of a node that take part, and the network between neighbouring
// nodes. What a projection to many nodes prices.
#pragma once

#include <string>
#include <vector>

#include "model/curves.hpp"
#include "model/profile.hpp"

namespace hetstencil {

struct Cluster {
  Profile node;                      ///< a node's profile, keyed by its devices' names as measured
  std::vector<std::string> devices;  ///< the node's devices that take part, by those names
  TransferCurve network;             ///< one message's trip between neighbouring nodes
  std::string network_source;        ///< where the network's figures come from ("assumed: ...")
};

/// Reads a cluster profile (schema hetstencil-cluster, docs/json-formats.md);
/// throws InvalidArgument naming the field that is missing or malformed and
/// `source`.
Cluster cluster_from_json(const std::string& text, const std::string& source = "the cluster profile");

}  // namespace hetstencil
