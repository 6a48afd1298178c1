// The transport between processes (ProcessTransport) without MPI: three
// "processes" are threads of this one, their messages and collectives a fake
// of Processes. Rank 1 holds two devices (joined by the shared-memory
// transport), ranks 0 and 2 one each. Ghost rows hold the neighbour's edge
// rows of the iterate asked for, whichever process it is in; the residual
// check has the bits of one reduction over every row; an abort ends a wait
// for a process that never sends, and so does its silence after the limit.
// Devices whose memory other processes may open (a fake of CUDA IPC: host
// memory, opened by its address) take such links between processes, and
// close all they opened; where one cannot share, its link takes another path,
// or the solve is refused where the option asked for CUDA IPC.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <thread>
#include <tuple>
#include <vector>

#include "core/residual.hpp"
#include "devices/transport/halo_rows.hpp"
#include "devices/transport/link_paths.hpp"
#include "devices/transport/process_transport.hpp"
#include "devices/transport/processes.hpp"
#include "devices/sync.hpp"
#include "hetstencil/error.hpp"

namespace hetstencil {
namespace {

constexpr std::int64_t kCols = 5;  // nx = 3 and the boundary columns
constexpr int kRanks = 3;

// What device `device` (numbered over all processes) has in edge row `side`
// at iterate t, column c.
double mark(int device, Side side, std::int64_t t, std::int64_t c) {
  return device * 1e6 + static_cast<int>(side) * 1e5 + static_cast<double>(t) * 10 + static_cast<double>(c);
}

// Host memory that other "processes" open by its address: CUDA IPC's part
// of a mover, counting what is opened and closed. `shares`: whether it gives
// handles at all.
class SharingMover final : public RowMover {
 public:
  SharingMover(bool shares, int gpu) : shares_(shares), bus_id_("0000:" + std::to_string(16 + gpu) + ":00.0") {}
  void to_host(RowBlock to, RowBlock from, std::int64_t rows, std::size_t row_bytes) override {
    host_.to_host(to, from, rows, row_bytes);
  }
  void from_host(RowBlock to, RowBlock from, std::int64_t rows, std::size_t row_bytes) override {
    host_.from_host(to, from, rows, row_bytes);
  }
  std::optional<SharedHandle> share(const void* base) override {
    if (!shares_) return std::nullopt;
    SharedHandle handle{};
    std::memcpy(handle.data(), &base, sizeof base);
    return handle;
  }
  void* open_shared(const SharedHandle& handle) override {
    void* base = nullptr;
    std::memcpy(&base, handle.data(), sizeof base);
    ++opened;
    return base;
  }
  void close_shared(void*) override { ++closed; }
  void from_shared(RowBlock to, RowBlock from, std::int64_t rows, std::size_t row_bytes) override {
    host_.from_host(to, from, rows, row_bytes);
  }
  std::optional<GpuQueue> gpu_queue() const override { return GpuQueue{0, nullptr, bus_id_}; }
  std::atomic<int> opened{0};
  std::atomic<int> closed{0};

 private:
  bool shares_;
  std::string bus_id_;
  HostRowMover host_;
};

// How a fake device's memory may be reached from other processes.
enum class Reach { Host, Shared, Unshared };

// One row a side in host memory: edges and ghosts, a pair per iterate parity.
// Reach::Shared and Unshared stand for GPUs (GPU `device` of the node): their
// memory other processes open, or cannot.
class FakeRows final : public HaloRows {
 public:
  explicit FakeRows(Reach reach = Reach::Host, int device = 0)
      : reach_(reach), sharing_(reach == Reach::Shared, device) {
    for (auto& b : buffers_) b.assign(4 * kCols, -1.0);
  }
  RowBlock edge(Side side, std::int64_t t) const override { return at(t, side == Side::Top ? 1 : 2); }
  RowBlock host_edge(Side side, std::int64_t t) const override { return edge(side, t); }
  RowBlock ghost(Side side, std::int64_t t) const override { return at(t, side == Side::Top ? 0 : 3); }
  std::vector<const void*> edge_memory() const override {
    if (reach_ == Reach::Host) return {};
    return {buffers_[0].data(), buffers_[1].data()};
  }
  RowMover& mover() override {
    if (reach_ == Reach::Host) return mover_;
    return sharing_;
  }
  double* row(RowBlock b) const { return static_cast<double*>(b.data); }
  const SharingMover& sharing() const { return sharing_; }

 private:
  RowBlock at(std::int64_t t, int part) const {
    auto& b = const_cast<std::vector<double>&>(buffers_[t % 2]);
    return {b.data() + part * kCols, kCols * sizeof(double)};
  }
  Reach reach_;
  std::vector<double> buffers_[2];
  HostRowMover mover_;
  SharingMover sharing_;
};

// Messages and collectives among threads standing for processes.
class World {
 public:
  // Mailboxes by (from, to, tag), each in order of sending.
  std::mutex mutex;
  std::condition_variable changed;
  std::map<std::tuple<int, int, int>, std::vector<std::vector<char>>> mail;
  // gather_sums and all_gather: each rank's part, written in turn, and what
  // the last to arrive gathered from them. A rank that leaves a meeting first
  // may write its part of the next one before a slower rank wakes from this
  // one: the slower rank reads the gathered copy, which only the next
  // meeting's last arrival (that rank among them) replaces.
  std::vector<double> parts[kRanks];
  std::string texts[kRanks];
  std::vector<double> gathered_parts;
  std::vector<std::string> gathered_texts;
  int all_gathers = 0;  // calls, by any rank
  double max_abs = 0.0;
  double gathered_max_abs = 0.0;
  int arrived = 0;
  int generation = 0;

  // Returns, under `lock`, once every rank has arrived; the last to arrive
  // gathers the parts first.
  void meet(std::unique_lock<std::mutex>& lock) {
    const int at = generation;
    if (++arrived == kRanks) {
      gathered_parts.clear();
      for (const std::vector<double>& part : parts) gathered_parts.insert(gathered_parts.end(), part.begin(), part.end());
      gathered_texts.assign(std::begin(texts), std::end(texts));
      gathered_max_abs = max_abs;
      max_abs = 0.0;
      arrived = 0;
      ++generation;
      changed.notify_all();
    } else {
      changed.wait(lock, [&] { return generation != at; });
    }
  }
};

class Delivered final : public Message {
 public:
  bool done() override { return true; }
};

class Mailbox final : public Message {
 public:
  Mailbox(World& world, std::tuple<int, int, int> key, void* data, std::size_t bytes)
      : world_(world), key_(key), data_(data), bytes_(bytes) {}
  bool done() override {
    const std::lock_guard<std::mutex> lock(world_.mutex);
    auto& box = world_.mail[key_];
    if (box.empty()) return false;
    EXPECT_EQ(box.front().size(), bytes_);
    std::memcpy(data_, box.front().data(), bytes_);
    box.erase(box.begin());
    return true;
  }

 private:
  World& world_;
  std::tuple<int, int, int> key_;
  void* data_;
  std::size_t bytes_;
};

class FakeProcesses final : public Processes {
 public:
  FakeProcesses(World& world, int rank) : world_(world), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return kRanks; }
  int local_rank() const override { return rank_; }
  std::vector<std::string> all_gather(const std::string& mine) override {
    std::unique_lock<std::mutex> lock(world_.mutex);
    ++world_.all_gathers;
    world_.texts[rank_] = mine;
    world_.meet(lock);
    return world_.gathered_texts;
  }
  std::string broadcast(const std::string&) override { unused(); }
  void gather_rows(void*, std::size_t, const std::vector<RowRange>&) override { unused(); }
  void barrier(const std::atomic<bool>&, double) override { unused(); }

  std::vector<double> gather_sums(const std::vector<double>& mine, const std::vector<int>& counts, double& max_abs,
                                  const std::atomic<bool>&, double) override {
    std::unique_lock<std::mutex> lock(world_.mutex);
    EXPECT_EQ(mine.size(), static_cast<std::size_t>(counts[static_cast<std::size_t>(rank_)]));
    world_.parts[rank_] = mine;
    world_.max_abs = std::max(world_.max_abs, max_abs);
    world_.meet(lock);
    max_abs = world_.gathered_max_abs;
    return world_.gathered_parts;
  }

  std::unique_ptr<Message> send(int to, int tag, const void* data, std::size_t bytes) override {
    const std::lock_guard<std::mutex> lock(world_.mutex);
    const char* from = static_cast<const char*>(data);
    world_.mail[{rank_, to, tag}].emplace_back(from, from + bytes);
    return std::make_unique<Delivered>();
  }
  std::unique_ptr<Message> receive(int from, int tag, void* data, std::size_t bytes) override {
    return std::make_unique<Mailbox>(world_, std::make_tuple(from, rank_, tag), data, bytes);
  }
  [[noreturn]] void abort(const std::string& why, int) override { throw Error(why, __FILE__, __LINE__); }

 private:
  [[noreturn]] static std::vector<std::string> unused() { throw Error("not used by the transport", __FILE__, __LINE__); }
  World& world_;
  int rank_;
};

StencilJob job_of(std::int64_t ny) {
  StencilJob job;
  job.precision = Precision::Double;
  job.nx = kCols - 2;
  job.ny = ny;
  return job;
}

// Devices 0 (rank 0), 1 and 2 (rank 1), 3 (rank 2), one row each.
struct Spread {
  World world;
  std::vector<std::unique_ptr<FakeProcesses>> processes;
  std::vector<std::unique_ptr<FakeRows>> rows;
  std::vector<std::unique_ptr<ProcessTransport>> transports;  // by rank
  std::vector<std::pair<int, std::size_t>> where;             // by device: rank and index there
  StencilJob job = job_of(4);

  // `reach`: by device, how other processes reach its memory (all Host:
  // none is a GPU). With GpuTransport::Host no process asks the others which
  // of their devices are GPUs; otherwise the transports are made at once, on
  // threads of their own, since asking is collective.
  explicit Spread(double silence_limit_s = kSilenceLimitS, GpuTransport gpu_transport = GpuTransport::Host,
                  std::vector<Reach> reach = std::vector<Reach>(4, Reach::Host)) {
    const std::vector<std::vector<int>> devices_of_rank{{0}, {1, 2}, {3}};
    const std::vector<RowRange> ranks{{1, 1}, {2, 2}, {4, 1}};
    std::vector<std::vector<HaloRows*>> halos(kRanks);
    std::vector<std::vector<RowRange>> slabs(kRanks);
    for (int r = 0; r < kRanks; ++r) {
      processes.push_back(std::make_unique<FakeProcesses>(world, r));
      for (int d : devices_of_rank[static_cast<std::size_t>(r)]) {
        rows.push_back(std::make_unique<FakeRows>(reach[static_cast<std::size_t>(d)], d));
        halos[static_cast<std::size_t>(r)].push_back(rows.back().get());
        slabs[static_cast<std::size_t>(r)].push_back({d + 1, 1});
        where.emplace_back(r, halos[static_cast<std::size_t>(r)].size() - 1);
      }
    }
    transports.resize(kRanks);
    const auto make = [&](std::size_t r) {
      transports[r] = std::make_unique<ProcessTransport>(
          halos[r], slabs[r], job, 0.5, 50,
          ProcessLinks{processes[r].get(), static_cast<int>(r) - 1, r + 1 < kRanks ? static_cast<int>(r) + 1 : -1,
                       ranks, silence_limit_s, gpu_transport});
      for (std::size_t k = 0; k < halos[r].size(); ++k) transports[r]->connect(k);
    };
    if (gpu_transport == GpuTransport::Host) {
      for (std::size_t r = 0; r < kRanks; ++r) make(r);
    } else {
      run_on_threads(kRanks, make);
    }
  }
  Endpoint& endpoint(int device) {
    const auto [r, k] = where[static_cast<std::size_t>(device)];
    return transports[static_cast<std::size_t>(r)]->endpoint(k);
  }
};

// The exchange of `rounds` rounds on every device at once; the ghost rows
// that did not hold the neighbour's edge rows of their iterate.
int exchange_rounds(Spread& s, std::int64_t rounds) {
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int d = 0; d < 4; ++d) {
    threads.emplace_back([&, d] {
      Endpoint& port = s.endpoint(d);
      FakeRows& mine = *s.rows[static_cast<std::size_t>(d)];
      for (std::int64_t t = 1; t <= rounds; ++t) {
        for (Side side : {Side::Top, Side::Bottom}) {
          for (std::int64_t c = 0; c < kCols; ++c) mine.row(mine.edge(side, t))[c] = mark(d, side, t, c);
        }
        port.exchange(t, 1);
        for (Side side : {Side::Top, Side::Bottom}) {
          if (!port.has_neighbour(side)) continue;
          const int nb = side == Side::Top ? d - 1 : d + 1;
          for (std::int64_t c = 0; c < kCols; ++c) {
            if (mine.row(mine.ghost(side, t))[c] != mark(nb, opposite(side), t, c)) ++wrong;
          }
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  return wrong.load();
}

TEST(ProcessTransport, GhostRowsHoldTheNeighboursEdgeRowsAcrossProcesses) {
  Spread s;
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ(s.endpoint(d).has_neighbour(Side::Top), d > 0);
    EXPECT_EQ(s.endpoint(d).has_neighbour(Side::Bottom), d < 3);
  }
  EXPECT_EQ(exchange_rounds(s, 40), 0);
}

TEST(ProcessTransport, TheResidualCheckHasTheBitsOfOneReductionOverEveryRow) {
  Spread s;
  std::mt19937 random(21);
  std::uniform_real_distribution<double> value(0.0, 1e-3);
  std::vector<double> sums(4);
  for (double& v : sums) v = value(random);
  const std::vector<double> maxima{0.25, 2.5, 0.5, 1.0};
  std::vector<CheckOutcome> seen(4);
  std::vector<std::thread> threads;
  for (int d = 0; d < 4; ++d) {
    threads.emplace_back([&, d] {
      seen[static_cast<std::size_t>(d)] =
          s.endpoint(d).check(s.job.stop.max_iterations, &sums[static_cast<std::size_t>(d)], maxima[static_cast<std::size_t>(d)]);
    });
  }
  for (auto& t : threads) t.join();
  const Residual expected = finish_residual(sums.data(), 4, 2.5, 0.5);
  for (const CheckOutcome& o : seen) {
    EXPECT_EQ(std::memcmp(&o.residual.l2, &expected.l2, sizeof(double)), 0);
    EXPECT_EQ(o.residual.max, expected.max);
    EXPECT_TRUE(o.stop);  // at the last iteration, on every process
  }
}

TEST(ProcessTransport, AnAbortEndsAWaitForAProcessThatNeverSends) {
  Spread s;
  std::thread set_abort([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    s.transports[0]->abort();
  });
  Endpoint& port = s.endpoint(0);
  port.send(Side::Bottom, 1, 1);
  port.post(1);
  Completion fill = port.receive(Side::Bottom, 1, 1);
  EXPECT_THROW(fill.wait(), Aborted);
  set_abort.join();
}

TEST(ProcessTransport, AProcessSilentBeyondTheLimitEndsTheWaitNamingIt) {
  Spread s(0.2);
  Endpoint& port = s.endpoint(0);
  port.send(Side::Bottom, 1, 1);
  port.post(1);
  Completion fill = port.receive(Side::Bottom, 1, 1);
  try {
    fill.wait();
    ADD_FAILURE() << "the wait ended without rows";
  } catch (const Aborted&) {
    ADD_FAILURE() << "the wait was aborted, not timed out";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ghost rows from rank 1"), std::string::npos) << e.what();
  }
}

TEST(ProcessTransport, TheOutcomeNamesThePathOfEveryLinkBetweenProcesses) {
  Spread s;
  for (const auto& transport : s.transports) {
    EXPECT_EQ(transport->outcome().links, "r0-r1 host staging, r1-r2 host staging");
  }
}

TEST(ProcessTransport, WithoutGpuLinksAutoStagesEveryLinkWithoutAskingTheOthers) {
  if (gpu_links_built()) {
    GTEST_SKIP() << "this build may move GPU memory between processes: auto asks them which devices are GPUs";
  }
  Spread s(kSilenceLimitS, GpuTransport::Auto);
  EXPECT_EQ(s.world.all_gathers, 0);
  for (const auto& transport : s.transports) {
    EXPECT_EQ(transport->paths(), std::vector<LinkPath>(2, LinkPath::HostStaging));
  }
}

TEST(ProcessTransport, GpusOfOneNodeCopyFromTheMemoryTheyOpenedAndCloseAllOfIt) {
  if (!gpu_links_built()) GTEST_SKIP() << "this build moves no GPU memory between processes";
  Spread s(kSilenceLimitS, GpuTransport::Auto, std::vector<Reach>(4, Reach::Shared));
  for (const auto& transport : s.transports) {
    EXPECT_EQ(transport->outcome().links, "r0-r1 cuda ipc, r1-r2 cuda ipc");
  }
  EXPECT_EQ(exchange_rounds(s, 40), 0);
  run_on_threads(kRanks, [&](std::size_t r) { s.transports[r]->finish(); });
  int opened = 0;
  for (const auto& rows : s.rows) {
    opened += rows->sharing().opened;
    EXPECT_EQ(rows->sharing().opened, rows->sharing().closed);
  }
  EXPECT_EQ(opened, 8);  // each of the four ends opened the two buffers of its neighbour
}

TEST(ProcessTransport, ALinkWhoseMemoryCannotBeSharedTakesAnotherPath) {
  if (!gpu_links_built() || nccl_built() || cuda_aware_mpi_built()) {
    GTEST_SKIP() << "here the other path would move GPU memory, which these fakes do not have";
  }
  Spread s(kSilenceLimitS, GpuTransport::Auto, {Reach::Shared, Reach::Shared, Reach::Shared, Reach::Unshared});
  for (const auto& transport : s.transports) {
    EXPECT_EQ(transport->outcome().links, "r0-r1 cuda ipc, r1-r2 host staging");
  }
  EXPECT_EQ(exchange_rounds(s, 10), 0);
}

TEST(ProcessTransport, CudaIpcAskedForIsRefusedOnEveryProcessWhereALinkCannotOpen) {
  if (!gpu_links_built()) GTEST_SKIP() << "this build moves no GPU memory between processes";
  try {
    Spread s(kSilenceLimitS, GpuTransport::Ipc, {Reach::Shared, Reach::Shared, Reach::Shared, Reach::Unshared});
    ADD_FAILURE() << "the transports were made";
  } catch (const InvalidArgument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("the GPU transport ipc was asked for"), std::string::npos) << what;
    EXPECT_NE(what.find("cannot be shared with rank 1"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace hetstencil
