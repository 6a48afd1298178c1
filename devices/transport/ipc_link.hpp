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
#include <utility>
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

  /// Set-up, both ends at once: shares the memory of our slab's buffers and
  /// opens the neighbour's, so that the rounds find them open. Returns why the
  /// neighbour's memory cannot be opened here ("" where it can).
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
  // What an offer carries: the iterate (kSetUp, kCannotShare at set-up) and
  // where its rows are.
  struct Offer {
    std::int64_t t = 0;
    std::uint64_t pitch = 0;
    SharedRows rows;
  };
  static constexpr std::int64_t kSetUp = -1;
  static constexpr std::int64_t kCannotShare = -2;
  static constexpr std::int64_t kSetUpOffers = 3;

  void send(const Offer& offer);
  Offer receive();
  // The neighbour's allocation `handle` in this process, opened at its first sight.
  char* opened(const SharedRows& rows);
  std::string what(const std::string& doing) const;

  Processes& processes_;
  int peer_;
  Side side_;
  HaloRows& halo_;
  std::int64_t unit_lines_;
  std::size_t line_bytes_;
  const std::atomic<bool>& abort_;
  double limit_s_;
  int tag_out_;
  int tag_in_;
  Offer out_;
  Offer in_;
  std::unique_ptr<RepeatedMessage> sending_;    // from out_
  std::unique_ptr<RepeatedMessage> receiving_;  // into in_
  std::vector<std::pair<const void*, SharedRows>> shared_;  // our rows shared, by address
  std::vector<std::pair<SharedRows, char*>> open_;          // the neighbour's allocations opened here
  char released_byte_ = 0;
  std::unique_ptr<Message> released_out_;  // the word that the neighbour's memory is closed here
};

}  // namespace hetstencil
