// A build without MPI: one process per solve.
#include <cstdlib>

#include "devices/transport/processes.hpp"
#include "hetstencil/error.hpp"

namespace hetstencil {
namespace {

[[noreturn]] void no_mpi() {
  HETSTENCIL_THROW(NotCompiled, "this hetstencil was built without MPI (HETSTENCIL_MPI=OFF): a solve runs in one "
                                "process");
}

}  // namespace

bool mpi_built() { return false; }
bool cuda_aware_mpi_built() { return false; }
std::unique_ptr<Processes> join_processes(int) { no_mpi(); }
World init_mpi() { no_mpi(); }
void finalize_mpi() {}
void abort_mpi(int, int code) { std::_Exit(code); }

}  // namespace hetstencil
