#include "hetstencil/npy.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include "hetstencil/error.hpp"
#include "core/atomic_file.hpp"

namespace hetstencil {
namespace {

template <class T>
const char* npy_descr();
template <>
const char* npy_descr<float>() { return "<f4"; }
template <>
const char* npy_descr<double>() { return "<f8"; }

}  // namespace

void check_writable(const std::string& path) {
  if (path.empty()) HETSTENCIL_THROW(InvalidArgument, "the output path is empty");
  AtomicFile probe(path);  // removed again by its destructor
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

  AtomicFile file(path);
  file.write(preamble.data(), preamble.size());
  file.write(header.data(), header.size());
  file.write(grid.data(), grid.values().size() * sizeof(T));
  file.commit();
}

template void write_npy<float>(const std::string&, const Grid<float>&);
template void write_npy<double>(const std::string&, const Grid<double>&);

}  // namespace hetstencil
