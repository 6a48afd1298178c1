// The processes of one solve (MPI ranks), as the transport and the runtime see
// them: no MPI header here, so that a build without MPI compiles the same code.
// An MPI build implements it in mpi_processes.cpp; one without MPI has
// join_processes throw (no_mpi.cpp).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "devices/device.hpp"

namespace hetstencil {

/// A point-to-point message under way.
class Message {
 public:
  virtual ~Message() = default;
  /// Whether it has completed (its buffer may be reused); never blocks.
  virtual bool done() = 0;
};

/// A message sent or received again and again with the same buffer (an MPI
/// persistent request): each start() sends the buffer as it is then, or
/// receives into it. done() is true before the first start.
class RepeatedMessage : public Message {
 public:
  virtual void start() = 0;
};

/// The processes of a communicator; every method but rank(), size(),
/// local_rank(), send(), receive(), repeated_send(), repeated_receive(),
/// cuda_aware() and abort() is collective: every process
/// calls it, in the same order. Calls may come from any thread (the library
/// asks MPI for MPI_THREAD_MULTIPLE).
class Processes {
 public:
  virtual ~Processes() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// This process's rank among the processes of its node.
  virtual int local_rank() const = 0;

  /// Every process's `mine`, in rank order, on every process.
  virtual std::vector<std::string> all_gather(const std::string& mine) = 0;
  /// Rank 0's `text` on every process.
  virtual std::string broadcast(const std::string& text) = 0;
  /// Returns once every process has called it. Waits as wait_for does
  /// (`abort`, `limit_s`).
  virtual void barrier(const std::atomic<bool>& abort, double limit_s) = 0;
  /// Every process's `mine` (process r's holds counts[r] values), one after
  /// the other in rank order, on every process, and `max_abs` the largest
  /// over the processes. The same bits on every process. Waits as wait_for
  /// does (`abort`, `limit_s`).
  virtual std::vector<double> gather_sums(const std::vector<double>& mine, const std::vector<int>& counts,
                                          double& max_abs, const std::atomic<bool>& abort, double limit_s) = 0;
  /// Rank 0's `grid` (rows of `row_bytes`, row 0 the boundary) receives every
  /// process's rows `ranks[r]`.
  virtual void gather_rows(void* grid, std::size_t row_bytes, const std::vector<RowRange>& ranks) = 0;

  /// Starts sending `bytes` at `data` to process `to`, with `tag`.
  virtual std::unique_ptr<Message> send(int to, int tag, const void* data, std::size_t bytes) = 0;
  /// Starts receiving `bytes` into `data` from process `from`, with `tag`.
  virtual std::unique_ptr<Message> receive(int from, int tag, void* data, std::size_t bytes) = 0;
  /// send(to, tag, data, bytes) at each start(), set up once (MPI_Send_init):
  /// what a transport that sends the same buffer every round uses. By
  /// default a fresh send() each start.
  virtual std::unique_ptr<RepeatedMessage> repeated_send(int to, int tag, const void* data, std::size_t bytes);
  /// receive(from, tag, data, bytes) at each start(), set up once (MPI_Recv_init).
  virtual std::unique_ptr<RepeatedMessage> repeated_receive(int from, int tag, void* data, std::size_t bytes);

  /// Whether this process's MPI carries GPU memory in messages (a CUDA-aware
  /// MPI, asked at run time); false by default.
  virtual bool cuda_aware() const { return false; }

  /// Ends every process of the communicator with exit status `code`, after
  /// logging `why` as an error naming this rank: what a failure during a solve does,
  /// since the others cannot be told otherwise and would wait forever.
  [[noreturn]] virtual void abort(const std::string& why, int code) = 0;
};

/// How long a solve waits for another process's message before it takes that
/// process for stuck (MPI tells of a process that dies, not of one that
/// hangs): far beyond any round's time.
constexpr double kSilenceLimitS = 600.0;

/// Waits for `message` (`what`: "ghost rows from rank 2"), polling; throws
/// Aborted once `abort` is set, Error after `limit_s` seconds.
void wait_for(Message& message, const std::atomic<bool>& abort, const std::string& what,
              double limit_s = kSilenceLimitS);

/// This machine's host name, which the processes of one node share ("?" where
/// it cannot be read).
std::string node_name();

/// Whether this build has MPI.
bool mpi_built();
/// Whether this build's MPI may be CUDA-aware (its headers say it can be):
/// where not, no process asks the others whether theirs is.
bool cuda_aware_mpi_built();
/// The processes of the communicator given as a Fortran handle
/// (MPI_Comm_c2f); duplicated, so that the library's messages never meet the
/// application's. Collective. Throws NotCompiled in a build without MPI, Error
/// where MPI is not initialised with MPI_THREAD_MULTIPLE.
std::unique_ptr<Processes> join_processes(int communicator);

/// MPI_COMM_WORLD as a Fortran handle, this process's rank in it and its size.
struct World {
  int communicator = 0;
  int rank = 0;
  int size = 1;
};
/// MPI for a program without MPI of its own: MPI_Init_thread (MPI_THREAD_MULTIPLE)
/// unless MPI is initialised already; finalize_mpi() ends it.
World init_mpi();
void finalize_mpi();
/// Ends every process of the communicator (a Fortran handle) with `code`.
[[noreturn]] void abort_mpi(int communicator, int code);

}  // namespace hetstencil
