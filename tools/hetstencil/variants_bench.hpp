// hetstencil bench variants: the original study's time-to-accuracy experiment.
#pragma once

#include <CLI/CLI.hpp>

#include "tools/hetstencil/commands.hpp"

namespace hetstencil::cli {

/// Adds `variants` under `bench`; returns what runs it.
Command add_variants_bench(CLI::App* bench);

}  // namespace hetstencil::cli
