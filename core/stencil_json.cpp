// Stencil descriptions in JSON (docs/stencils.md): every fault is reported with
// the file and the field it is in, as "FILE: points[3].offset: ...".
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/schema.hpp"
#include "core/stencil_check.hpp"
#include "hetstencil/error.hpp"
#include "hetstencil/stencil.hpp"

namespace hetstencil {
namespace {

using nlohmann::json;

struct Fault {
  std::string what;  // "field: what"
};

[[noreturn]] void fault(const std::string& field, const std::string& what) { throw Fault{field + ": " + what}; }

std::string shown(const json& j) { return j.dump().substr(0, 60); }

const json& member(const json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end()) fault(key, "missing");
  return *it;
}

double number(const json& j, const std::string& field) {
  if (!j.is_number()) fault(field, "expected a number, got " + shown(j));
  return j.get<double>();
}

int offset_value(const json& j, const std::string& field, const char* axis) {
  if (!j.is_number_integer()) fault(field, std::string(axis) + " must be a whole number, got " + shown(j));
  const long long v = j.get<long long>();
  if (v > kMaxStencilRadius || v < -kMaxStencilRadius) {
    fault(field, std::string(axis) + " = " + std::to_string(v) + " is beyond radius " + std::to_string(kMaxStencilRadius));
  }
  return static_cast<int>(v);
}

SourceScale source_scale(const json& j) {
  if (j.is_number()) return SourceScale{j.get<double>(), false};
  if (!j.is_object()) fault("source_scale", "expected a number or {\"factor\": F, \"times_h2\": true}, got " + shown(j));
  SourceScale s;
  if (j.contains("factor")) s.factor = number(j.at("factor"), "source_scale.factor");
  if (j.contains("times_h2")) {
    if (!j.at("times_h2").is_boolean()) fault("source_scale.times_h2", "expected true or false, got " + shown(j.at("times_h2")));
    s.times_h2 = j.at("times_h2").get<bool>();
  }
  return s;
}

Stencil from_json(const json& j) {
  if (!j.is_object()) fault("the top level", "expected a JSON object, got " + shown(j));
  const std::string mismatch = schema_mismatch(j, kStencilSchema);
  if (!mismatch.empty()) fault("schema", mismatch);
  Stencil s;
  const json& name = member(j, "name");
  if (!name.is_string() || name.get<std::string>().empty()) fault("name", "expected a non-empty string, got " + shown(name));
  s.name = name.get<std::string>();
  const json& dimension = member(j, "dimension");
  if (!dimension.is_number_integer() || (dimension.get<long long>() != 2 && dimension.get<long long>() != 3)) {
    fault("dimension", "must be 2 or 3, got " + shown(dimension));
  }
  s.dimension = static_cast<int>(dimension.get<long long>());
  s.diagonal = number(member(j, "diagonal"), "diagonal");
  if (j.contains("source_scale")) s.source_scale = source_scale(j.at("source_scale"));
  if (j.contains("variable")) {
    if (!j.at("variable").is_boolean()) fault("variable", "expected true or false, got " + shown(j.at("variable")));
    s.variable = j.at("variable").get<bool>();
  }
  const json& points = member(j, "points");
  if (!points.is_array()) fault("points", "expected an array, got " + shown(points));
  const char* names = s.dimension == 3 ? "[dx, dy, dz]" : "[dx, dy]";
  for (std::size_t k = 0; k < points.size(); ++k) {
    const std::string field = "points[" + std::to_string(k) + "]";
    const json& point = points[k];
    if (!point.is_object()) fault(field, "expected {\"offset\": " + std::string(names) + ", \"weight\": W}, got " + shown(point));
    const auto offset = point.find("offset");
    if (offset == point.end()) fault(field + ".offset", "missing");
    if (!offset->is_array() || offset->size() != static_cast<std::size_t>(s.dimension)) {
      fault(field + ".offset", "expected " + std::string(names) + " in a " + std::to_string(s.dimension) +
                                   "-D stencil, got " + shown(*offset));
    }
    StencilPoint p;
    p.dx = offset_value((*offset)[0], field + ".offset", "dx");
    p.dy = offset_value((*offset)[1], field + ".offset", "dy");
    if (s.dimension == 3) p.dz = offset_value((*offset)[2], field + ".offset", "dz");
    const auto weight = point.find("weight");
    if (weight == point.end()) fault(field + ".weight", "missing");
    p.weight = number(*weight, field + ".weight");
    s.points.push_back(p);
  }
  const std::string check = stencil_fault(s);
  if (!check.empty()) throw Fault{check};
  return s;
}

}  // namespace

Stencil parse_stencil(const std::string& json_text, const std::string& origin) {
  json j;
  try {
    j = json::parse(json_text);
  } catch (const json::parse_error& e) {
    HETSTENCIL_THROW(InvalidArgument, origin + ": not valid JSON (at byte " + std::to_string(e.byte) + ")");
  }
  try {
    return from_json(j);
  } catch (const Fault& f) {
    HETSTENCIL_THROW(InvalidArgument, origin + ": " + f.what);
  }
}

Stencil read_stencil(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) HETSTENCIL_THROW(InvalidArgument, "cannot open the stencil file " + as_typed(path));
  std::ostringstream text;
  text << in.rdbuf();
  return parse_stencil(text.str(), path);
}

std::string stencil_json(const Stencil& s) {
  json j;
  stamp_schema(j, kStencilSchema);
  j["name"] = s.name;
  j["dimension"] = s.dimension;
  j["diagonal"] = s.diagonal;
  j["source_scale"] = {{"factor", s.source_scale.factor}, {"times_h2", s.source_scale.times_h2}};
  if (s.variable) j["variable"] = true;
  j["points"] = json::array();
  for (const StencilPoint& p : s.points) {
    json offset = json::array({p.dx, p.dy});
    if (s.dimension == 3) offset.push_back(p.dz);
    j["points"].push_back({{"offset", offset}, {"weight", p.weight}});
  }
  return j.dump(2) + "\n";
}

Stencil stencil_named(const std::string& name_or_path) {
  std::string names;
  for (const std::string& name : builtin_stencil_names()) {
    if (name == name_or_path) return Stencil::builtin(name);
    names += (names.empty() ? "" : ", ") + name;
  }
  if (!std::ifstream(name_or_path)) {
    HETSTENCIL_THROW(InvalidArgument, "no built-in stencil is called " + as_typed(name_or_path) +
                                          " and no stencil file can be opened there (built-ins: " + names + ")");
  }
  return read_stencil(name_or_path);
}

}  // namespace hetstencil
