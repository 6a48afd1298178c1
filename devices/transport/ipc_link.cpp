#include "devices/transport/ipc_link.hpp"

#include "core/log.hpp"
#include "hetstencil/error.hpp"

namespace hetstencil {
namespace {

// Message tags of their own: offers of a process's first rows travel up, of
// its last rows down, one a direction per round, in order; between two
// processes one link, so one set-up and one release message each way.
constexpr int kOfferUp = 11;
constexpr int kOfferDown = 12;
constexpr int kSetUpTag = 13;
constexpr int kReleased = 14;

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
      sending_(processes.repeated_send(peer, side == Side::Top ? kOfferUp : kOfferDown, &out_, sizeof out_)),
      receiving_(processes.repeated_receive(peer, side == Side::Top ? kOfferDown : kOfferUp, &in_, sizeof in_)),
      offer_sent_(what("delivery of an offer of edge rows to")),
      offer_come_(what("word of edge rows from")) {}

IpcLink::~IpcLink() {
  for (char* base : theirs_) {
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

void IpcLink::wait(Message& message, const std::string& waiting_for) const {
  wait_for(message, abort_, waiting_for, limit_s_);
}

IpcLink::SetUp IpcLink::shared() const {
  if (ours_.empty() || ours_.size() > kMostBlocks) {
    HETSTENCIL_THROW(Error, what("GPU memory that cannot be shared with"));
  }
  SetUp mine;
  for (std::size_t b = 0; b < ours_.size(); ++b) {
    const std::optional<SharedHandle> handle = halo_.mover().share(ours_[b]);
    if (!handle) HETSTENCIL_THROW(Error, what("GPU memory that cannot be shared with"));
    mine.handles[b] = *handle;
  }
  mine.blocks = static_cast<std::int64_t>(ours_.size());
  return mine;
}

// Each end sends its set-up message while it receives the other's, so that
// neither waits for the other to receive first.
std::string IpcLink::open() {
  ours_ = halo_.edge_memory();
  std::string failure;
  SetUp mine;
  try {
    mine = shared();
  } catch (const Error& e) {
    failure = e.what();
  }
  SetUp theirs;
  const std::unique_ptr<Message> in = processes_.receive(peer_, kSetUpTag, &theirs, sizeof theirs);
  const std::unique_ptr<Message> out = processes_.send(peer_, kSetUpTag, &mine, sizeof mine);
  wait(*in, what("the handles of the GPU memory of"));
  wait(*out, what("delivery of the handles of its GPU memory to"));
  if (!failure.empty()) return failure;
  if (theirs.blocks < 0 || theirs.blocks > static_cast<std::int64_t>(kMostBlocks)) {
    return what("no GPU memory shared by");
  }
  try {
    for (std::int64_t b = 0; b < theirs.blocks; ++b) {
      theirs_.push_back(static_cast<char*>(halo_.mover().open_shared(theirs.handles[b])));
    }
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

// The edge rows lie in the allocation that starts last at or before them.
void IpcLink::offer(std::int64_t t) {
  const RowBlock edge = halo_.edge(side_, t);
  const char* rows = static_cast<const char*>(edge.data);
  std::int64_t block = -1;
  for (std::size_t b = 0; b < ours_.size(); ++b) {
    const char* base = static_cast<const char*>(ours_[b]);
    if (base <= rows && (block < 0 || base > static_cast<const char*>(ours_[static_cast<std::size_t>(block)]))) {
      block = static_cast<std::int64_t>(b);
    }
  }
  if (block < 0) HETSTENCIL_THROW(Error, what("edge rows outside the GPU memory shared with"));
  wait(*sending_, offer_sent_);
  out_.t = t;
  out_.block = block;
  out_.offset = static_cast<std::uint64_t>(rows - static_cast<const char*>(ours_[static_cast<std::size_t>(block)]));
  out_.pitch = edge.pitch;
  sending_->start();
}

void IpcLink::take(std::int64_t t, std::int64_t units) {
  receiving_->start();
  wait(*receiving_, offer_come_);
  if (in_.t != t || in_.block < 0 || in_.block >= static_cast<std::int64_t>(theirs_.size())) {
    HETSTENCIL_THROW(Error, what("edge rows of iterate " + std::to_string(in_.t) + " in block " +
                                 std::to_string(in_.block) + " where iterate " + std::to_string(t) +
                                 " was due, from"));
  }
  const RowBlock from{theirs_[static_cast<std::size_t>(in_.block)] + in_.offset, static_cast<std::size_t>(in_.pitch)};
  halo_.mover().from_shared(halo_.ghost(side_, t), from, units * unit_lines_, line_bytes_);
}

void IpcLink::release() {
  while (!theirs_.empty()) {
    halo_.mover().close_shared(theirs_.back());
    theirs_.pop_back();
  }
  releasing_ = processes_.send(peer_, kReleased, &released_, 1);
}

void IpcLink::wait_released() {
  char word = 0;
  const std::unique_ptr<Message> released = processes_.receive(peer_, kReleased, &word, 1);
  wait(*released, what("word that our GPU memory is closed from"));
  wait(*releasing_, what("delivery of the word that its GPU memory is closed to"));
  wait(*sending_, offer_sent_);
}

}  // namespace hetstencil
