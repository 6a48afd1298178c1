// Processes over MPI: a duplicate of the application's communicator whose
// errors return (MPI_ERRORS_RETURN) and become exceptions naming this rank.
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // OpenMPI's extensions: MPIX_Query_cuda_support
#endif

#include <climits>
#include <cstdlib>
#include <cstring>

#include "core/log.hpp"
#include "devices/transport/processes.hpp"
#include "hetstencil/error.hpp"

namespace hetstencil {
namespace {

// Whether the MPI library this process runs with moves GPU memory itself.
bool query_cuda_aware() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

std::string mpi_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<std::size_t>(length));
}

int checked_count(std::size_t count, const char* what) {
  if (count > static_cast<std::size_t>(INT_MAX)) {
    HETSTENCIL_THROW(InvalidArgument, std::string(what) + " of " + std::to_string(count) +
                                          " exceeds what one MPI message carries");
  }
  return static_cast<int>(count);
}

// Requests under way: a message (cancelled should it be left unfinished, its
// solve aborted, so that it does not outlive its buffer) or the parts of a
// non-blocking collective (which MPI lets no one cancel: left to MPI_Abort).
class MpiMessage final : public Message {
 public:
  MpiMessage(int rank, const char* what, bool collective = false)
      : rank_(rank), what_(what), collective_(collective) {}
  ~MpiMessage() override {
    if (collective_) return;
    for (MPI_Request& r : requests_) {
      if (r == MPI_REQUEST_NULL) continue;
      MPI_Cancel(&r);
      MPI_Request_free(&r);
    }
  }
  bool done() override {
    int flag = 0;
    const int rc = MPI_Testall(static_cast<int>(requests_.size()), requests_.data(), &flag, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) {
      HETSTENCIL_THROW(Error, "rank " + std::to_string(rank_) + ": " + what_ + " failed: " + mpi_text(rc));
    }
    return flag != 0;
  }
  MPI_Request& add() { return requests_.emplace_back(MPI_REQUEST_NULL); }

 private:
  int rank_;
  const char* what_;
  bool collective_;
  std::vector<MPI_Request> requests_;
};

// A persistent request (MPI_Send_init, MPI_Recv_init): set up once, started
// every round. Cancelled should it be left started and unfinished (the last
// round's receive, or a solve aborted), so that it does not outlive its buffer.
class MpiRepeated final : public RepeatedMessage {
 public:
  MpiRepeated(int rank, const char* what) : rank_(rank), what_(what) {}
  ~MpiRepeated() override {
    if (request_ == MPI_REQUEST_NULL) return;
    if (started_) MPI_Cancel(&request_);
    MPI_Request_free(&request_);
  }
  void start() override {
    const int rc = MPI_Start(&request_);
    if (rc != MPI_SUCCESS) fail("starting", rc);
    started_ = true;
  }
  bool done() override {
    if (!started_) return true;
    int flag = 0;
    const int rc = MPI_Test(&request_, &flag, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) fail("completing", rc);
    started_ = flag == 0;
    return flag != 0;
  }
  MPI_Request& request() { return request_; }

 private:
  [[noreturn]] void fail(const char* doing, int rc) const {
    HETSTENCIL_THROW(Error, "rank " + std::to_string(rank_) + ": " + doing + " " + what_ + " failed: " + mpi_text(rc));
  }

  int rank_;
  const char* what_;
  MPI_Request request_ = MPI_REQUEST_NULL;
  bool started_ = false;
};

class MpiProcesses final : public Processes {
 public:
  explicit MpiProcesses(int communicator) {
    int initialised = 0;
    MPI_Initialized(&initialised);
    if (!initialised) HETSTENCIL_THROW(InvalidArgument, "a communicator was given but MPI is not initialised");
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    if (level < MPI_THREAD_MULTIPLE) {
      HETSTENCIL_THROW(InvalidArgument, "MPI must be initialised with MPI_THREAD_MULTIPLE: each device of a process "
                                        "exchanges from a thread of its own");
    }
    check(MPI_Comm_dup(MPI_Comm_f2c(communicator), &comm_), "duplicating the communicator");
    check(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "setting the communicator's error handler");
    check(MPI_Comm_rank(comm_, &rank_), "asking for this rank");
    check(MPI_Comm_size(comm_, &size_), "asking for the number of processes");
    MPI_Comm node = MPI_COMM_NULL;
    check(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node),
          "finding the processes of this node");
    check(MPI_Comm_rank(node, &local_rank_), "asking for this rank on its node");
    MPI_Comm_free(&node);
    cuda_aware_ = query_cuda_aware();
  }
  ~MpiProcesses() override {
    int finalised = 0;
    MPI_Finalized(&finalised);
    if (!finalised) MPI_Comm_free(&comm_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  bool cuda_aware() const override { return cuda_aware_; }

  std::vector<std::string> all_gather(const std::string& mine) override {
    const int length = checked_count(mine.size(), "a process's description");
    std::vector<int> lengths(static_cast<std::size_t>(size_));
    check(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm_), "gathering descriptions' lengths");
    std::vector<int> offsets(lengths.size());
    std::size_t total = 0;
    for (std::size_t r = 0; r < lengths.size(); ++r) {
      offsets[r] = checked_count(total, "the processes' descriptions");
      total += static_cast<std::size_t>(lengths[r]);
    }
    std::string all(total, '\0');
    check(MPI_Allgatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, comm_),
          "gathering the processes' descriptions");
    std::vector<std::string> out;
    for (std::size_t r = 0; r < lengths.size(); ++r) {
      out.push_back(all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])));
    }
    return out;
  }

  std::string broadcast(const std::string& text) override {
    int length = checked_count(text.size(), "rank 0's message");
    check(MPI_Bcast(&length, 1, MPI_INT, 0, comm_), "broadcasting a length from rank 0");
    std::string out = rank_ == 0 ? text : std::string(static_cast<std::size_t>(length), '\0');
    check(MPI_Bcast(out.data(), length, MPI_CHAR, 0, comm_), "broadcasting rank 0's plan");
    return out;
  }

  // Non-blocking, so that a process that hangs ends the wait (wait_for's limit).
  void barrier(const std::atomic<bool>& abort, double limit_s) override {
    MpiMessage met(rank_, "waiting for every process", true);
    check(MPI_Ibarrier(comm_, &met.add()), "waiting for every process");
    wait_for(met, abort, "answer from every process", limit_s);
  }

  // Each process's largest |rho| travels after its sums: one collective. Its
  // buffer is a member: a wait that throws leaves the collective to
  // MPI_Abort, and it must not write into freed memory meanwhile.
  std::vector<double> gather_sums(const std::vector<double>& mine, const std::vector<int>& counts, double& max_abs,
                                  const std::atomic<bool>& abort, double limit_s) override {
    if (mine.size() != static_cast<std::size_t>(counts[static_cast<std::size_t>(rank_)])) {
      HETSTENCIL_THROW(Error, "rank " + std::to_string(rank_) + " has " + std::to_string(mine.size()) +
                                  " residual sums to send where every process expects " +
                                  std::to_string(counts[static_cast<std::size_t>(rank_)]));
    }
    std::vector<int> lengths, offsets;
    int total = 0;
    for (int count : counts) {
      offsets.push_back(total);
      lengths.push_back(count + 1);
      total += count + 1;
    }
    gathered_.assign(static_cast<std::size_t>(total), 0.0);
    const std::size_t at = static_cast<std::size_t>(offsets[static_cast<std::size_t>(rank_)]);
    std::copy(mine.begin(), mine.end(), gathered_.begin() + static_cast<std::ptrdiff_t>(at));
    gathered_[at + mine.size()] = max_abs;
    MpiMessage gathered(rank_, "gathering the residual's sums", true);
    check(MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, gathered_.data(), lengths.data(), offsets.data(),
                          MPI_DOUBLE, comm_, &gathered.add()),
          "gathering the residual's sums");
    wait_for(gathered, abort, "the residual's sums from every process", limit_s);
    std::vector<double> sums;
    for (std::size_t r = 0; r < counts.size(); ++r) {
      const auto first = gathered_.begin() + offsets[r];
      sums.insert(sums.end(), first, first + counts[r]);
      max_abs = std::max(max_abs, *(first + counts[r]));  // the largest is the same whatever the order
    }
    return sums;
  }

  void gather_rows(void* grid, std::size_t row_bytes, const std::vector<RowRange>& ranks) override {
    MPI_Datatype row = MPI_DATATYPE_NULL;
    check(MPI_Type_contiguous(checked_count(row_bytes, "a grid row's bytes"), MPI_BYTE, &row), "describing a row");
    check(MPI_Type_commit(&row), "describing a row");
    std::vector<int> counts, offsets;
    for (const RowRange& r : ranks) {
      counts.push_back(static_cast<int>(r.count));
      offsets.push_back(static_cast<int>(r.first));
    }
    char* base = static_cast<char*>(grid);
    const RowRange mine = ranks[static_cast<std::size_t>(rank_)];
    const int rc = rank_ == 0 ? MPI_Gatherv(MPI_IN_PLACE, 0, row, base, counts.data(), offsets.data(), row, 0, comm_)
                              : MPI_Gatherv(base + static_cast<std::size_t>(mine.first) * row_bytes,
                                            static_cast<int>(mine.count), row, nullptr, nullptr, nullptr, row, 0, comm_);
    MPI_Type_free(&row);
    check(rc, "gathering the solution's rows to rank 0");
  }

  std::unique_ptr<Message> send(int to, int tag, const void* data, std::size_t bytes) override {
    auto m = std::make_unique<MpiMessage>(rank_, "sending edge rows");
    check(MPI_Isend(data, checked_count(bytes, "edge rows' bytes"), MPI_BYTE, to, tag, comm_, &m->add()),
          "sending edge rows to rank " + std::to_string(to));
    return m;
  }

  std::unique_ptr<Message> receive(int from, int tag, void* data, std::size_t bytes) override {
    auto m = std::make_unique<MpiMessage>(rank_, "receiving ghost rows");
    check(MPI_Irecv(data, checked_count(bytes, "ghost rows' bytes"), MPI_BYTE, from, tag, comm_, &m->add()),
          "receiving ghost rows from rank " + std::to_string(from));
    return m;
  }

  std::unique_ptr<RepeatedMessage> repeated_send(int to, int tag, const void* data, std::size_t bytes) override {
    auto m = std::make_unique<MpiRepeated>(rank_, "sending edge rows");
    check(MPI_Send_init(data, checked_count(bytes, "edge rows' bytes"), MPI_BYTE, to, tag, comm_, &m->request()),
          "setting up the sends of edge rows to rank " + std::to_string(to));
    return m;
  }

  std::unique_ptr<RepeatedMessage> repeated_receive(int from, int tag, void* data, std::size_t bytes) override {
    auto m = std::make_unique<MpiRepeated>(rank_, "receiving ghost rows");
    check(MPI_Recv_init(data, checked_count(bytes, "ghost rows' bytes"), MPI_BYTE, from, tag, comm_, &m->request()),
          "setting up the receives of ghost rows from rank " + std::to_string(from));
    return m;
  }

  [[noreturn]] void abort(const std::string& why, int code) override {
    log::error("rank {} of {}: {}; ending every process of the solve", rank_, size_, why);
    MPI_Abort(comm_, code);
    std::_Exit(code);  // MPI_Abort does not return; should it, this process still ends
  }

 private:
  void check(int rc, const std::string& what) const {
    if (rc != MPI_SUCCESS) HETSTENCIL_THROW(Error, "rank " + std::to_string(rank_) + ": " + what + ": " + mpi_text(rc));
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  int local_rank_ = 0;
  bool cuda_aware_ = false;
  std::vector<double> gathered_;  // gather_sums' receive buffer
};

}  // namespace

bool mpi_built() { return true; }

bool cuda_aware_mpi_built() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return true;
#else
  return false;
#endif
}

std::unique_ptr<Processes> join_processes(int communicator) { return std::make_unique<MpiProcesses>(communicator); }

World init_mpi() {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised) {
    int provided = MPI_THREAD_SINGLE;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
      HETSTENCIL_THROW(Error, "MPI_Init_thread failed: this process cannot join its MPI job");
    }
  }
  World world;
  world.communicator = static_cast<int>(MPI_Comm_c2f(MPI_COMM_WORLD));
  MPI_Comm_rank(MPI_COMM_WORLD, &world.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world.size);
  return world;
}

void finalize_mpi() {
  int finalised = 0;
  MPI_Finalized(&finalised);
  if (!finalised) MPI_Finalize();
}

void abort_mpi(int communicator, int code) {
  MPI_Abort(MPI_Comm_f2c(communicator), code);
  std::_Exit(code);
}

}  // namespace hetstencil
