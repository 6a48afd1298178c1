#include "hetstencil/npy.hpp"

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "hetstencil/error.hpp"
#include "hetstencil/problem.hpp"
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
                       (grid.nz() > 0 ? std::to_string(grid.planes()) + ", " : std::string()) +
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

template <class T>
Grid<T> read_npy(const std::string& path, int depth) {
  auto refuse = [&](const std::string& why) {
    HETSTENCIL_THROW(InvalidArgument, "the .npy file " + as_typed(path) + " " + why);
  };
  std::ifstream in(path, std::ios::binary);
  if (!in) refuse("cannot be opened");
  char preamble[10];
  if (!in.read(preamble, sizeof preamble) || std::string(preamble, 6) != "\x93NUMPY" || preamble[6] != 1) {
    refuse("is not a NumPy file of format 1.0");
  }
  const std::size_t header_size =
      static_cast<unsigned char>(preamble[8]) | (static_cast<std::size_t>(static_cast<unsigned char>(preamble[9])) << 8);
  std::string header(header_size, '\0');
  if (!in.read(&header[0], static_cast<std::streamsize>(header_size))) refuse("ends inside its header");
  const std::string descr = std::string("'descr': '") + npy_descr<T>() + "'";
  if (header.find(descr) == std::string::npos) refuse("does not hold " + std::string(npy_descr<T>()) + " values");
  if (header.find("'fortran_order': False") == std::string::npos) refuse("is not in C order");
  const std::size_t open = header.find("'shape': (");
  const std::size_t close = header.find(')', open);
  if (open == std::string::npos || close == std::string::npos) refuse("has no shape");
  std::vector<std::int64_t> sides;
  std::istringstream shape(header.substr(open + 10, close - open - 10));
  for (std::string side; std::getline(shape, side, ',');) {
    if (side.find_first_not_of(' ') == std::string::npos) continue;
    try {
      sides.push_back(std::stoll(side));
    } catch (const std::exception&) {
      refuse("has a shape that is not made of whole numbers");
    }
  }
  if (sides.size() != 2 && sides.size() != 3) refuse("is not a 2-D or 3-D array");
  for (std::int64_t side : sides) {
    if (side <= 2 * depth || side - 2 * depth > kMaxGridSide) {
      refuse("has a side of " + std::to_string(side) + " values: not an interior of 1 to 2^30 values with a ring " +
             std::to_string(depth) + " deep on each side");
    }
  }
  const bool three_d = sides.size() == 3;
  const GridShape grid_shape{three_d ? sides[0] - 2 * depth : 0, sides[three_d ? 1 : 0] - 2 * depth,
                             sides[three_d ? 2 : 1] - 2 * depth, depth};
  grid_bytes(grid_shape, sizeof(T) == 4 ? Precision::Float : Precision::Double);
  Grid<T> grid(grid_shape);
  if (!in.read(reinterpret_cast<char*>(grid.data()), static_cast<std::streamsize>(grid.values().size() * sizeof(T)))) {
    refuse("holds fewer values than its shape says");
  }
  return grid;
}

template Grid<float> read_npy<float>(const std::string&, int);
template Grid<double> read_npy<double>(const std::string&, int);
template void write_npy<float>(const std::string&, const Grid<float>&);
template void write_npy<double>(const std::string&, const Grid<double>&);

}  // namespace hetstencil
