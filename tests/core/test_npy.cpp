#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "hetstencil/error.hpp"
#include "hetstencil/npy.hpp"

namespace hetstencil {
namespace {

namespace fs = std::filesystem;

fs::path scratch_dir() {
  fs::path d = fs::temp_directory_path() / ("hetstencil_npy_" + std::to_string(getpid()));
  fs::create_directories(d);
  return d;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(Npy, WritesAHeaderNumpyReadsAndTheValues) {
  Grid<float> g(3, 7);
  for (std::size_t k = 0; k < g.values().size(); ++k) g.data()[k] = 0.5f * static_cast<float>(k);
  const fs::path path = scratch_dir() / "g.npy";
  write_npy(path.string(), g);
  const std::string bytes = slurp(path);
  ASSERT_GT(bytes.size(), 10u);
  EXPECT_EQ(bytes.substr(0, 6), "\x93NUMPY");
  EXPECT_EQ(bytes[6], 1);
  const std::size_t header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  EXPECT_EQ((10 + header_len) % 64, 0u);
  const std::string header = bytes.substr(10, header_len);
  EXPECT_NE(header.find("'descr': '<f4'"), std::string::npos) << header;
  EXPECT_NE(header.find("'shape': (5, 9)"), std::string::npos) << header;
  EXPECT_EQ(header.back(), '\n');
  ASSERT_EQ(bytes.size(), 10 + header_len + g.values().size() * sizeof(float));
  EXPECT_EQ(std::memcmp(bytes.data() + 10 + header_len, g.data(), g.values().size() * sizeof(float)), 0);
  fs::remove_all(path.parent_path());
}

TEST(Npy, UnwritablePlacesFailClearlyAndLeaveNothing) {
  Grid<double> g(2, 2);
  EXPECT_THROW(write_npy("/nonexistent-dir/u.npy", g), InvalidArgument);
  EXPECT_THROW(check_writable("/nonexistent-dir/u.npy"), InvalidArgument);
  const fs::path dir = scratch_dir();
  EXPECT_THROW(write_npy(dir.string(), g), InvalidArgument);  // a directory
  if (geteuid() != 0) {  // root writes anywhere
    chmod(dir.c_str(), 0500);
    EXPECT_THROW(check_writable((dir / "u.npy").string()), InvalidArgument);
    chmod(dir.c_str(), 0700);
  }
  check_writable((dir / "u.npy").string());
  EXPECT_TRUE(fs::is_empty(dir)) << "check_writable left a file behind";
  fs::remove_all(dir);
}

TEST(Npy, ReplacesAnExistingFileWhole) {
  const fs::path path = scratch_dir() / "u.npy";
  { std::ofstream(path) << std::string(100000, 'x'); }
  Grid<double> g(1, 1);
  g(1, 1) = 3.0;
  write_npy(path.string(), g);
  EXPECT_EQ(fs::file_size(path), 128u + 9 * sizeof(double));
  EXPECT_EQ(std::distance(fs::directory_iterator(path.parent_path()), fs::directory_iterator()), 1);
  fs::remove_all(path.parent_path());
}

}  // namespace
}  // namespace hetstencil
