#include "devices/transport/process_transport.hpp"

#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "hetstencil/error.hpp"

namespace hetstencil {
namespace {

// Message tags: a process's last rows travelling down to the next process's
// top ghost rows, and its first rows travelling up. Between two processes one
// message a direction per round, and MPI keeps their order.
constexpr int kDown = 1;
constexpr int kUp = 2;

}  // namespace

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
  }
  End(const End&) = delete;
  End& operator=(const End&) = delete;
  ~End() override {
    // The neighbour received the last rows sent (every post is met by its
    // receive); a solve that failed leaves them to MpiMessage's cancel.
    for (Link& link : links_) {
      if (!link.sent || inner_.abort_flag().load()) continue;
      try {
        wait_for(*link.sent, inner_.abort_flag(), link.what_sent, owner_.links_.silence_limit_s);
      } catch (const Error&) {
      }
    }
  }

  bool has_neighbour(Side side) const override { return remote(side) >= 0 || inner_.has_neighbour(side); }

  void send(Side side, std::int64_t t, std::int64_t rows) override {
    if (remote(side) < 0) return inner_.send(side, t, rows);
    HaloRows& mine = halo();
    const RowBlock edge = mine.edge(side, t);
    const RowBlock host = mine.host_edge(side, t);
    if (host.data != edge.data) mine.mover().to_host(host, edge, rows, owner_.job_.unit_bytes());
    links_[index(side)].rows_to_send = rows;
  }

  // The rows go out once the device says they are complete (a GPU's host
  // copy is queued until then), from a buffer of our own: the device may
  // overwrite its edge rows before the message is delivered.
  void post(std::int64_t t) override {
    inner_.post(t);
    for (Side side : {Side::Top, Side::Bottom}) {
      Link& link = links_[index(side)];
      if (remote(side) < 0 || link.rows_to_send == 0) continue;
      if (link.sent) wait_for(*link.sent, inner_.abort_flag(), link.what_sent, owner_.links_.silence_limit_s);
      const std::size_t row_bytes = owner_.job_.unit_bytes();
      const RowBlock from = halo().host_edge(side, t);
      link.out.resize(static_cast<std::size_t>(link.rows_to_send) * row_bytes);
      for (std::int64_t i = 0; i < link.rows_to_send; ++i) {
        std::memcpy(link.out.data() + static_cast<std::size_t>(i) * row_bytes,
                    static_cast<const char*>(from.data) + static_cast<std::size_t>(i) * from.pitch, row_bytes);
      }
      link.sent = owner_.links_.processes->send(remote(side), side == Side::Top ? kUp : kDown, link.out.data(),
                                                link.out.size());
      link.rows_to_send = 0;
    }
  }

  // The rows arrive in a buffer whose receive is posted at the end of the
  // round before (expect), so that they land as soon as they are sent.
  Completion receive(Side side, std::int64_t t, std::int64_t rows) override {
    if (remote(side) < 0) return inner_.receive(side, t, rows);
    Link& link = links_[index(side)];
    if (!link.arriving) expect(side, rows);
    if (rows != link.rows_arriving) {
      HETSTENCIL_THROW(Error, "rows a round from rank " + std::to_string(remote(side)) + " went from " +
                                  std::to_string(link.rows_arriving) + " to " + std::to_string(rows));
    }
    return Completion(std::make_unique<Arrival>(*this, side, t, rows, std::move(link.arriving),
                                                link.in[link.slot].data()));
  }

  CheckOutcome check(std::int64_t t, const double* row_sums, double max_abs) override {
    return inner_.check(t, row_sums, max_abs);
  }

  std::atomic<bool>& abort_flag() override { return inner_.abort_flag(); }

 private:
  // Rows arriving from another process, copied into the ghost rows on
  // arrival; the next round's receive is posted then, into the other buffer
  // (the device has finished its copies from it before it posts again).
  class Arrival final : public Completion::Pending {
   public:
    Arrival(End& end, Side side, std::int64_t t, std::int64_t rows, std::unique_ptr<Message> message, char* data)
        : end_(end), side_(side), t_(t), rows_(rows), message_(std::move(message)), data_(data) {}
    void wait() override {
      const int from = end_.remote(side_);
      wait_for(*message_, end_.inner_.abort_flag(), "ghost rows from rank " + std::to_string(from),
               end_.owner_.links_.silence_limit_s);
      const std::size_t row_bytes = end_.owner_.job_.unit_bytes();
      HaloRows& mine = end_.halo();
      mine.mover().from_host(mine.ghost(side_, t_), RowBlock{data_, row_bytes}, rows_, row_bytes);
      end_.expect(side_, rows_);
    }

   private:
    End& end_;
    Side side_;
    std::int64_t t_;
    std::int64_t rows_;
    std::unique_ptr<Message> message_;
    char* data_;
  };

  // Posts the receive of the neighbour's next rows on `side`, into the buffer
  // the last rows did not use. One is left posted after the last round: its
  // message (MpiMessage) cancels it.
  void expect(Side side, std::int64_t rows) {
    Link& link = links_[index(side)];
    link.slot = 1 - link.slot;
    std::vector<char>& buffer = link.in[link.slot];
    buffer.resize(static_cast<std::size_t>(rows) * owner_.job_.unit_bytes());
    link.rows_arriving = rows;
    link.arriving = owner_.links_.processes->receive(remote(side), side == Side::Top ? kDown : kUp, buffer.data(),
                                                     buffer.size());
  }

  struct Link {
    std::vector<char> out;
    std::vector<char> in[2];  // a round's rows arrive in in[slot], the next round's in the other
    int slot = 1;
    std::unique_ptr<Message> arriving;
    std::int64_t rows_arriving = 0;
    std::unique_ptr<Message> sent;
    std::string what_sent;  // "edge rows to rank 2", for a wait that lasts
    std::int64_t rows_to_send = 0;
  };

  static std::size_t index(Side side) { return side == Side::Top ? 0 : 1; }
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
             [this](std::vector<double>& row_sums, double& max_abs) {
               links_.processes->combine_rows(row_sums, links_.ranks, max_abs, local_.endpoint(0).abort_flag(),
                                              links_.silence_limit_s);
             }) {
  for (std::size_t k = 0; k < halos_.size(); ++k) ends_.push_back(std::make_unique<End>(*this, k));
}

ProcessTransport::~ProcessTransport() = default;

Endpoint& ProcessTransport::endpoint(std::size_t k) { return *ends_[k]; }

}  // namespace hetstencil
