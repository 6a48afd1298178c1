// hetstencil bench scaling: one solve over 1, 2, ... N GPUs, strong and weak.
#pragma once

#include <CLI/CLI.hpp>

#include "tools/hetstencil/commands.hpp"

namespace hetstencil::cli {

/// Adds `scaling` under `bench`; returns what runs it.
Command add_scaling_bench(CLI::App* bench);

}  // namespace hetstencil::cli
