/// \file
/// One solve over several processes (MPI ranks, one node or many): MPI for a
/// program without MPI of its own, and how to tell that a launcher started it.
/// A program with its own MPI passes its communicator to
/// RuntimeOptions::communicator instead. No MPI header is needed here.
#pragma once

#include "hetstencil/export.hpp"

namespace hetstencil {

/// Whether this build of hetstencil can solve over several processes (built
/// with MPI: HETSTENCIL_MPI).
HETSTENCIL_API bool has_mpi();

/// Whether an MPI launcher (mpirun, mpiexec, srun) started this process: the
/// variables OpenMPI (OMPI_COMM_WORLD_SIZE), MPICH and Intel MPI (PMI_SIZE) or
/// a PMIx launcher (PMIX_RANK) give its processes.
HETSTENCIL_API bool launched_by_mpi();

/// MPI for a program that has none of its own (the hetstencil command):
/// initialised with MPI_THREAD_MULTIPLE (the devices of a process exchange
/// from threads of their own) unless the program did so already, and
/// finalised by the destructor.
///
/// ```cpp
/// std::optional<hetstencil::MpiSession> mpi;
/// if (hetstencil::launched_by_mpi()) mpi.emplace();
/// hetstencil::RuntimeOptions o;
/// if (mpi) o.communicator = mpi->world();        // every process of the job solves together
/// hetstencil::Runtime rt(o);
/// ```
///
/// Thread safety: one per process, made and destroyed on the main thread.
class HETSTENCIL_API MpiSession {
 public:
  /// Initialises MPI. Throws NotCompiled in a build without MPI, Error when
  /// MPI cannot be initialised.
  MpiSession();
  /// Finalises MPI.
  ~MpiSession();
  /// One per process: not copied.
  MpiSession(const MpiSession&) = delete;
  /// One per process: not assigned.
  MpiSession& operator=(const MpiSession&) = delete;

  /// MPI_COMM_WORLD as a Fortran handle, for RuntimeOptions::communicator.
  int world() const { return world_; }
  /// This process's rank in it.
  int rank() const { return rank_; }
  /// How many processes it has.
  int size() const { return size_; }
  /// Ends every process of the job with exit status `code` (MPI_Abort): what a
  /// process that fails does, since the others would wait for it forever.
  [[noreturn]] void abort(int code) const;

 private:
  int world_ = 0;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace hetstencil
