/// \file
/// NumPy .npy files (format 1.0), readable with numpy.load.
#pragma once

#include <string>

#include "hetstencil/export.hpp"
#include "hetstencil/grid.hpp"

namespace hetstencil {

/// Writes the whole grid, boundary included, shape (ny+2, nx+2). The file appears
/// complete or not at all: it is written beside the target and renamed into place.
template <class T>
HETSTENCIL_API void write_npy(const std::string& path, const Grid<T>& grid);

/// Throws InvalidArgument if a file cannot be created at path (checked before a
/// long solve so that it does not fail at the end). Leaves nothing behind.
HETSTENCIL_API void check_writable(const std::string& path);

}  // namespace hetstencil
