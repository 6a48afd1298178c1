// The shared-memory transport between endpoints on threads of their own: ghost
// rows hold the neighbour's edge rows of the iterate asked for, host copies are
// made only for neighbours that cannot reach a device's memory, an abort ends
// every wait, and the residual check has the same bits for any split.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/residual.hpp"
#include "devices/sync.hpp"
#include "devices/transport/halo_rows.hpp"
#include "devices/transport/shared_memory.hpp"
#include "hetstencil/error.hpp"

namespace hetstencil {
namespace {

constexpr std::int64_t kCols = 5;  // values a row: nx = 3 and the two boundary columns

StencilJob job_of(std::int64_t ny, int depth, StopRule stop = {}) {
  StencilJob job;
  job.precision = Precision::Double;
  job.nx = kCols - 2;
  job.ny = ny;
  job.stop = stop;
  if (depth > 1) job.variant = {Variant::Blocked, depth};
  return job;
}

// What device k's edge row i on `side` holds at iterate t: every value tells
// where it came from.
double mark(std::size_t k, Side side, std::int64_t t, std::int64_t i, std::int64_t col) {
  return static_cast<double>(k) * 1e6 + static_cast<int>(side) * 1e5 + static_cast<double>(t) * 100 +
         static_cast<double>(i) * 10 + static_cast<double>(col);
}

// A mover that counts its copies; movers of one `family` reach each other (as
// GPUs with peer access do), others go through host memory.
class CountingMover final : public RowMover {
 public:
  explicit CountingMover(int family) : family_(family) {}
  void to_host(RowBlock to, RowBlock from, std::int64_t rows, std::size_t row_bytes) override {
    ++to_host_;
    host_.to_host(to, from, rows, row_bytes);
  }
  void from_host(RowBlock to, RowBlock from, std::int64_t rows, std::size_t row_bytes) override {
    ++from_host_;
    host_.from_host(to, from, rows, row_bytes);
  }
  bool reaches(const RowMover& other) override {
    const auto* o = dynamic_cast<const CountingMover*>(&other);
    return family_ >= 0 && o && o->family_ == family_;
  }
  void from_peer(RowBlock to, const RowMover&, RowBlock from, std::int64_t rows, std::size_t row_bytes) override {
    ++from_peer_;
    host_.from_host(to, from, rows, row_bytes);
  }
  int to_host_ = 0, from_host_ = 0, from_peer_ = 0;

 private:
  int family_;
  HostRowMover host_;
};

// A device's rows in host memory: two buffers (iterate t in buffer t % 2) of
// depth ghost rows, depth edge rows a side, and, where `staged`, host copies of
// the edges apart from them (as a GPU keeps them).
class FakeRows final : public HaloRows {
 public:
  FakeRows(int depth, bool staged, int family)
      : depth_(depth), staged_(staged), mover_(family) {
    for (auto& b : buffers_) b.assign(static_cast<std::size_t>(4 * depth * kCols), -1.0);
    for (auto& h : host_) h.assign(static_cast<std::size_t>(2 * depth * kCols), -2.0);
  }
  // Rows of a buffer: ghosts above, edges (top, bottom), ghosts below.
  RowBlock edge(Side side, std::int64_t t) const override { return at(t, side == Side::Top ? 1 : 2); }
  RowBlock host_edge(Side side, std::int64_t t) const override {
    if (!staged_) return edge(side, t);
    auto& h = const_cast<std::vector<double>&>(host_[t % 2]);
    return {h.data() + static_cast<int>(side) * depth_ * kCols, kCols * sizeof(double)};
  }
  RowBlock ghost(Side side, std::int64_t t) const override { return at(t, side == Side::Top ? 0 : 3); }
  RowMover& mover() override { return mover_; }

  double* row(RowBlock b, std::int64_t i) const { return static_cast<double*>(b.data) + i * kCols; }
  CountingMover& counting() { return mover_; }

 private:
  RowBlock at(std::int64_t t, int part) const {
    auto& b = const_cast<std::vector<double>&>(buffers_[t % 2]);
    return {b.data() + part * depth_ * kCols, kCols * sizeof(double)};
  }
  int depth_;
  bool staged_;
  std::vector<double> buffers_[2];
  std::vector<double> host_[2];
  CountingMover mover_;
};

struct Solve {
  std::unique_ptr<StencilJob> job;  // the transport keeps a reference to it
  std::vector<std::unique_ptr<FakeRows>> rows;
  std::unique_ptr<SharedMemoryTransport> transport;
};

// Devices of `depth`-row halos, each kind by `staged` and `family`; slabs of
// one row a device (the check needs them; the exchange does not).
Solve solve_of(const StencilJob& given, const std::vector<bool>& staged, const std::vector<int>& family) {
  Solve s;
  s.job = std::make_unique<StencilJob>(given);
  const StencilJob& job = *s.job;
  std::vector<HaloRows*> halos;
  std::vector<RowRange> slabs;
  for (std::size_t k = 0; k < staged.size(); ++k) {
    s.rows.push_back(std::make_unique<FakeRows>(job.halo_depth(), staged[k], family[k]));
    halos.push_back(s.rows.back().get());
    slabs.push_back({static_cast<std::int64_t>(k) + 1, 1});
  }
  s.transport = std::make_unique<SharedMemoryTransport>(halos, slabs, job, 1.0, 50);
  for (std::size_t k = 0; k < staged.size(); ++k) s.transport->connect(k);
  return s;
}

// Each device, for `rounds` rounds: fills its edge rows with marks, sends,
// posts, receives, and checks that its ghost rows hold the neighbours' marks of
// that iterate. Returns the mismatches.
int exchange_rounds(Solve& s, int depth, int rounds) {
  std::atomic<int> wrong{0};
  const std::size_t n = s.rows.size();
  run_on_threads(n, [&](std::size_t k) {
    FakeRows& me = *s.rows[k];
    Endpoint& port = s.transport->endpoint(k);
    for (std::int64_t t = 1; t <= rounds; ++t) {
      for (Side side : {Side::Top, Side::Bottom}) {
        for (std::int64_t i = 0; i < depth; ++i) {
          for (std::int64_t c = 0; c < kCols; ++c) me.row(me.edge(side, t), i)[c] = mark(k, side, t, i, c);
        }
      }
      port.exchange(t, depth);
      for (Side side : {Side::Top, Side::Bottom}) {
        if (!port.has_neighbour(side)) continue;
        const std::size_t nb = side == Side::Top ? k - 1 : k + 1;
        for (std::int64_t i = 0; i < depth; ++i) {
          for (std::int64_t c = 0; c < kCols; ++c) {
            if (me.row(me.ghost(side, t), i)[c] != mark(nb, opposite(side), t, i, c)) ++wrong;
          }
        }
      }
    }
  }, [&] { s.transport->abort(); });
  return wrong.load();
}

TEST(SharedMemoryTransport, GhostRowsHoldTheNeighboursEdgesOfEachIterate) {
  for (int depth : {1, 3}) {
    for (std::size_t devices : {2, 3}) {
      SCOPED_TRACE("depth " + std::to_string(depth) + ", " + std::to_string(devices) + " devices");
      Solve s = solve_of(job_of(static_cast<std::int64_t>(devices), depth), std::vector<bool>(devices, false),
                         std::vector<int>(devices, -1));
      EXPECT_EQ(exchange_rounds(s, depth, 200), 0);
      EXPECT_FALSE(s.transport->endpoint(0).has_neighbour(Side::Top));
      EXPECT_TRUE(s.transport->endpoint(0).has_neighbour(Side::Bottom));
      EXPECT_FALSE(s.transport->endpoint(devices - 1).has_neighbour(Side::Bottom));
    }
  }
}

// Device 0 and 1 reach each other (GPU peers); device 2 does not reach 1 (a
// CPU beside a GPU). Device 1 keeps its edges apart from host memory (staged).
TEST(SharedMemoryTransport, HostCopiesOnlyForNeighboursThatCannotReachTheRows) {
  const int depth = 2, rounds = 50;
  Solve s = solve_of(job_of(3, depth), {true, true, false}, {7, 7, -1});
  EXPECT_EQ(exchange_rounds(s, depth, rounds), 0);
  const CountingMover& gpu0 = s.rows[0]->counting();
  const CountingMover& gpu1 = s.rows[1]->counting();
  const CountingMover& cpu2 = s.rows[2]->counting();
  EXPECT_EQ(gpu0.to_host_, 0);       // its one neighbour reads it directly
  EXPECT_EQ(gpu0.from_peer_, rounds);
  EXPECT_EQ(gpu1.to_host_, rounds);  // for the CPU below it, not for the GPU above
  EXPECT_EQ(gpu1.from_peer_, rounds);
  EXPECT_EQ(gpu1.from_host_, rounds);
  EXPECT_EQ(cpu2.to_host_, 0);       // its rows are host memory already
  EXPECT_EQ(cpu2.from_host_, rounds);
}

TEST(SharedMemoryTransport, AnAbortEndsAReceiveAndACheckThatWait) {
  Solve s = solve_of(job_of(2, 1), {false, false}, {-1, -1});
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    s.transport->abort();
  });
  // Device 1 never posts iterate 1, nor joins the check.
  EXPECT_THROW(s.transport->endpoint(0).receive(Side::Bottom, 1, 1), Aborted);
  const double sums[1] = {1.0};
  EXPECT_THROW(s.transport->endpoint(0).check(1, sums, 1.0), Aborted);
  stopper.join();
  EXPECT_TRUE(s.transport->endpoint(1).abort_flag().load());
}

TEST(SharedMemoryTransport, ProgressIsTheLeastIteratePosted) {
  StopRule stop;
  stop.max_iterations = 9;
  Solve s = solve_of(job_of(3, 1, stop), {false, false, false}, {-1, -1, -1});
  s.transport->endpoint(0).post(4);
  s.transport->endpoint(1).post(2);
  s.transport->endpoint(2).post(5);
  const Progress p = s.transport->progress();
  EXPECT_EQ(p.iteration, 2);
  EXPECT_EQ(p.max_iterations, 9);
  EXPECT_FALSE(p.checked);
}

// Row sums of 1..ny that a sum in another order would round differently;
// every split into 1..4 devices gives the residual of one sum in row order.
TEST(SharedMemoryTransport, TheCheckHasTheSameBitsForAnySplit) {
  const std::int64_t ny = 41;
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> exponent(-20.0, 20.0);
  std::vector<double> sums(static_cast<std::size_t>(ny));
  for (double& v : sums) v = std::pow(2.0, exponent(rng)) * (1.0 + 1e-3 * exponent(rng));
  const double max_abs = 0.75;
  StopRule stop;
  stop.max_iterations = 10;
  const StencilJob job = job_of(ny, 1, stop);
  const Residual expected = finish_residual(sums.data(), ny, max_abs, 0.5);
  for (int trial = 0; trial < 40; ++trial) {
    const std::size_t devices = 1 + static_cast<std::size_t>(trial % 4);
    std::vector<std::int64_t> cuts{1, ny + 1};
    while (cuts.size() < devices + 1) {
      const std::int64_t c = std::uniform_int_distribution<std::int64_t>(2, ny)(rng);
      if (std::find(cuts.begin(), cuts.end(), c) == cuts.end()) cuts.push_back(c);
    }
    std::sort(cuts.begin(), cuts.end());
    std::vector<RowRange> slabs;
    std::vector<HaloRows*> halos;
    std::vector<std::unique_ptr<FakeRows>> rows;
    for (std::size_t k = 0; k < devices; ++k) {
      slabs.push_back({cuts[k], cuts[k + 1] - cuts[k]});
      rows.push_back(std::make_unique<FakeRows>(1, false, -1));
      halos.push_back(rows.back().get());
    }
    SharedMemoryTransport transport(halos, slabs, job, 0.5, 50);
    std::vector<CheckOutcome> seen(devices);
    run_on_threads(devices, [&](std::size_t k) {
      // Only the last device to join sees the largest |rho|.
      seen[k] = transport.endpoint(k).check(10, sums.data() + (slabs[k].first - 1), k + 1 == devices ? max_abs : 0.0);
    });
    for (const CheckOutcome& o : seen) {
      EXPECT_EQ(std::memcmp(&o.residual.l2, &expected.l2, sizeof(double)), 0) << devices << " devices";
      EXPECT_EQ(o.residual.max, expected.max);
      EXPECT_TRUE(o.stop);  // iterate 10 is the last
    }
    const ExchangeOutcome outcome = transport.outcome();
    EXPECT_EQ(outcome.final_iteration, 10);
    EXPECT_EQ(std::memcmp(&outcome.final_residual.l2, &expected.l2, sizeof(double)), 0);
    EXPECT_TRUE(transport.progress().checked);
  }
}

}  // namespace
}  // namespace hetstencil
