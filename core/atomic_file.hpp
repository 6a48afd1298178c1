// A file that appears complete or not at all: written beside its target and
// renamed into place by commit(). Destroyed uncommitted, or interrupted by
// SIGINT, SIGTERM or SIGHUP, it leaves nothing behind.
//
// The target is what the user named: a symlink is written through to the file
// it points at (the link stays); an existing file keeps its mode, and a new one
// gets 0666 less the umask. What is not a regular file (a folder, a device
// node, a FIFO, a socket) and a read-only file are refused before anything is
// opened for writing.
#pragma once

#include <cstddef>
#include <string>

namespace hetstencil {

class AtomicFile {
 public:
  /// Throws InvalidArgument naming `path` when it may not or cannot be written
  /// (see above), or nothing can be created beside it.
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, std::size_t bytes);
  /// Flushes, closes and renames onto the target.
  void commit();

 private:
  std::string path_;    // as the user named it, for messages
  std::string target_;  // the file renamed onto: path_ with symlinks followed
  std::string temp_;
  int fd_ = -1;
  int slot_ = -1;  // in the registry of files a signal removes
};

}  // namespace hetstencil
