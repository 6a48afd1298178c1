#include "devices/transport/shared_memory.hpp"

#include <algorithm>

namespace hetstencil {

class SharedMemoryTransport::End final : public Endpoint {
 public:
  End(SharedMemoryTransport& owner, std::size_t k) : owner_(owner), k_(k) {}

  bool has_neighbour(Side side) const override {
    return side == Side::Top ? k_ > 0 : k_ + 1 < owner_.halos_.size();
  }

  void send(Side side, std::int64_t t, std::int64_t rows) override {
    // Where the neighbour reads our memory itself, there is nothing to send.
    if (owner_.direct_[neighbour(side)][static_cast<int>(opposite(side))]) return;
    HaloRows& mine = *owner_.halos_[k_];
    const RowBlock edge = mine.edge(side, t);
    const RowBlock host = mine.host_edge(side, t);
    if (host.data != edge.data) mine.mover().to_host(host, edge, lines(rows), owner_.job_.line_bytes());
  }

  void post(std::int64_t t) override { owner_.posted_[k_]->advance_to(t); }

  Completion receive(Side side, std::int64_t t, std::int64_t rows) override {
    const std::size_t nb = neighbour(side);
    owner_.posted_[nb]->wait_at_least(t, owner_.aborted_);
    HaloRows& mine = *owner_.halos_[k_];
    const HaloRows& theirs = *owner_.halos_[nb];
    const Side facing = opposite(side);
    if (owner_.direct_[k_][static_cast<int>(side)]) {
      mine.mover().from_peer(mine.ghost(side, t), owner_.halos_[nb]->mover(), theirs.edge(facing, t), lines(rows),
                             owner_.job_.line_bytes());
    } else {
      mine.mover().from_host(mine.ghost(side, t), theirs.host_edge(facing, t), lines(rows), owner_.job_.line_bytes());
    }
    return {};
  }

  CheckOutcome check(std::int64_t t, const double* row_sums, double max_abs) override {
    return owner_.check_.join(k_, t, row_sums, max_abs, owner_.aborted_);
  }

  std::atomic<bool>& abort_flag() override { return owner_.aborted_; }

 private:
  std::size_t neighbour(Side side) const { return side == Side::Top ? k_ - 1 : k_ + 1; }
  std::int64_t lines(std::int64_t units) const { return units * owner_.job_.unit_lines(); }

  SharedMemoryTransport& owner_;
  std::size_t k_;
};

SharedMemoryTransport::SharedMemoryTransport(std::vector<HaloRows*> halos, std::vector<RowRange> rows,
                                             const StencilJob& job, double h, int spins,
                                             ResidualCheck::Combine combine)
    : halos_(std::move(halos)),
      job_(job),
      direct_(halos_.size(), {false, false}),
      check_(std::move(rows), job, h, std::move(combine)) {
  for (std::size_t k = 0; k < halos_.size(); ++k) {
    ends_.push_back(std::make_unique<End>(*this, k));
    posted_.push_back(std::make_unique<Counter>(spins));
  }
}

SharedMemoryTransport::~SharedMemoryTransport() = default;

Endpoint& SharedMemoryTransport::endpoint(std::size_t k) { return *ends_[k]; }

void SharedMemoryTransport::connect(std::size_t k) {
  for (Side side : {Side::Top, Side::Bottom}) {
    if (!ends_[k]->has_neighbour(side)) continue;
    const std::size_t nb = side == Side::Top ? k - 1 : k + 1;
    direct_[k][static_cast<int>(side)] = halos_[k]->mover().reaches(halos_[nb]->mover());
  }
}

Progress SharedMemoryTransport::progress() {
  Progress p;
  p.max_iterations = job_.stop.max_iterations;
  p.iteration = p.max_iterations;
  for (const auto& c : posted_) p.iteration = std::min(p.iteration, c->value());
  check_.fill(p);
  return p;
}

}  // namespace hetstencil
