#include "model/process_links.hpp"

#include <nlohmann/json.hpp>

#include "core/schema.hpp"

namespace hetstencil {

std::string process_links_json(const std::vector<ProcessLink>& links, std::size_t ghost_bytes,
                               const std::string& method) {
  nlohmann::json list = nlohmann::json::array();
  for (std::size_t r = 0; r < links.size(); ++r) {
    list.push_back({{"from", r}, {"to", r + 1}, {"latency_s", links[r].down.latency_s},
                    {"bytes_per_s", links[r].down.bytes_per_s}});
    list.push_back({{"from", r + 1}, {"to", r}, {"latency_s", links[r].up.latency_s},
                    {"bytes_per_s", links[r].up.bytes_per_s}});
  }
  nlohmann::json j;
  stamp_schema(j, kProcessLinksSchema);
  j["processes"] = links.size() + 1;
  j["ghost_bytes"] = ghost_bytes;
  j["method"] = method;
  j["links"] = list;
  return j.dump(2) + "\n";
}

std::string process_links_path(const std::string& profile_path) {
  const std::string suffix = ".json";
  const bool ends = profile_path.size() >= suffix.size() &&
                    profile_path.compare(profile_path.size() - suffix.size(), suffix.size(), suffix) == 0;
  return (ends ? profile_path.substr(0, profile_path.size() - suffix.size()) : profile_path) + ".links.json";
}

}  // namespace hetstencil
