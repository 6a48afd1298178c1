// Options every command shares: which machine, which devices, how many threads.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "hetstencil/runtime.hpp"

namespace hetstencil::cli {

/// Adds --cpu-devices, --threads, --devices, --topology and --synthetic.
void add_machine_options(CLI::App* command, RuntimeOptions& options);

/// Says on stderr what the runtime does that takes long (PlanOptions::notify).
void tell(const std::string& what);

}  // namespace hetstencil::cli
