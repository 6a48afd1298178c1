// NCCL between GPUs of neighbouring processes (see nccl_links.hpp). A
// blocking communicator: calls return once their work is queued. The watch
// runs on a thread of its own, since a GPU waiting for a dead neighbour
// holds its host thread in a CUDA wait that only ncclCommAbort ends.
#include <cuda_runtime.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>

#include "core/log.hpp"
#include "devices/transport/link_paths.hpp"
#include "devices/transport/nccl_api.hpp"
#include "devices/transport/nccl_links.hpp"
#include "hetstencil/error.hpp"

namespace hetstencil {

bool nccl_built() { return true; }

namespace {

const NcclApi& nccl_api() { return NcclApi::get(); }


using Clock = std::chrono::steady_clock;

// How often the watch looks: far below any limit, far above its cost.
constexpr auto kWatchEvery = std::chrono::milliseconds(20);

class Nccl final : public NcclLinks {
 public:
  Nccl(Processes& processes, const std::vector<bool>& nccl_links, std::vector<NcclEnd> ends, std::atomic<bool>& abort,
       double limit_s)
      : rank_(processes.rank()), abort_(abort), limit_s_(limit_s) {
    // Rank 0's ids, one a link NCCL carries, reach every process, those without
    // a GPU at such a link too.
    std::string ids;
    for (bool nccl : nccl_links) {
      ncclUniqueId id{};
      if (nccl && rank_ == 0) check(nccl_api().get_unique_id(&id), "making an NCCL communicator's id");
      if (nccl) ids.append(id.internal, sizeof id.internal);
    }
    ids = processes.broadcast(ids);
    const auto id_of = [&](int link) {
      std::size_t before = 0;  // the NCCL links above `link`
      for (int r = 0; r < link; ++r) before += nccl_links[static_cast<std::size_t>(r)] ? 1 : 0;
      ncclUniqueId id{};
      std::memcpy(id.internal, ids.data() + before * sizeof id.internal, sizeof id.internal);
      return id;
    };
    for (const NcclEnd& end : ends) ends_.emplace_back().end = end;
    if (ends_.empty()) return;
    // This process's ends join their links' communicators from this one
    // thread: in one group, so that none waits for another's.
    check(nccl_api().group_start(), "joining the NCCL communicators of its links");
    for (EndState& e : ends_) {
      cuda(cudaSetDevice(gpu(e)), gpu(e), "selecting the GPU");
      // The upper process's GPU is rank 0 of the link, the lower's rank 1.
      check(nccl_api().comm_init_rank(&e.comm, 2, id_of(e.end.link), e.end.side == Side::Bottom ? 0 : 1),
            "CUDA device " + std::to_string(gpu(e)) + ": joining the NCCL communicator of its link with rank " +
                std::to_string(e.end.peer_process));
    }
    check(nccl_api().group_end(), "joining the NCCL communicators of its links");
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
    for (EndState& e : ends_) {
      cudaSetDevice(gpu(e));
      if (e.comm) {
        if (const ncclResult_t rc = nccl_api().comm_destroy(e.comm); rc != ncclSuccess) {
          log::warn("rank {}, CUDA device {}: closing the NCCL communicator of its link with rank {}: {}", rank_,
                    gpu(e), e.end.peer_process, nccl_api().get_error_string(rc));
        }
      }
      if (e.done) cudaEventDestroy(e.done);
    }
  }

  void exchange(const NcclTransfer* transfers, std::size_t count, std::int64_t units, std::int64_t lines,
                std::size_t line_bytes) override {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!failure_.empty()) HETSTENCIL_THROW(Error, failure_);
    if (aborted_) HETSTENCIL_THROW(Aborted, "stopped: another device of this solve failed");
    const EndState& first = ends_[transfers[0].end];
    const auto stream = static_cast<cudaStream_t>(first.end.queue.stream);
    std::string doing = "CUDA device " + std::to_string(gpu(first)) + ": exchanging ghost rows with rank";
    for (std::size_t i = 0; i < count; ++i) doing += " " + std::to_string(ends_[transfers[i].end].end.peer_process);
    check(nccl_api().group_start(), doing);
    for (std::size_t i = 0; i < count; ++i) {
      const EndState& e = ends_[transfers[i].end];
      const int peer = e.end.side == Side::Bottom ? 1 : 0;
      for (std::int64_t u = 0; u < units; ++u) {
        const UnitSpan edge = unit_span(transfers[i].edge, u, lines, line_bytes);
        check(nccl_api().send(edge.data, edge.bytes, ncclChar, peer, e.comm, stream), doing, e.comm);
        const UnitSpan ghost = unit_span(transfers[i].ghost, u, lines, line_bytes);
        check(nccl_api().recv(ghost.data, ghost.bytes, ncclChar, peer, e.comm, stream), doing, e.comm);
      }
    }
    check(nccl_api().group_end(), doing);
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
  struct EndState {
    NcclEnd end;
    ncclComm_t comm = nullptr;   // its link's
    cudaEvent_t done = nullptr;  // recorded after its last exchange
    bool pending = false;        // that exchange may not have finished
    Clock::time_point issued;
  };

  static int gpu(const EndState& e) { return e.end.queue.gpu; }

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
    check(nccl_api().group_start(), doing);
    for (std::size_t i = 0; i < ends_.size(); ++i) {
      const EndState& e = ends_[i];
      const int peer = e.end.side == Side::Bottom ? 1 : 0;
      const auto stream = static_cast<cudaStream_t>(e.end.queue.stream);
      check(nccl_api().send(bytes[i], 1, ncclChar, peer, e.comm, stream), doing, e.comm);
      check(nccl_api().recv(static_cast<char*>(bytes[i]) + 1, 1, ncclChar, peer, e.comm, stream), doing, e.comm);
    }
    check(nccl_api().group_end(), doing);
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
    ncclResult_t state = ncclSuccess;
    const ncclResult_t rc = nccl_api().comm_get_async_error(e.comm, &state);
    if (rc != ncclSuccess) state = rc;
    const std::string with = "rank " + std::to_string(rank_) + ", CUDA device " + std::to_string(gpu(e)) +
                             ": ghost rows with rank " + std::to_string(e.end.peer_process) + " over NCCL: ";
    if (state != ncclSuccess && state != ncclInProgress) return with + nccl_text(state, e.comm);
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
    for (EndState& e : ends_) {
      if (!e.comm) continue;
      cudaSetDevice(gpu(e));
      nccl_api().comm_abort(e.comm);  // what it returns changes nothing: the solve is ending
      e.comm = nullptr;
    }
  }

  static std::string nccl_text(ncclResult_t rc, ncclComm_t comm) {
    std::string text = nccl_api().get_error_string(rc);
    const char* last = comm ? nccl_api().get_last_error(comm) : nullptr;
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
  std::vector<EndState> ends_;
  std::mutex mutex_;  // the communicators: NCCL's calls, the watch's looks and ncclCommAbort
  std::condition_variable woken_;
  bool stop_ = false;
  bool aborted_ = false;
  std::string failure_;  // the watch's
  std::thread watch_;
};

}  // namespace

std::unique_ptr<NcclLinks> connect_nccl(Processes& processes, const std::vector<bool>& nccl_links,
                                        std::vector<NcclEnd> ends, std::atomic<bool>& abort,
                                        double silence_limit_s) {
  return std::make_unique<Nccl>(processes, nccl_links, std::move(ends), abort, silence_limit_s);
}

}  // namespace hetstencil
