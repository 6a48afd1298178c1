// Tensor maps for the staged sweep's copies (staged_codegen.hpp): the driver's
// cuTensorMapEncodeTiled, looked up in the driver library at run time, so
// that the library still links no driver API.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace hetstencil::cuda {

/// A CUtensorMap's bytes, as a kernel takes it: plain bytes, since the
/// driver's 64-byte-aligned type, handed by value between host code the CUDA
/// compiler builds and code g++ builds, faults before the driver is called
/// (on an H200; a temporary not so aligned is the likely cause).
using TensorMapBytes = std::array<unsigned char, 128>;

/// The planes of a slab's buffer as a tensor of 3 axes (a line's values, a
/// plane's lines, planes) whose boxes are `box_x` values of `box_y` lines of
/// one plane, for GPU `gpu`: `first` is the value at coordinates (0, 0, 0)
/// (16-byte aligned), a line holds `line_values` of them from there (lines
/// `line_pitch` values apart, at least line_values), a plane `plane_lines`
/// lines (planes `plane_pitch` values apart), and there are `planes`. Values
/// past those read as zeros. Throws CudaError naming the GPU when the driver
/// has no encoder or refuses the map.
TensorMapBytes planes_map(const void* first, std::size_t value_bytes, std::int64_t line_values, std::int64_t line_pitch,
                          std::int64_t plane_lines, std::int64_t plane_pitch, std::int64_t planes, int box_x, int box_y, int gpu);

/// Throws CudaError naming GPU `gpu` where planes_map cannot be made (the
/// driver has no encoder): what a kernel that needs the maps checks before it
/// is chosen.
void check_tensor_maps(int gpu);

}  // namespace hetstencil::cuda
