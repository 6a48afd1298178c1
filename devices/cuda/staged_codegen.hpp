// The staged sweep of a 3-D stencil (SweepShape::staged): a block's tile of
// each plane, with the lines and cells its points reach beside it, is brought
// into a ring of shared memory by the GPU's tensor copies (sm_90 and later:
// `cp.async.bulk.tensor`, one copy a plane, completed on an mbarrier), planes
// ahead of the plane being updated, by one warp of the block while the others
// update. They read a plane's neighbours from the ring as aligned vectors, and
// the values straight along the split axis (their own cells' column) from the
// ring where it holds their planes, else from registers passed from plane to
// plane. Neither the copies nor waiting for
// them take registers or instructions of the warps that update. See
// docs/stencils.md, "The staged sweep".
#pragma once

#include <cstddef>
#include <string>

#include "devices/cuda/stencil_codegen.hpp"

namespace hetstencil::cuda {

/// Planes copied ahead of those a step reads: on an H200 (star4 float, 512^3)
/// 2, 3 and 4 swept in 1.475, 1.449 and 1.442 of a copy's time.
constexpr int kStagedAhead = 3;

/// How the staged kernel of a stencil, precision and shape lays its ring out,
/// and what a launch of it needs.
struct StagedRing {
  int tile_x = 0;      ///< cells of a line a block updates: 32 x SweepShape::vector
  int tile_y = 0;      ///< lines a block updates: warps x lines
  int lead_x = 0;      ///< values of a box before the tile's first cell: the reach along the line, in whole groups and 16 bytes
  int lead_y = 0;      ///< lines of a box above the tile's first line: the reach across lines
  int box_x = 0;       ///< values of a line a tensor copy brings: tile_x + 2 lead_x
  int box_y = 0;       ///< lines it brings: tile_y + 2 lead_y
  int low = 0;         ///< the planes (march offsets) the ring holds in a step, [low, high]
  int high = 0;
  int slots = 0;       ///< planes in the ring: high - low + 1 + kStagedAhead
  int threads = 0;     ///< a block's: the updating warps' and the copying one's
  std::size_t box_bytes = 0;   ///< bytes a copy brings
  std::size_t slot_bytes = 0;  ///< bytes from a slot to the next: box_bytes to 128 bytes
  std::size_t bytes = 0;       ///< dynamic shared memory a block asks for: the slots and their barriers

  static StagedRing of(const Stencil& stencil, Precision precision, const SweepShape& shape);
};

/// The source of the staged kernel (see stencil_codegen.hpp's
/// sweep_kernel_source for its parameters, which it takes in the same order,
/// then the tensor map of its input's planes, a CUtensorMap made by
/// staged_planes_map). Throws InvalidArgument for a 2-D stencil.
std::string staged_sweep_source(const Stencil& stencil, Precision precision, const SweepShape& shape,
                                const SweepLayout* layout);

}  // namespace hetstencil::cuda
