// The names and versions of the JSON formats hetstencil writes
// (docs/json-formats.md describes each). Every object written carries its
// "schema", "schema_version" and the "hetstencil_version" that wrote it, so a
// reader can tell what it holds and refuse what it cannot read. A version goes
// up when a key changes meaning or goes away; new keys alone keep it.
#pragma once

#include <string>

#include "hetstencil/version.hpp"

namespace hetstencil {

struct Schema {
  const char* name;
  int version;
};

inline constexpr Schema kReportSchema{"hetstencil-report", 1};
inline constexpr Schema kPlanSchema{"hetstencil-plan", 1};
// Profiles named by the older "format" key (hetstencil-profile-1 and -2) are read too.
inline constexpr Schema kProfileSchema{"hetstencil-profile", 3};
inline constexpr Schema kTopologySchema{"hetstencil-topology", 1};
inline constexpr Schema kDevicesSchema{"hetstencil-devices", 1};
inline constexpr Schema kStencilSchema{"hetstencil-stencil", 1};
inline constexpr Schema kClusterSchema{"hetstencil-cluster", 1};
inline constexpr Schema kProcessLinksSchema{"hetstencil-process-links", 1};
inline constexpr Schema kTuneSchema{"hetstencil-tune", 1};

/// Adds the schema's name and version and hetstencil's version to the JSON object `j`.
template <typename Json>
void stamp_schema(Json& j, const Schema& schema) {
  j["schema"] = schema.name;
  j["schema_version"] = schema.version;
  j["hetstencil_version"] = HETSTENCIL_VERSION_STRING;
}

/// Why `j` is not of `schema` in a version this build reads ("" when it is): a
/// JSON object without "schema" is taken as unversioned and accepted.
template <typename Json>
std::string schema_mismatch(const Json& j, const Schema& schema) {
  if (!j.is_object() || !j.contains("schema")) return "";
  const std::string reads =
      std::string("; this hetstencil reads schema '") + schema.name + "' version " + std::to_string(schema.version) + " and older";
  const Json& name = j.at("schema");
  if (!name.is_string() || name.template get<std::string>() != schema.name) {
    return "its schema is " + name.dump().substr(0, 80) + reads;
  }
  const auto version = j.find("schema_version");
  if (version == j.end() || !version->is_number_integer() || version->template get<long long>() < 1 ||
      version->template get<long long>() > schema.version) {
    return "its " + std::string(schema.name) + " version is " +
           (version == j.end() ? std::string("missing") : version->dump().substr(0, 80)) + reads;
  }
  return "";
}

}  // namespace hetstencil
