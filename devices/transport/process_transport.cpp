#include "devices/transport/process_transport.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <thread>

#include "core/log.hpp"
#include "hetstencil/error.hpp"

namespace hetstencil {
namespace {

// Message tags: a process's last rows travelling down to the next process's
// top ghost rows, and its first rows travelling up. Between two processes one
// message a direction per round, and MPI keeps their order.
constexpr int kDown = 1;
constexpr int kUp = 2;

// A fresh message at each start: the repeated message of processes whose
// messages cannot be set up once.
class Resent final : public RepeatedMessage {
 public:
  explicit Resent(std::function<std::unique_ptr<Message>()> begin) : begin_(std::move(begin)) {}
  void start() override { current_ = begin_(); }
  bool done() override {
    if (current_ && current_->done()) current_.reset();  // a message's done() need not hold once true
    return !current_;
  }

 private:
  std::function<std::unique_ptr<Message>()> begin_;
  std::unique_ptr<Message> current_;
};

}  // namespace

std::unique_ptr<RepeatedMessage> Processes::repeated_send(int to, int tag, const void* data, std::size_t bytes) {
  return std::make_unique<Resent>([=] { return send(to, tag, data, bytes); });
}

std::unique_ptr<RepeatedMessage> Processes::repeated_receive(int from, int tag, void* data, std::size_t bytes) {
  return std::make_unique<Resent>([=] { return receive(from, tag, data, bytes); });
}

void wait_for(Message& message, const std::atomic<bool>& abort, const std::string& what, double limit_s) {
  // Spin a little (a neighbour's rows usually arrive within microseconds),
  // then yield the core: processes may share cores.
  const auto start = std::chrono::steady_clock::now();
  for (int polls = 0; !message.done(); ++polls) {
    if (abort.load()) HETSTENCIL_THROW(Aborted, "stopped: another device of this solve failed");
    if (polls % 1024 == 0 && std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > limit_s) {
      HETSTENCIL_THROW(Error, "no " + what + " for " + std::to_string(static_cast<int>(limit_s)) +
                                  " s: that process has stopped answering");
    }
    if (polls < 1000) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }
}

class ProcessTransport::End final : public Endpoint {
 public:
  End(ProcessTransport& owner, std::size_t k) : owner_(owner), k_(k), inner_(owner.local_.endpoint(k)) {
    remote_[0] = k == 0 ? owner.links_.above : -1;
    remote_[1] = k + 1 == owner.halos_.size() ? owner.links_.below : -1;
    for (std::size_t side = 0; side < 2; ++side) {
      links_[side].what_sent = "delivery of edge rows to rank " + std::to_string(remote_[side]);
    }
    // Element r of paths_ is the link between ranks r and r + 1.
    if (remote_[0] >= 0) links_[0].direct = owner.paths_[static_cast<std::size_t>(remote_[0])] == LinkPath::CudaAwareMpi;
    if (remote_[1] >= 0) links_[1].direct = owner.paths_[static_cast<std::size_t>(remote_[1] - 1)] == LinkPath::CudaAwareMpi;
    if (k == 0) links_[0].ipc = owner.ipc_[0].get();
    if (k + 1 == owner.halos_.size()) links_[1].ipc = owner.ipc_[1].get();
    for (std::size_t e = 0; e < owner.nccl_ends_.size(); ++e) {
      const NcclEnd& end = owner.nccl_ends_[e];
      if (end.device == k) links_[index(end.side)].nccl = static_cast<int>(e);
    }
  }
  End(const End&) = delete;
  End& operator=(const End&) = delete;
  ~End() override {
    // The neighbour received the last rows sent (every post is met by its
    // receive); a solve that failed leaves them to the message's cancel.
    for (Side side : {Side::Top, Side::Bottom}) {
      if (inner_.abort_flag().load()) break;
      try {
        wait_sent(side);
      } catch (const Error&) {
      }
    }
  }

  bool has_neighbour(Side side) const override { return remote(side) >= 0 || inner_.has_neighbour(side); }

  void send(Side side, std::int64_t t, std::int64_t rows) override {
    if (remote(side) < 0) return inner_.send(side, t, rows);
    links_[index(side)].rows_to_send = rows;
    if (links_[index(side)].nccl >= 0 || links_[index(side)].direct || links_[index(side)].ipc) {
      return;  // sent by post, from GPU memory
    }
    HaloRows& mine = halo();
    const RowBlock edge = mine.edge(side, t);
    const RowBlock host = mine.host_edge(side, t);
    if (host.data != edge.data) mine.mover().to_host(host, edge, lines(rows), owner_.job_.line_bytes());
  }

  // The rows go out once the device says they are complete: by an offer of
  // them to a neighbour that copies them itself (CUDA IPC); through NCCL,
  // queued on the device's stream with the neighbour's rows into our ghost
  // rows (a GPU's queued work waits for them); by a CUDA-aware MPI straight
  // from GPU memory; else (a GPU's host copy is queued until then) from a
  // buffer of our own, since the device may overwrite its edge rows before
  // the message is delivered.
  void post(std::int64_t t) override {
    failing_first([&] {
      inner_.post(t);
      NcclTransfer transfers[2];
      std::size_t count = 0;
      std::int64_t rows = 0;
      for (Side side : {Side::Top, Side::Bottom}) {
        Link& link = links_[index(side)];
        if (remote(side) < 0 || link.rows_to_send == 0) continue;
        if (link.ipc) {
          link.ipc->offer(t);
        } else if (link.nccl >= 0) {
          transfers[count++] = {static_cast<std::size_t>(link.nccl), halo().edge(side, t), halo().ghost(side, t)};
          rows = link.rows_to_send;
        } else if (link.direct) {
          send_direct(side, t);
        } else {
          send_staged(side, t);
        }
        link.rows_to_send = 0;
      }
      // Both sides in one group: no process waits for one side before the other.
      if (count > 0) owner_.nccl_->exchange(transfers, count, rows, owner_.job_.unit_lines(), owner_.job_.line_bytes());
    });
  }

  // The rows arrive in a buffer whose receive starts at the end of the round
  // before (expect), so that they land as soon as they are sent; NCCL's are
  // on their way already (post); a CUDA IPC link's copy is queued once the
  // neighbour has offered them.
  Completion receive(Side side, std::int64_t t, std::int64_t rows) override {
    if (remote(side) < 0) return inner_.receive(side, t, rows);
    Link& link = links_[index(side)];
    if (link.ipc) return Completion(std::make_unique<Taken>(*this, *link.ipc, t, rows));
    if (link.nccl >= 0) return Completion();
    if (link.direct) return receive_direct(side, t, rows);
    if (!link.expecting) expect(side, rows);
    if (rows != link.rows_arriving) {
      HETSTENCIL_THROW(Error, "rows a round from rank " + std::to_string(remote(side)) + " went from " +
                                  std::to_string(link.rows_arriving) + " to " + std::to_string(rows));
    }
    link.expecting = false;
    return Completion(std::make_unique<Arrival>(*this, side, t, rows, *link.incoming[link.slot],
                                                link.in[link.slot].data()));
  }

  CheckOutcome check(std::int64_t t, const double* row_sums, double max_abs) override {
    return failing_first([&] { return inner_.check(t, row_sums, max_abs); });
  }

  std::atomic<bool>& abort_flag() override { return inner_.abort_flag(); }

 private:
  // Rows arriving from another process, copied into the ghost rows on
  // arrival; the next round's receive is started then, into the other buffer
  // (the device has finished its copies from it before it posts again).
  class Arrival final : public Completion::Pending {
   public:
    Arrival(End& end, Side side, std::int64_t t, std::int64_t rows, Message& message, char* data)
        : end_(end), side_(side), t_(t), rows_(rows), message_(message), data_(data) {}
    void wait() override {
      end_.failing_first([&] {
        const int from = end_.remote(side_);
        wait_for(message_, end_.inner_.abort_flag(), "ghost rows from rank " + std::to_string(from),
                 end_.owner_.links_.silence_limit_s);
      });
      const std::size_t line_bytes = end_.owner_.job_.line_bytes();
      HaloRows& mine = end_.halo();
      mine.mover().from_host(mine.ghost(side_, t_), RowBlock{data_, line_bytes}, end_.lines(rows_), line_bytes);
      end_.expect(side_, rows_);
    }

   private:
    End& end_;
    Side side_;
    std::int64_t t_;
    std::int64_t rows_;
    Message& message_;
    char* data_;
  };

  // Rows a CUDA-aware MPI receives straight into the ghost rows: one message a
  // unit (its span: unit_span), waited for on the host before the
  // device queues the sweeps that read them.
  class DirectArrival final : public Completion::Pending {
   public:
    DirectArrival(End& end, Side side, std::vector<std::unique_ptr<Message>> units)
        : end_(end), side_(side), units_(std::move(units)) {}
    void wait() override {
      const std::string what = "ghost rows from rank " + std::to_string(end_.remote(side_));
      end_.failing_first([&] {
        for (auto& unit : units_) wait_for(*unit, end_.inner_.abort_flag(), what, end_.owner_.links_.silence_limit_s);
      });
    }

   private:
    End& end_;
    Side side_;
    std::vector<std::unique_ptr<Message>> units_;
  };

  // The neighbour's rows copied from its memory, once it has offered them.
  class Taken final : public Completion::Pending {
   public:
    Taken(End& end, IpcLink& link, std::int64_t t, std::int64_t rows) : end_(end), link_(link), t_(t), rows_(rows) {}
    void wait() override {
      end_.failing_first([&] { link_.take(t_, rows_); });
    }

   private:
    End& end_;
    IpcLink& link_;
    std::int64_t t_;
    std::int64_t rows_;
  };

  // A failure that NCCL's watch found is what an abort it caused reports
  // (the watch sets the abort flag that every wait watches).
  template <class Step>
  auto failing_first(const Step& step) -> decltype(step()) {
    try {
      return step();
    } catch (const Aborted&) {
      if (owner_.nccl_) owner_.nccl_->rethrow_failure();
      throw;
    }
  }

  // The sends of the round before, delivered.
  void wait_sent(Side side) {
    Link& link = links_[index(side)];
    const double limit = owner_.links_.silence_limit_s;
    if (link.sending) wait_for(*link.sending, inner_.abort_flag(), link.what_sent, limit);
    for (auto& unit : link.units_sent) wait_for(*unit, inner_.abort_flag(), link.what_sent, limit);
    link.units_sent.clear();
  }

  // Our edge rows of iterate t straight from GPU memory (a CUDA-aware MPI),
  // one message a unit. The device overwrites them only once the neighbour
  // has posted the round after, having received these.
  void send_direct(Side side, std::int64_t t) {
    wait_sent(side);
    Link& link = links_[index(side)];
    const RowBlock edge = halo().edge(side, t);
    for (std::int64_t i = 0; i < link.rows_to_send; ++i) {
      const UnitSpan unit = unit_span(edge, i, owner_.job_.unit_lines(), owner_.job_.line_bytes());
      link.units_sent.push_back(
          owner_.links_.processes->send(remote(side), side == Side::Top ? kUp : kDown, unit.data, unit.bytes));
    }
  }

  Completion receive_direct(Side side, std::int64_t t, std::int64_t rows) {
    const RowBlock ghost = halo().ghost(side, t);
    std::vector<std::unique_ptr<Message>> units;
    for (std::int64_t i = 0; i < rows; ++i) {
      const UnitSpan unit = unit_span(ghost, i, owner_.job_.unit_lines(), owner_.job_.line_bytes());
      units.push_back(
          owner_.links_.processes->receive(remote(side), side == Side::Top ? kDown : kUp, unit.data, unit.bytes));
    }
    return Completion(std::make_unique<DirectArrival>(*this, side, std::move(units)));
  }

  // Our edge rows of iterate t, from their host copy into the link's buffer,
  // then sent from it; the send set up once for a buffer of that size.
  void send_staged(Side side, std::int64_t t) {
    wait_sent(side);
    Link& link = links_[index(side)];
    const std::size_t bytes = static_cast<std::size_t>(link.rows_to_send) * owner_.job_.unit_bytes();
    if (!link.sending || link.out.size() != bytes) {
      link.out.resize(bytes);
      link.sending = owner_.links_.processes->repeated_send(remote(side), side == Side::Top ? kUp : kDown,
                                                            link.out.data(), bytes);
    }
    const std::size_t line_bytes = owner_.job_.line_bytes();
    HostRowMover().to_host(RowBlock{link.out.data(), line_bytes}, halo().host_edge(side, t), lines(link.rows_to_send),
                           line_bytes);
    link.sending->start();
  }

  // Starts the receive of the neighbour's next rows on `side`, into the
  // buffer the last rows did not use. One is left started after the last
  // round: the message cancels it.
  void expect(Side side, std::int64_t rows) {
    Link& link = links_[index(side)];
    link.slot = 1 - link.slot;
    const std::size_t bytes = static_cast<std::size_t>(rows) * owner_.job_.unit_bytes();
    std::vector<char>& buffer = link.in[link.slot];
    if (!link.incoming[link.slot] || buffer.size() != bytes) {
      buffer.resize(bytes);
      link.incoming[link.slot] = owner_.links_.processes->repeated_receive(
          remote(side), side == Side::Top ? kDown : kUp, buffer.data(), bytes);
    }
    link.incoming[link.slot]->start();
    link.rows_arriving = rows;
    link.expecting = true;
  }

  struct Link {
    IpcLink* ipc = nullptr;  // where CUDA IPC carries it
    int nccl = -1;  // its index among the NCCL ends, where NCCL carries it
    bool direct = false;  // a CUDA-aware MPI carries it from GPU memory
    std::vector<std::unique_ptr<Message>> units_sent;  // direct: the round's sends, a unit each
    std::vector<char> out;
    std::unique_ptr<RepeatedMessage> sending;  // from out
    std::vector<char> in[2];  // a round's rows arrive in in[slot], the next round's in the other
    std::unique_ptr<RepeatedMessage> incoming[2];  // into in[0], in[1]
    int slot = 1;
    bool expecting = false;  // incoming[slot] is started for the next rows
    std::int64_t rows_arriving = 0;
    std::string what_sent;  // "edge rows to rank 2", for a wait that lasts
    std::int64_t rows_to_send = 0;
  };

  static std::size_t index(Side side) { return side == Side::Top ? 0 : 1; }
  std::int64_t lines(std::int64_t units) const { return units * owner_.job_.unit_lines(); }
  int remote(Side side) const { return remote_[index(side)]; }
  HaloRows& halo() { return *owner_.halos_[k_]; }

  ProcessTransport& owner_;
  std::size_t k_;
  Endpoint& inner_;
  int remote_[2];
  Link links_[2];
};

ProcessTransport::ProcessTransport(std::vector<HaloRows*> halos, std::vector<RowRange> rows, const StencilJob& job,
                                   double h, int spins, ProcessLinks links)
    : halos_(halos),
      job_(job),
      links_(std::move(links)),
      local_(std::move(halos), std::move(rows), job, h, spins,
             [this](std::vector<TreeNode>& cover, double& max_abs) { combine_cover(cover, max_abs); }) {
  for (const RowRange& r : links_.ranks) {
    const std::vector<TreeNode> theirs = tree_cover(r.first - 1, r.end() - 1, job_.units());
    every_cover_.insert(every_cover_.end(), theirs.begin(), theirs.end());
    cover_counts_.push_back(static_cast<int>(theirs.size()));
  }
  choose_paths();
  if (std::find(paths_.begin(), paths_.end(), LinkPath::Nccl) != paths_.end()) {
    // Every process takes part in making the communicators, those without an NCCL link too.
    std::vector<bool> nccl_links;
    for (LinkPath path : paths_) nccl_links.push_back(path == LinkPath::Nccl);
    nccl_ = connect_nccl(*links_.processes, nccl_links, nccl_ends_, local_.endpoint(0).abort_flag(),
                         links_.silence_limit_s);
  }
  for (std::size_t k = 0; k < halos_.size(); ++k) ends_.push_back(std::make_unique<End>(*this, k));
}

void ProcessTransport::combine_cover(std::vector<TreeNode>& cover, double& max_abs) {
  std::vector<double> mine;
  for (const TreeNode& node : cover) mine.push_back(node.sum);
  const std::vector<double> sums = links_.processes->gather_sums(mine, cover_counts_, max_abs,
                                                                 local_.endpoint(0).abort_flag(), links_.silence_limit_s);
  cover = every_cover_;
  for (std::size_t i = 0; i < cover.size(); ++i) cover[i].sum = sums[i];
}

std::string node_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "?";
  return name;
}

// Where GPU memory may cross a link (gpu_links_built) and the option allows,
// the processes tell each other which of their boundary devices are GPUs, on
// which node, and whether their MPI is CUDA-aware now; otherwise every link is
// host staging, as every process knows.
void ProcessTransport::choose_paths() {
  const int size = links_.processes->size();
  paths_.assign(static_cast<std::size_t>(size - 1), LinkPath::HostStaging);
  if (links_.gpu_transport == GpuTransport::Host || !gpu_links_built()) return;
  const std::size_t last = halos_.size() - 1;
  const std::optional<GpuQueue> top = halos_[0]->mover().gpu_queue();
  const std::optional<GpuQueue> bottom = halos_[last]->mover().gpu_queue();
  ProcessBoundary mine;
  mine.top_gpu = top.has_value();
  mine.bottom_gpu = bottom.has_value();
  mine.cuda_aware = links_.processes->cuda_aware();
  mine.top_id = top ? top->pci_bus_id : "";
  mine.bottom_id = bottom ? bottom->pci_bus_id : "";
  mine.node = node_name();
  std::vector<ProcessBoundary> all;
  for (const std::string& text : links_.processes->all_gather(to_text(mine))) all.push_back(boundary_from_text(text));
  paths_ = choose_link_paths(links_.gpu_transport, all, nccl_built());
  open_ipc_links(all);
  const int me = links_.processes->rank();
  if (me > 0 && paths_[static_cast<std::size_t>(me - 1)] == LinkPath::Nccl) {
    nccl_ends_.push_back(NcclEnd{0, Side::Top, *top, me - 1, me - 1});
  }
  if (me + 1 < size && paths_[static_cast<std::size_t>(me)] == LinkPath::Nccl) {
    nccl_ends_.push_back(NcclEnd{last, Side::Bottom, *bottom, me + 1, me});
  }
}

void ProcessTransport::open_ipc_links(const std::vector<ProcessBoundary>& all) {
  if (std::find(paths_.begin(), paths_.end(), LinkPath::CudaIpc) == paths_.end()) return;
  Processes& processes = *links_.processes;
  const int me = processes.rank();
  const std::atomic<bool>& abort = local_.endpoint(0).abort_flag();
  const auto link = [&](int peer, Side side, HaloRows& halo) {
    return std::make_unique<IpcLink>(processes, peer, side, halo, job_.unit_lines(), job_.line_bytes(), abort,
                                     links_.silence_limit_s);
  };
  // The link above first: rank 0 has none, so each pair of ends meets in turn.
  std::string failures[2];
  if (me > 0 && paths_[static_cast<std::size_t>(me - 1)] == LinkPath::CudaIpc) {
    ipc_[0] = link(me - 1, Side::Top, *halos_.front());
    failures[0] = ipc_[0]->open();
  }
  if (me + 1 < processes.size() && paths_[static_cast<std::size_t>(me)] == LinkPath::CudaIpc) {
    ipc_[1] = link(me + 1, Side::Bottom, *halos_.back());
    failures[1] = ipc_[1]->open();
  }
  constexpr char kApart = '\x1f';
  const std::vector<std::string> every = processes.all_gather(failures[0] + kApart + failures[1]);
  std::vector<std::string> why(paths_.size());
  for (std::size_t r = 0; r < paths_.size(); ++r) {
    const std::string above = every[r].substr(every[r].find(kApart) + 1);         // rank r's bottom end
    const std::string below = every[r + 1].substr(0, every[r + 1].find(kApart));  // rank r + 1's top end
    why[r] = above.empty() ? below : below.empty() ? above : above + "; " + below;
  }
  const std::vector<LinkPath> opened = paths_after_opening(links_.gpu_transport, paths_, why, all, nccl_built());
  for (std::size_t r = 0; r < paths_.size(); ++r) {
    if (opened[r] == paths_[r]) continue;
    if (me == 0) log::warn("r{}-r{}: {}: {} carries the link", r, r + 1, why[r], to_string(opened[r]));
    if (static_cast<int>(r) == me - 1) ipc_[0].reset();
    if (static_cast<int>(r) == me) ipc_[1].reset();
  }
  paths_ = opened;
}

// Each end closes the neighbour's memory and says so before it waits for the
// neighbour's word: no process waits for one that waits for it. A solve that
// failed does not come here: the links' destructors close what is open.
void ProcessTransport::finish() {
  for (auto& link : ipc_) {
    if (link) link->release();
  }
  for (auto& link : ipc_) {
    if (link) link->wait_released();
  }
}

ProcessTransport::~ProcessTransport() = default;

Endpoint& ProcessTransport::endpoint(std::size_t k) { return *ends_[k]; }

void ProcessTransport::abort() {
  local_.abort();
  if (nccl_) nccl_->abort();
}

ExchangeOutcome ProcessTransport::outcome() {
  ExchangeOutcome outcome = local_.outcome();
  outcome.links = describe_link_paths(paths_);
  return outcome;
}

}  // namespace hetstencil
