// The two iterates of a CPU slab (iterate t in data(t % 2)), in one mapping,
// the second placed kIterateStagger bytes past a whole number of
// kIterateAlias from the first.
//
// Two separate mappings land wherever mmap finds room, and their distance
// sets a sweep's pace for a whole solve. On the H200 guest (Xeon, 15 workers,
// a 5-point sweep of double rows 8192 wide, 820 and 1640 rows, 16 rounds a
// distance), iterates 64, 128, 220, 256, 257, 258, 262 or 512 MiB apart swept
// at 1.9-2.0 us a row by the median, slower than the same sweep from memory
// (1.5-1.8 us a row at 6000 rows); 2 KiB, 4 KiB or 64 KiB off such a
// multiple, at 0.86-0.88 us. What the two collide in at such distances the
// guest cannot see; that the fixed distance avoids it is measured
// (docs/model.md, "Where the iterates lie"). The distance is a virtual one: it
// holds in physical memory where the pages are huge, which NumaBuffer asks for
// (and the guest gave, 2 MiB pages, in that measurement).
#pragma once

#include <cstddef>
#include <string>

#include "devices/cpu/numa_buffer.hpp"

namespace hetstencil {

/// The distances between the iterates that sweep slowly are multiples of this.
constexpr std::size_t kIterateAlias = std::size_t(1) << 20;
/// The iterates' distance past such a multiple (one of the fast distances).
constexpr std::size_t kIterateStagger = std::size_t(64) << 10;

class IteratePair {
 public:
  IteratePair() = default;
  /// Two iterates of `bytes` each on NUMA node `node` (< 0: anywhere);
  /// pages are placed when first touched.
  IteratePair(std::size_t bytes, int node, const std::string& owner);

  /// Where the second iterate begins, from the first.
  static std::size_t second_offset(std::size_t bytes);
  /// Bytes the mapping of two iterates of `bytes` takes.
  static std::size_t mapped_bytes(std::size_t bytes) { return second_offset(bytes) + bytes; }

  /// Iterate 0 or 1.
  void* data(int which) const {
    char* first = static_cast<char*>(memory_.data());
    return first && which != 0 ? first + second_ : first;
  }

 private:
  NumaBuffer memory_;
  std::size_t second_ = 0;
};

}  // namespace hetstencil
