#include "runtime/src/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "hetstencil/error.hpp"

namespace hetstencil {
namespace {

std::string directory_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  struct stat st {};
  if (stat(path_.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    HETSTENCIL_THROW(InvalidArgument, "cannot write '" + path_ + "': it is a directory");
  }
  std::string pattern = path_ + ".tmp-XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  fd_ = mkstemp(buffer.data());
  if (fd_ < 0) {
    HETSTENCIL_THROW(InvalidArgument,
                     "cannot write '" + path_ + "' in '" + directory_of(path_) + "': " + std::strerror(errno));
  }
  temp_ = buffer.data();
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) close(fd_);
  if (!temp_.empty()) unlink(temp_.c_str());
}

void AtomicFile::write(const void* data, std::size_t bytes) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::write(fd_, p, bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) HETSTENCIL_THROW(SystemError, "writing '" + path_ + "' failed: " + std::strerror(errno));
    p += n;
    bytes -= static_cast<std::size_t>(n);
  }
}

void AtomicFile::commit() {
  if (fsync(fd_) != 0) HETSTENCIL_THROW(SystemError, "writing '" + path_ + "' failed: " + std::strerror(errno));
  const int rc = close(fd_);
  fd_ = -1;
  if (rc != 0) HETSTENCIL_THROW(SystemError, "writing '" + path_ + "' failed: " + std::strerror(errno));
  if (rename(temp_.c_str(), path_.c_str()) != 0) {
    HETSTENCIL_THROW(SystemError, "cannot move the finished file to '" + path_ + "': " + std::strerror(errno));
  }
  temp_.clear();
}

}  // namespace hetstencil
