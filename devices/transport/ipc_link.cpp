#include "devices/transport/ipc_link.hpp"

#include <cstring>

#include "core/log.hpp"
#include "hetstencil/error.hpp"

namespace hetstencil {
namespace {

// Message tags of their own: offers of a process's first rows travel up, of
// its last rows down; one message a direction per round, in order.
constexpr int kOfferUp = 11;
constexpr int kOfferDown = 12;
constexpr int kReleased = 13;

bool same(const SharedRows& a, const SharedRows& b) { return a.handle == b.handle; }

}  // namespace

IpcLink::IpcLink(Processes& processes, int peer, Side side, HaloRows& halo, std::int64_t unit_lines,
                 std::size_t line_bytes, const std::atomic<bool>& abort, double limit_s)
    : processes_(processes),
      peer_(peer),
      side_(side),
      halo_(halo),
      unit_lines_(unit_lines),
      line_bytes_(line_bytes),
      abort_(abort),
      limit_s_(limit_s),
      tag_out_(side == Side::Top ? kOfferUp : kOfferDown),
      tag_in_(side == Side::Top ? kOfferDown : kOfferUp),
      sending_(processes.repeated_send(peer, tag_out_, &out_, sizeof out_)),
      receiving_(processes.repeated_receive(peer, tag_in_, &in_, sizeof in_)) {}

IpcLink::~IpcLink() {
  for (auto& [rows, base] : open_) {
    try {
      halo_.mover().close_shared(base);
    } catch (const Error& e) {
      log::warn("{}", e.what());
    }
  }
}

std::string IpcLink::what(const std::string& doing) const {
  return "rank " + std::to_string(processes_.rank()) + ": " + doing + " rank " + std::to_string(peer_) +
         " (CUDA IPC)";
}

void IpcLink::send(const Offer& offer) {
  wait_for(*sending_, abort_, what("delivery of an offer of edge rows to"), limit_s_);
  out_ = offer;
  sending_->start();
}

IpcLink::Offer IpcLink::receive() {
  receiving_->start();
  wait_for(*receiving_, abort_, what("word of edge rows from"), limit_s_);
  return in_;
}

char* IpcLink::opened(const SharedRows& rows) {
  for (auto& [known, base] : open_) {
    if (same(known, rows)) return base;
  }
  char* base = static_cast<char*>(halo_.mover().open_shared(rows.handle));
  open_.emplace_back(rows, base);
  return base;
}

// The slab's buffers are where a sync solve's edge rows are: the ghost rows of
// iterates 0, 1 and 2 are in each of them (a GPU keeps up to three, each
// opened here once). Rows staged elsewhere (a blocked solve's) are opened at
// their first round.
std::string IpcLink::open() {
  for (std::int64_t t = 0; t < kSetUpOffers; ++t) {
    const RowBlock rows = halo_.ghost(side_, t);
    const std::optional<SharedRows> shared = halo_.mover().share(rows.data);
    Offer offer;
    offer.t = shared ? kSetUp : kCannotShare;
    if (shared) offer.rows = *shared;
    send(offer);
  }
  std::string failure;
  for (std::int64_t i = 0; i < kSetUpOffers; ++i) {
    const Offer offer = receive();
    if (!failure.empty()) continue;
    if (offer.t == kCannotShare) {
      failure = what("the GPU memory cannot be shared by");
      continue;
    }
    try {
      opened(offer.rows);
    } catch (const Error& e) {
      failure = e.what();
    }
  }
  wait_for(*sending_, abort_, what("delivery of an offer of edge rows to"), limit_s_);
  return failure;
}

void IpcLink::offer(std::int64_t t) {
  const RowBlock edge = halo_.edge(side_, t);
  const SharedRows* rows = nullptr;
  for (const auto& [data, shared] : shared_) {
    if (data == edge.data) rows = &shared;
  }
  if (!rows) {
    const std::optional<SharedRows> shared = halo_.mover().share(edge.data);
    if (!shared) HETSTENCIL_THROW(Error, what("edge rows in memory that cannot be shared with"));
    rows = &shared_.emplace_back(edge.data, *shared).second;
  }
  Offer offer;
  offer.t = t;
  offer.pitch = edge.pitch;
  offer.rows = *rows;
  send(offer);
}

void IpcLink::take(std::int64_t t, std::int64_t units) {
  const Offer offer = receive();
  if (offer.t != t) {
    HETSTENCIL_THROW(Error, what("edge rows of iterate " + std::to_string(offer.t) + " where " + std::to_string(t) +
                                 " was due, from"));
  }
  const RowBlock from{opened(offer.rows) + offer.rows.offset, static_cast<std::size_t>(offer.pitch)};
  halo_.mover().from_shared(halo_.ghost(side_, t), from, units * unit_lines_, line_bytes_);
}

void IpcLink::release() {
  for (auto& [rows, base] : open_) halo_.mover().close_shared(base);
  open_.clear();
  released_out_ = processes_.send(peer_, kReleased, &released_byte_, 1);
}

void IpcLink::wait_released() {
  char byte = 0;
  const std::unique_ptr<Message> released = processes_.receive(peer_, kReleased, &byte, 1);
  wait_for(*released, abort_, what("word that our GPU memory is closed from"), limit_s_);
  wait_for(*released_out_, abort_, what("delivery of the word that its GPU memory is closed to"), limit_s_);
  wait_for(*sending_, abort_, what("delivery of an offer of edge rows to"), limit_s_);
}

}  // namespace hetstencil
