// A link between GPUs of two processes of one node through memory each opens
// of the other's (CUDA IPC, through the movers: RowMover::share, open_shared).
// Each GPU copies its neighbour's edge rows into its own ghost rows, queued on
// its transfer stream, as GPUs of one process do (shared_memory.hpp): the
// copies take the copy engines, not the SMs that an NCCL kernel takes beside
// the interior sweep. A small message a round (an offer) stands for that
// transport's counter: the edge rows of iterate t are complete, and here they
// are. The order is that transport's: a device overwrites its edge rows of
// iterate t only once its neighbour has posted the round after, and a GPU posts
// only once its transfer stream, where its copies from the neighbour are
// queued, is idle.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "devices/transport/halo_rows.hpp"
#include "devices/transport/processes.hpp"

namespace hetstencil {

class IpcLink {
 public:
  /// This process's device `halo`, on `side`, facing process `peer`'s GPU.
  /// Units are `unit_lines` lines of `line_bytes`. Waits watch `abort` and
  /// give up after `limit_s` (wait_for).
  IpcLink(Processes& processes, int peer, Side side, HaloRows& halo, std::int64_t unit_lines, std::size_t line_bytes,
          const std::atomic<bool>& abort, double limit_s);
  IpcLink(const IpcLink&) = delete;
  IpcLink& operator=(const IpcLink&) = delete;
  /// Closes what is still open of the neighbour's memory (a solve that failed).
  ~IpcLink();

  /// Set-up, both ends at once: shares the allocations our edge rows lie in
  /// (HaloRows::edge_memory) and opens the neighbour's, so that no round opens
  /// any. Returns why the link cannot be used ("" where it can).
  std::string open();
  /// Our edge rows of iterate t are complete: tells the neighbour where.
  void offer(std::int64_t t);
  /// Waits for the neighbour's offer of iterate t, then queues the copy of
  /// its `units` edge units into our ghost rows.
  void take(std::int64_t t, std::int64_t units);
  /// The end of a solve, both ends: closes the neighbour's memory and says so.
  void release();
  /// Then waits until the neighbour has closed ours: neither process frees
  /// memory the other has open.
  void wait_released();

 private:
  static constexpr std::size_t kMostBlocks = 4;
  // The set-up message: our allocations' handles, or none (blocks < 0) where
  // they cannot be shared.
  struct SetUp {
    std::int64_t blocks = -1;
    SharedHandle handles[kMostBlocks] = {};
  };
  // A round's message: where the edge rows of iterate t are.
  struct Offer {
    std::int64_t t = 0;
    std::int64_t block = 0;
    std::uint64_t offset = 0;
    std::uint64_t pitch = 0;
  };

  // Our allocations' handles; throws Error where they cannot be shared.
  SetUp shared() const;
  // Waits for `message` (wait_for); an error names what it waited for (what()).
  void wait(Message& message, const std::string& waiting_for) const;
  std::string what(const std::string& doing) const;

  Processes& processes_;
  int peer_;
  Side side_;
  HaloRows& halo_;
  std::int64_t unit_lines_;
  std::size_t line_bytes_;
  const std::atomic<bool>& abort_;
  double limit_s_;
  Offer out_;
  Offer in_;
  std::unique_ptr<RepeatedMessage> sending_;    // from out_
  std::unique_ptr<RepeatedMessage> receiving_;  // into in_
  // What a round's waits say where they last (made once: a round runs every iteration).
  std::string offer_sent_;
  std::string offer_come_;
  std::vector<const void*> ours_;  // HaloRows::edge_memory, as shared
  std::vector<char*> theirs_;      // the neighbour's allocations, open here, by its block number
  char released_ = 0;
  std::unique_ptr<Message> releasing_;  // the word that the neighbour's memory is closed here
};

}  // namespace hetstencil
