#include "hetstencil/variant.hpp"
#include "hetstencil/error.hpp"

namespace hetstencil {

std::string to_string(Variant v) {
  switch (v) {
    case Variant::Sync: return "sync";
    case Variant::Async2: return "async2";
    case Variant::Async3: return "async3";
    case Variant::Blocked: return "blocked";
  }
  return "?";
}

Variant parse_variant(const std::string& text) {
  for (Variant v : {Variant::Sync, Variant::Async2, Variant::Async3, Variant::Blocked}) {
    if (text == to_string(v)) return v;
  }
  HETSTENCIL_THROW(InvalidArgument, "unknown variant '" + text + "' (sync, async2, async3 or blocked)");
}

}  // namespace hetstencil
