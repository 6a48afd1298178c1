// The subcommands of the hetstencil command line. Each adds itself to the app
// and returns the function that runs it once the arguments are parsed.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace hetstencil::cli {

using Command = std::function<int()>;

Command add_solve_command(CLI::App& app);
/// Makes `hetstencil solve` one solve over the processes of an MPI job:
/// MPI_COMM_WORLD as a Fortran handle (main() calls it under a launcher).
void solve_over(int communicator);
Command add_sweep_command(CLI::App& app);
Command add_bench_command(CLI::App& app);
Command add_probe_command(CLI::App& app);
/// calibrate, profile show and predict share one set of options.
Command add_model_commands(CLI::App& app);
Command add_stencils_command(CLI::App& app);
Command add_project_command(CLI::App& app);
Command add_tune_command(CLI::App& app);

}  // namespace hetstencil::cli
