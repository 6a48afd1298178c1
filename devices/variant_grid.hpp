// One problem's grid on one device, advanced by any variant of the original
// study's chapter V (sync, async2, async3, blocked): what the variants
// benchmark steps until a variant is as accurate as another run.
#pragma once

#include <cstdint>

#include "hetstencil/variant.hpp"
#include "hetstencil/report.hpp"

namespace hetstencil {

class VariantGrid {
 public:
  virtual ~VariantGrid() = default;
  /// Back to the initial iterate.
  virtual void reset() = 0;
  /// Advances by `iterations` sweeps of the variant; returns the device time they took.
  virtual double advance(const VariantChoice& choice, std::int64_t iterations) = 0;
  /// max |u - other| / max |other| over the grid; `other` is a grid of the same
  /// backend on the same device.
  virtual double max_relative_error(const VariantGrid& other) const = 0;
  /// The current iterate, boundary included.
  virtual Solution download() const = 0;
};

}  // namespace hetstencil
