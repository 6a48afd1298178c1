#include "devices/cpu/numa_buffer.hpp"

#include <numa.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "core/log.hpp"
#include "hetstencil/error.hpp"

namespace hetstencil {
namespace {

bool node_exists(int node) { return node >= 0 && numa_available() != -1 && node <= numa_max_node(); }

// Slabs are swept end to end: with 4 KiB pages a sweep of a 1 GiB slab walks
// 262144 TLB entries. Where transparent huge pages are "madvise" (Debian's
// default) a region gets them only when asked. A refusal costs speed only.
void ask_for_huge_pages(void* data, std::size_t bytes, const std::string& owner) {
  if (madvise(data, bytes, MADV_HUGEPAGE) != 0 && errno != EINVAL) {
    log::debug("{}: no huge pages for {} bytes: {}", owner, bytes, std::strerror(errno));
  }
}

}  // namespace

NumaBuffer::NumaBuffer(std::size_t bytes, int node, const std::string& owner) : bytes_(bytes) {
  if (bytes == 0) return;
  if (node_exists(node)) {
    data_ = numa_alloc_onnode(bytes, node);
    from_libnuma_ = data_ != nullptr;
    if (!data_) {
      HETSTENCIL_THROW(SystemError, owner + ": cannot allocate " + std::to_string(bytes) + " bytes on NUMA node " +
                                        std::to_string(node) + " (numa_alloc_onnode failed)");
    }
    ask_for_huge_pages(data_, bytes, owner);
    return;
  }
  if (node >= 0 && numa_available() != -1) {
    log::warn("{}: NUMA node {} does not exist on this machine; memory is not bound", owner, node);
  }
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    HETSTENCIL_THROW(SystemError, owner + ": cannot allocate " + std::to_string(bytes) +
                                      " bytes (mmap: " + std::strerror(errno) + ")");
  }
  data_ = p;
  ask_for_huge_pages(data_, bytes, owner);
}

NumaBuffer::~NumaBuffer() { release(); }

NumaBuffer::NumaBuffer(NumaBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      from_libnuma_(other.from_libnuma_) {}

NumaBuffer& NumaBuffer::operator=(NumaBuffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    from_libnuma_ = other.from_libnuma_;
  }
  return *this;
}

void NumaBuffer::release() {
  if (!data_) return;
  if (from_libnuma_) {
    numa_free(data_, bytes_);
  } else if (munmap(data_, bytes_) != 0) {
    log::error("munmap of {} bytes failed: {}", bytes_, std::strerror(errno));
  }
  data_ = nullptr;
}

}  // namespace hetstencil
