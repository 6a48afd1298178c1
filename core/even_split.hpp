// Equal shares: `total` items cut into `parts` contiguous blocks whose sizes
// differ by at most one (the larger blocks come last).
#pragma once

#include <cstdint>

namespace hetstencil {

struct Block {
  std::int64_t begin = 0;
  std::int64_t end = 0;
  std::int64_t size() const { return end - begin; }
};

/// Block k of `parts` over [0, total).
inline Block even_block(std::int64_t total, std::int64_t parts, std::int64_t k) {
  return {total * k / parts, total * (k + 1) / parts};
}

}  // namespace hetstencil
