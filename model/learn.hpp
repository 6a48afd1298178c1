// Measured runs flow back into the profile, so the model follows the machine.
#pragma once

#include "hetstencil/report.hpp"
#include "model/profile.hpp"

namespace hetstencil {

/// Folds each device's measured compute time per iteration (at its rows) into
/// its rate curve for the report's precision and width, with `weight`. A time
/// more than 4x away from the curve is a spike, not a trend, and is ignored; a
/// device that has really slowed moves its curve a step at every run. A CPU
/// device that ran beside GPUs moves its slowdown_beside_gpus instead (its
/// slow iterations, the 90th percentile, in the slowest such run, however
/// slow, forgotten by a twentieth at each faster one). Returns how many
/// devices' figures moved. A GPU's curve is the variant's; a blocked split's
/// devices swept their ghost zones too, and are learnt at the rows swept. A
/// CPU device with a rest curve is learnt by its measured time over the
/// report's predicted one, applied to its curve (at an unequal split the
/// others sweep other rows than its curve was measured beside).
/// A run of another stencil than poisson5 (report.poisson5 false) teaches nothing.
int learn(Profile& profile, const Report& report, double weight = 0.25, const VariantChoice& variant = {});

}  // namespace hetstencil
