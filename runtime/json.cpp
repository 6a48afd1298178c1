#include <nlohmann/json.hpp>

#include "core/schema.hpp"
#include "hetstencil/device_info.hpp"

namespace hetstencil {

std::string to_json(const std::vector<DeviceInfo>& devices, int indent) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& d : devices) {
    list.push_back({{"name", d.name},
                    {"kind", d.kind == DeviceKind::Cpu ? "cpu" : "gpu"},
                    {"numa_node", d.numa_node},
                    {"cores", d.cores},
                    {"threads", d.threads},
                    {"description", d.description}});
  }
  nlohmann::json out = {{"devices", list}};
  stamp_schema(out, kDevicesSchema);
  return out.dump(indent);
}

}  // namespace hetstencil
