// The links between neighbouring processes of a solve, as measured under the
// launcher, and the file that keeps them (schema hetstencil-process-links).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "model/curves.hpp"

namespace hetstencil {

/// The messages between neighbouring processes r and r + 1 (a solve's
/// processes exchange only with those).
struct ProcessLink {
  TransferCurve down;  ///< rank r to r + 1
  TransferCurve up;    ///< rank r + 1 to r
};

/// `links` (element r: ranks r and r + 1) as JSON of schema
/// hetstencil-process-links, with the ghost rows' bytes they were measured
/// around and how (`method`, in words).
std::string process_links_json(const std::vector<ProcessLink>& links, std::size_t ghost_bytes,
                               const std::string& method);

/// Where a profile's process links are kept: "DIR/HOST.json" -> "DIR/HOST.links.json".
std::string process_links_path(const std::string& profile_path);

}  // namespace hetstencil
