#include "devices/cpu/iterate_pair.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

namespace hetstencil {
namespace {

std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

TEST(IteratePair, TheSecondIterateLiesTheStaggerPastAMultipleOfTheAliasAndOverlapsNothing) {
  for (std::size_t bytes : {std::size_t(64), std::size_t(4096) * 3 + 8, kIterateAlias - 8, kIterateAlias,
                            kIterateAlias + 8, 5 * kIterateAlias + 123456}) {
    IteratePair pair(bytes, -1, "test");
    const std::uintptr_t first = address(pair.data(0)), second = address(pair.data(1));
    ASSERT_GE(second, first + bytes) << bytes;
    EXPECT_EQ((second - first) % kIterateAlias, kIterateStagger) << bytes;
    EXPECT_EQ(second % 64, 0u) << "the second iterate begins a cache line";
    // Both whole iterates are memory of the mapping.
    std::memset(pair.data(0), 1, bytes);
    std::memset(pair.data(1), 2, bytes);
    EXPECT_EQ(static_cast<unsigned char*>(pair.data(0))[bytes - 1], 1) << bytes;
    EXPECT_EQ(static_cast<unsigned char*>(pair.data(1))[bytes - 1], 2) << bytes;
    EXPECT_EQ(IteratePair::mapped_bytes(bytes), second - first + bytes);
  }
}

TEST(IteratePair, NoBytesIsNoMemory) {
  IteratePair pair(0, -1, "test");
  EXPECT_EQ(pair.data(0), nullptr);
  EXPECT_EQ(pair.data(1), nullptr);
}

}  // namespace
}  // namespace hetstencil
