#include <string>

#include "hetstencil/error.hpp"

namespace hetstencil {

std::string as_typed(const std::string& text) {
  constexpr std::size_t kShown = 24;
  std::string shown = text.size() > kShown ? text.substr(0, kShown) : text;
  for (char& c : shown) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  if (text.size() > kShown) return "'" + shown + "...' (" + std::to_string(text.size()) + " characters)";
  return "'" + shown + "'";
}

}  // namespace hetstencil
