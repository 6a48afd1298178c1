// hetstencil bench stencils: every device's sweep of each stencil beside a copy
// of the same bytes, with the profile's prediction of it.
#pragma once

#include <CLI/CLI.hpp>

#include "tools/hetstencil/commands.hpp"

namespace hetstencil::cli {

/// Adds `stencils` under `bench`; returns what runs it.
Command add_stencils_bench(CLI::App* bench);

}  // namespace hetstencil::cli
