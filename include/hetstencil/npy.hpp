/// \file
/// NumPy .npy files (format 1.0), readable with numpy.load.
#pragma once

#include <string>

#include "hetstencil/export.hpp"
#include "hetstencil/grid.hpp"

namespace hetstencil {

/// Writes the whole grid, boundary included: shape (rows, cols) in 2-D, (planes,
/// rows, cols) in 3-D (GridShape). The file appears complete or not at all: it
/// is written beside the target and renamed into place.
template <class T>
HETSTENCIL_API void write_npy(const std::string& path, const Grid<T>& grid);

/// Reads a grid write_npy wrote: a 2-D or 3-D array of T in C order, its
/// boundary ring `depth` values deep. Throws InvalidArgument naming the file and
/// what is wrong (not .npy, another value type, a side too small for the ring).
template <class T>
HETSTENCIL_API Grid<T> read_npy(const std::string& path, int depth = 1);

/// Throws InvalidArgument if a file cannot be created at path (checked before a
/// long solve so that it does not fail at the end). Leaves nothing behind.
HETSTENCIL_API void check_writable(const std::string& path);

}  // namespace hetstencil
