#include "devices/transport/halo_rows.hpp"

#include <cstring>

#include "hetstencil/error.hpp"

namespace hetstencil {
namespace {

void copy_rows(RowBlock to, RowBlock from, std::int64_t rows, std::size_t row_bytes) {
  if (to.pitch == row_bytes && from.pitch == row_bytes) {
    std::memcpy(to.data, from.data, static_cast<std::size_t>(rows) * row_bytes);
    return;
  }
  for (std::int64_t i = 0; i < rows; ++i) {
    std::memcpy(static_cast<char*>(to.data) + static_cast<std::size_t>(i) * to.pitch,
                static_cast<const char*>(from.data) + static_cast<std::size_t>(i) * from.pitch, row_bytes);
  }
}

}  // namespace

void RowMover::from_peer(RowBlock, const RowMover&, RowBlock, std::int64_t, std::size_t) {
  HETSTENCIL_THROW(Error, "a copy from a neighbour's memory where this device cannot reach it");
}

void* RowMover::open_shared(const SharedHandle&) {
  HETSTENCIL_THROW(Error, "opening another process's memory, which this device cannot reach");
}

void RowMover::from_shared(RowBlock, RowBlock, std::int64_t, std::size_t) {
  HETSTENCIL_THROW(Error, "a copy from another process's memory, which this device cannot reach");
}

void HostRowMover::to_host(RowBlock to, RowBlock from, std::int64_t rows, std::size_t row_bytes) {
  copy_rows(to, from, rows, row_bytes);
}

void HostRowMover::from_host(RowBlock to, RowBlock from, std::int64_t rows, std::size_t row_bytes) {
  copy_rows(to, from, rows, row_bytes);
}

}  // namespace hetstencil
