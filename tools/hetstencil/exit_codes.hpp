// The exit codes of every hetstencil command (README, "Exit codes").
#pragma once

namespace hetstencil::cli {

enum ExitCode : int {
  kExitSuccess = 0,
  kExitFailure = 1,         ///< a run-time failure: a device, a system call, a file
  kExitUsage = 2,           ///< a bad option, value or input file; nothing was run
  kExitProfileNotSaved = 3, ///< the work succeeded and its results were written, the profile update failed
  // A command stopped by signal N exits with 128 + N, as shells report it.
};

}  // namespace hetstencil::cli
