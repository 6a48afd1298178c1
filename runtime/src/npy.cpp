#include "hetstencil/npy.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "hetstencil/error.hpp"

namespace hetstencil {
namespace {

std::string directory_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// A temporary file beside `path`, so that rename() is atomic.
struct TempFile {
  std::string name;
  int fd = -1;

  explicit TempFile(const std::string& path) {
    struct stat st {};
    if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      HETSTENCIL_THROW(InvalidArgument, "cannot write '" + path + "': it is a directory");
    }
    name = path + ".tmp-XXXXXX";
    std::vector<char> buffer(name.begin(), name.end());
    buffer.push_back('\0');
    fd = mkstemp(buffer.data());
    if (fd < 0) {
      HETSTENCIL_THROW(InvalidArgument,
                       "cannot write '" + path + "' in '" + directory_of(path) + "': " + std::strerror(errno));
    }
    name = buffer.data();
  }
  ~TempFile() {
    if (fd >= 0) close(fd);
    if (!name.empty()) unlink(name.c_str());
  }

  void write_all(const void* data, std::size_t bytes, const std::string& path) {
    const char* p = static_cast<const char*>(data);
    while (bytes > 0) {
      const ssize_t n = ::write(fd, p, bytes);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) HETSTENCIL_THROW(SystemError, "writing '" + path + "' failed: " + std::strerror(errno));
      p += n;
      bytes -= static_cast<std::size_t>(n);
    }
  }

  void commit(const std::string& path) {
    const int rc = close(fd);
    fd = -1;
    if (rc != 0) HETSTENCIL_THROW(SystemError, "writing '" + path + "' failed: " + std::strerror(errno));
    if (rename(name.c_str(), path.c_str()) != 0) {
      HETSTENCIL_THROW(SystemError, "cannot move the finished file to '" + path + "': " + std::strerror(errno));
    }
    name.clear();
  }
};

template <class T>
const char* npy_descr();
template <>
const char* npy_descr<float>() { return "<f4"; }
template <>
const char* npy_descr<double>() { return "<f8"; }

}  // namespace

void check_writable(const std::string& path) {
  if (path.empty()) HETSTENCIL_THROW(InvalidArgument, "the output path is empty");
  TempFile probe(path);  // removed again by its destructor
}

template <class T>
void write_npy(const std::string& path, const Grid<T>& grid) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "npy writes float or double");
  std::string header = std::string("{'descr': '") + npy_descr<T>() + "', 'fortran_order': False, 'shape': (" +
                       std::to_string(grid.rows()) + ", " + std::to_string(grid.cols()) + "), }";
  // Magic (6) + version (2) + header length (2) + header, padded with spaces to
  // a multiple of 64 bytes and ending in a newline (format 1.0).
  const std::size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  std::string preamble = "\x93NUMPY";
  preamble.push_back('\x01');
  preamble.push_back('\x00');
  preamble.push_back(static_cast<char>(header.size() & 0xff));
  preamble.push_back(static_cast<char>(header.size() >> 8));

  TempFile file(path);
  file.write_all(preamble.data(), preamble.size(), path);
  file.write_all(header.data(), header.size(), path);
  file.write_all(grid.data(), grid.values().size() * sizeof(T), path);
  file.commit(path);
}

template void write_npy<float>(const std::string&, const Grid<float>&);
template void write_npy<double>(const std::string&, const Grid<double>&);

}  // namespace hetstencil
