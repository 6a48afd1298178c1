// A file that appears complete or not at all: written beside its target and
// renamed into place by commit(). Destroyed uncommitted, it leaves nothing.
#pragma once

#include <cstddef>
#include <string>

namespace hetstencil {

class AtomicFile {
 public:
  /// Throws InvalidArgument when nothing can be created beside `path` (or it is a folder).
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, std::size_t bytes);
  /// Flushes, closes and renames onto the target.
  void commit();

 private:
  std::string path_;
  std::string temp_;
  int fd_ = -1;
};

}  // namespace hetstencil
