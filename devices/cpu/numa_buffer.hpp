// Memory placed on one NUMA node (libnuma), or plain pages where the machine has
// no NUMA support or the node does not exist here.
#pragma once

#include <cstddef>
#include <string>

namespace hetstencil {

class NumaBuffer {
 public:
  NumaBuffer() = default;
  /// Reserves `bytes` bound to `node` (< 0: anywhere). Pages are placed when
  /// first touched, which the owning workers do.
  NumaBuffer(std::size_t bytes, int node, const std::string& owner);
  ~NumaBuffer();
  NumaBuffer(NumaBuffer&& other) noexcept;
  NumaBuffer& operator=(NumaBuffer&& other) noexcept;
  NumaBuffer(const NumaBuffer&) = delete;
  NumaBuffer& operator=(const NumaBuffer&) = delete;

  void* data() const { return data_; }

 private:
  void release();
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  bool from_libnuma_ = false;
};

}  // namespace hetstencil
