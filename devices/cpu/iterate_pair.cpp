#include "devices/cpu/iterate_pair.hpp"

namespace hetstencil {

std::size_t IteratePair::second_offset(std::size_t bytes) {
  return (bytes + kIterateAlias - 1) / kIterateAlias * kIterateAlias + kIterateStagger;
}

IteratePair::IteratePair(std::size_t bytes, int node, const std::string& owner)
    : memory_(bytes == 0 ? 0 : mapped_bytes(bytes), node, owner), second_(second_offset(bytes)) {}

}  // namespace hetstencil
