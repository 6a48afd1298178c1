// NCCL between GPUs of neighbouring processes (see nccl_links.hpp). A
// blocking communicator: calls return once their work is queued. The watch
// runs on a thread of its own, since a GPU waiting for a dead neighbour
// holds its host thread in a CUDA wait that only ncclCommAbort ends.
#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>

#include "core/log.hpp"
#include "devices/transport/link_paths.hpp"
#include "devices/transport/nccl_links.hpp"
#include "hetstencil/error.hpp"

namespace hetstencil {

bool nccl_built() { return true; }

namespace {

using Clock = std::chrono::steady_clock;

// How often the watch looks: far below any limit, far above its cost.
constexpr auto kWatchEvery = std::chrono::milliseconds(20);

class Nccl final : public NcclLinks {
 public:
  Nccl(Processes& processes, std::vector<NcclEnd> ends, int first_rank, int ranks, std::atomic<bool>& abort,
       double limit_s)
      : rank_(processes.rank()), abort_(abort), limit_s_(limit_s) {
    for (const NcclEnd& end : ends) {
      if (members_.empty() || ends_.back().end.device != end.device) members_.push_back(Member{end.queue.gpu});
      EndState& e = ends_.emplace_back();
      e.end = end;
      e.member = members_.size() - 1;
    }
    // Rank 0's id reaches every process, those without GPUs at a boundary too.
    ncclUniqueId id{};
    if (rank_ == 0) check(ncclGetUniqueId(&id), "making the NCCL communicator's id");
    const std::string sent = processes.broadcast(std::string(id.internal, sizeof id.internal));
    std::memcpy(id.internal, sent.data(), sizeof id.internal);
    if (members_.empty()) return;
    // Several GPUs of one process join from this one thread: in one group.
    check(ncclGroupStart(), "joining the NCCL communicator");
    for (std::size_t m = 0; m < members_.size(); ++m) {
      Member& member = members_[m];
      cuda(cudaSetDevice(member.gpu), member.gpu, "selecting the GPU");
      check(ncclCommInitRank(&member.comm, ranks, id, first_rank + static_cast<int>(m)),
            "joining the NCCL communicator as rank " + std::to_string(first_rank + static_cast<int>(m)) + " of " +
                std::to_string(ranks));
    }
    check(ncclGroupEnd(), "joining the NCCL communicator");
    for (EndState& e : ends_) {
      cuda(cudaSetDevice(gpu(e)), gpu(e), "selecting the GPU");
      cuda(cudaEventCreateWithFlags(&e.done, cudaEventDisableTiming), gpu(e), "creating an event");
    }
    connect_all();
    watch_ = std::thread([this] { watch(); });
  }

  Nccl(const Nccl&) = delete;
  Nccl& operator=(const Nccl&) = delete;

  ~Nccl() override {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    woken_.notify_all();
    if (watch_.joinable()) watch_.join();
    // A solve that failed may leave kernels waiting for a neighbour: aborted,
    // not destroyed (ncclCommDestroy would wait for them).
    if (abort_.load()) abort_comms();
    for (Member& member : members_) {
      if (!member.comm) continue;
      cudaSetDevice(member.gpu);
      if (const ncclResult_t rc = ncclCommDestroy(member.comm); rc != ncclSuccess) {
        log::warn("rank {}, CUDA device {}: closing the NCCL communicator: {}", rank_, member.gpu,
                  ncclGetErrorString(rc));
      }
    }
    for (EndState& e : ends_) {
      if (e.done) cudaEventDestroy(e.done);
    }
  }

  void exchange(const NcclTransfer* transfers, std::size_t count, std::int64_t rows,
                std::size_t unit_bytes) override {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!failure_.empty()) HETSTENCIL_THROW(Error, failure_);
    if (aborted_) HETSTENCIL_THROW(Aborted, "stopped: another device of this solve failed");
    EndState& first = ends_[transfers[0].end];
    const ncclComm_t comm = members_[first.member].comm;
    const auto stream = static_cast<cudaStream_t>(first.end.queue.stream);
    std::string doing = "CUDA device " + std::to_string(gpu(first)) + ": exchanging ghost rows with rank";
    for (std::size_t i = 0; i < count; ++i) doing += " " + std::to_string(ends_[transfers[i].end].end.peer_process);
    check(ncclGroupStart(), doing, comm);
    for (std::size_t i = 0; i < count; ++i) {
      const int peer = ends_[transfers[i].end].end.peer;
      queue_rows(transfers[i].edge, rows, unit_bytes, [&](void* data, std::size_t bytes) {
        check(ncclSend(data, bytes, ncclChar, peer, comm, stream), doing, comm);
      });
      queue_rows(transfers[i].ghost, rows, unit_bytes, [&](void* data, std::size_t bytes) {
        check(ncclRecv(data, bytes, ncclChar, peer, comm, stream), doing, comm);
      });
    }
    check(ncclGroupEnd(), doing, comm);
    for (std::size_t i = 0; i < count; ++i) {
      EndState& e = ends_[transfers[i].end];
      cuda(cudaEventRecord(e.done, stream), gpu(e), doing);
      e.pending = true;
      e.issued = Clock::now();
    }
  }

  void rethrow_failure() override {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!failure_.empty()) HETSTENCIL_THROW(Error, failure_);
  }

  void abort() override {
    const std::lock_guard<std::mutex> lock(mutex_);
    abort_comms();
  }

 private:
  struct Member {
    int gpu = -1;
    ncclComm_t comm = nullptr;
  };
  struct EndState {
    NcclEnd end;
    std::size_t member = 0;
    cudaEvent_t done = nullptr;  // recorded after its last exchange
    bool pending = false;        // that exchange may not have finished
    Clock::time_point issued;
  };

  int gpu(const EndState& e) const { return members_[e.member].gpu; }

  // One message a unit (row or plane): a send must match its receive, and
  // the units are a pitch apart on one side, maybe contiguous on the other.
  template <class Queue>
  static void queue_rows(RowBlock block, std::int64_t rows, std::size_t unit_bytes, const Queue& queue) {
    char* data = static_cast<char*>(block.data);
    for (std::int64_t i = 0; i < rows; ++i) queue(data + static_cast<std::size_t>(i) * block.pitch, unit_bytes);
  }

  // NCCL connects a pair of ranks at their first message: a byte each way now,
  // so that the iterations do not pay for it, and a dead neighbour is seen
  // before the solve starts.
  void connect_all() {
    std::vector<void*> bytes(ends_.size(), nullptr);
    for (std::size_t i = 0; i < ends_.size(); ++i) {
      cuda(cudaSetDevice(gpu(ends_[i])), gpu(ends_[i]), "selecting the GPU");
      cuda(cudaMalloc(&bytes[i], 2), gpu(ends_[i]), "allocating two bytes to connect its NCCL links");
    }
    const std::string doing = "connecting to its neighbours through NCCL";
    check(ncclGroupStart(), doing);
    for (std::size_t i = 0; i < ends_.size(); ++i) {
      const EndState& e = ends_[i];
      const ncclComm_t comm = members_[e.member].comm;
      const auto stream = static_cast<cudaStream_t>(e.end.queue.stream);
      check(ncclSend(bytes[i], 1, ncclChar, e.end.peer, comm, stream), doing, comm);
      check(ncclRecv(static_cast<char*>(bytes[i]) + 1, 1, ncclChar, e.end.peer, comm, stream), doing, comm);
    }
    check(ncclGroupEnd(), doing);
    for (EndState& e : ends_) {
      cuda(cudaEventRecord(e.done, static_cast<cudaStream_t>(e.end.queue.stream)), gpu(e), doing);
      e.pending = true;
      e.issued = Clock::now();
    }
    // Waits as the watch would, from this thread: the watch has not started.
    for (EndState& e : ends_) {
      while (e.pending) {
        if (std::string wrong = look(e); !wrong.empty()) HETSTENCIL_THROW(Error, wrong);
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
    }
    for (std::size_t i = 0; i < ends_.size(); ++i) {
      cudaSetDevice(gpu(ends_[i]));
      cuda(cudaFree(bytes[i]), gpu(ends_[i]), "freeing the bytes that connected its NCCL links");
    }
  }

  // What is wrong with end e, in words ("" where nothing is): its
  // communicator's asynchronous error, or its last exchange unfinished beyond
  // the limit. Clears e.pending once that exchange has finished.
  std::string look(EndState& e) {
    const ncclComm_t comm = members_[e.member].comm;
    ncclResult_t state = ncclSuccess;
    const ncclResult_t rc = ncclCommGetAsyncError(comm, &state);
    if (rc != ncclSuccess) state = rc;
    const std::string with = "rank " + std::to_string(rank_) + ", CUDA device " + std::to_string(gpu(e)) +
                             ": ghost rows with rank " + std::to_string(e.end.peer_process) + " over NCCL: ";
    if (state != ncclSuccess && state != ncclInProgress) return with + nccl_text(state, comm);
    if (!e.pending) return {};
    cudaSetDevice(gpu(e));
    const cudaError_t query = cudaEventQuery(e.done);
    if (query == cudaSuccess) {
      e.pending = false;
      return {};
    }
    if (query != cudaErrorNotReady) return with + cudaGetErrorString(query);
    if (std::chrono::duration<double>(Clock::now() - e.issued).count() > limit_s_) {
      return with + "nothing for " + std::to_string(static_cast<int>(limit_s_)) +
             " s: that process has stopped answering";
    }
    return {};
  }

  void watch() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!woken_.wait_for(lock, kWatchEvery, [this] { return stop_; })) {
      if (aborted_) continue;
      if (abort_.load()) {
        // Another device failed: GPUs waiting for neighbours are let go.
        abort_comms();
        continue;
      }
      for (EndState& e : ends_) {
        std::string wrong = look(e);
        if (wrong.empty()) continue;
        log::error("{}", wrong);
        failure_ = std::move(wrong);
        abort_.store(true);
        abort_comms();
        break;
      }
    }
  }

  // Under mutex_ (or before the watch starts).
  void abort_comms() {
    if (aborted_) return;
    aborted_ = true;
    for (Member& member : members_) {
      if (!member.comm) continue;
      cudaSetDevice(member.gpu);
      ncclCommAbort(member.comm);  // what it returns changes nothing: the solve is ending
      member.comm = nullptr;
    }
  }

  static std::string nccl_text(ncclResult_t rc, ncclComm_t comm) {
    std::string text = ncclGetErrorString(rc);
    const char* last = comm ? ncclGetLastError(comm) : nullptr;
    if (last && *last) text += std::string(" (") + last + ")";
    return text;
  }

  void check(ncclResult_t rc, const std::string& doing, ncclComm_t comm = nullptr) const {
    if (rc == ncclSuccess || rc == ncclInProgress) return;
    HETSTENCIL_THROW(Error, "rank " + std::to_string(rank_) + ": " + doing + ": " + nccl_text(rc, comm));
  }

  void cuda(cudaError_t rc, int gpu, const std::string& doing) const {
    if (rc == cudaSuccess) return;
    HETSTENCIL_THROW(Error, "rank " + std::to_string(rank_) + ", CUDA device " + std::to_string(gpu) + ": " + doing +
                                ": " + cudaGetErrorName(rc) + " (" + cudaGetErrorString(rc) + ")");
  }

  int rank_;
  std::atomic<bool>& abort_;
  double limit_s_;
  std::vector<Member> members_;
  std::vector<EndState> ends_;
  std::mutex mutex_;  // the communicators: NCCL's calls, the watch's looks and ncclCommAbort
  std::condition_variable woken_;
  bool stop_ = false;
  bool aborted_ = false;
  std::string failure_;  // the watch's
  std::thread watch_;
};

}  // namespace

std::unique_ptr<NcclLinks> connect_nccl(Processes& processes, std::vector<NcclEnd> ends, int first_rank, int ranks,
                                        std::atomic<bool>& abort, double silence_limit_s) {
  return std::make_unique<Nccl>(processes, std::move(ends), first_rank, ranks, abort, silence_limit_s);
}

}  // namespace hetstencil
