#include <nlohmann/json.hpp>

#include "hetstencil/device_info.hpp"
#include "hetstencil/report.hpp"

namespace hetstencil {

std::string to_json(const Report& r, int indent) {
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& d : r.devices) {
    devices.push_back({{"name", d.name},
                       {"first_row", d.first_row},
                       {"rows", d.rows},
                       {"compute_s", d.compute_s},
                       {"exchange_s", d.exchange_s},
                       {"check_s", d.check_s},
                       {"total_s", d.total_s},
                       {"compute_p90_s", d.compute_p90_s}});
  }
  const nlohmann::json j = {
      {"nx", r.nx},
      {"ny", r.ny},
      {"precision", to_string(r.precision)},
      {"iterations", r.iterations},
      {"converged", r.converged},
      {"residual", {{"l2", r.residual.l2}, {"max", r.residual.max}}},
      {"initial_residual", {{"l2", r.initial_residual.l2}, {"max", r.initial_residual.max}}},
      {"setup_s", r.setup_s},
      {"solve_s", r.solve_s},
      {"teardown_s", r.teardown_s},
      {"gcells_per_s", r.gcells_per_s},
      {"devices", devices},
  };
  return j.dump(indent);
}

std::string to_json(const std::vector<DeviceInfo>& devices, int indent) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& d : devices) {
    out.push_back({{"name", d.name},
                   {"kind", d.kind == DeviceKind::Cpu ? "cpu" : "gpu"},
                   {"numa_node", d.numa_node},
                   {"cores", d.cores},
                   {"threads", d.threads},
                   {"description", d.description}});
  }
  return out.dump(indent);
}

}  // namespace hetstencil
