#include "model/cluster.hpp"

#include <cmath>

#include <nlohmann/json.hpp>

#include "core/schema.hpp"
#include "hetstencil/error.hpp"

namespace hetstencil {

namespace {

[[noreturn]] void refuse(const std::string& source, const std::string& field, const std::string& why) {
  HETSTENCIL_THROW(InvalidArgument, source + ": " + field + " " + why);
}

double positive(const nlohmann::json& object, const std::string& source, const std::string& field, bool zero_too) {
  const auto it = object.find(field);
  if (it == object.end()) refuse(source, "network." + field, "is missing");
  if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < 0.0 ||
      (!zero_too && it->get<double>() == 0.0)) {
    refuse(source, "network." + field, std::string("must be a number ") + (zero_too ? ">= 0" : "> 0"));
  }
  return it->get<double>();
}

}  // namespace

Cluster cluster_from_json(const std::string& text, const std::string& source) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    HETSTENCIL_THROW(InvalidArgument, source + " is not JSON");
  }
  if (!j.is_object()) HETSTENCIL_THROW(InvalidArgument, source + " is not a JSON object");
  if (!j.contains("schema")) refuse(source, "schema", "is missing (hetstencil-cluster)");
  if (const std::string why = schema_mismatch(j, kClusterSchema); !why.empty()) {
    HETSTENCIL_THROW(InvalidArgument, source + ": " + why);
  }
  Cluster c;
  if (!j.contains("node") || !j.at("node").is_object()) refuse(source, "node", "must be a profile (a JSON object)");
  c.node = named_as_measured(profile_from_json(j.at("node").dump(), source + "'s node"));
  const auto devices = j.find("devices");
  if (devices == j.end() || !devices->is_array() || devices->empty()) {
    refuse(source, "devices", "must list the node's devices that take part");
  }
  for (const auto& d : *devices) {
    if (!d.is_string() || !c.node.devices.count(d.get<std::string>())) {
      refuse(source, "devices", "names " + d.dump().substr(0, 40) + ", which is no device of the node's profile");
    }
    c.devices.push_back(d.get<std::string>());
  }
  const auto network = j.find("network");
  if (network == j.end() || !network->is_object()) refuse(source, "network", "must be an object");
  c.network.latency_s = positive(*network, source, "latency_s", true);
  c.network.bytes_per_s = positive(*network, source, "bytes_per_s", false);
  const auto note = network->find("source");
  if (note == network->end() || !note->is_string() || note->get<std::string>().empty()) {
    refuse(source, "network.source", "must say where the figures come from (\"assumed: ...\" or a measurement)");
  }
  c.network_source = note->get<std::string>();
  return c;
}

}  // namespace hetstencil
