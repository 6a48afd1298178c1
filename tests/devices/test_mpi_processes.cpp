// The processes of a solve over MPI (mpi_processes.cpp), run by ctest as
// `mpiexec -np 3 test_mpi_processes`: gathers and broadcasts, a barrier, the
// residual's sums the same on every process, the solution's rows on rank 0,
// messages between neighbours, and one process's failure thrown on every
// process (agree); and a Runtime on the communicator, as an application makes
// one, solving with the reference's bits. Skipped in a build without MPI or without a
// launcher.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "devices/transport/processes.hpp"
#include "hetstencil/error.hpp"
#include "hetstencil/processes.hpp"
#include "hetstencil/reference.hpp"
#include "hetstencil/runtime.hpp"
#include "runtime/processes.hpp"

namespace hetstencil {
namespace {

std::unique_ptr<MpiSession> session;

class MpiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!has_mpi()) GTEST_SKIP() << "this build has no MPI (HETSTENCIL_MPI=OFF)";
    if (!session) GTEST_SKIP() << "not started by an MPI launcher (ctest runs it under mpiexec -np 3)";
    processes_ = join_processes(session->world());
  }
  std::unique_ptr<Processes> processes_;
};

// Rows 1..10 over three processes, as a plan gives them.
const std::vector<RowRange> kRanks{{1, 3}, {4, 4}, {8, 3}};

double value_of_row(std::int64_t row) { return 1.0 / static_cast<double>(row * row + 7); }

TEST_F(MpiTest, GathersAndBroadcastsInRankOrder) {
  const int rank = processes_->rank();
  const std::vector<std::string> all = processes_->all_gather(std::string(static_cast<std::size_t>(rank) + 1, 'a' + rank));
  ASSERT_EQ(all.size(), static_cast<std::size_t>(processes_->size()));
  for (std::size_t r = 0; r < all.size(); ++r) EXPECT_EQ(all[r], std::string(r + 1, static_cast<char>('a' + r)));
  EXPECT_EQ(processes_->broadcast(rank == 0 ? "rank 0's plan" : "ignored"), "rank 0's plan");
}

TEST_F(MpiTest, EveryProcessGetsEveryProcesssSumsInRankOrderAndTheLargest) {
  ASSERT_EQ(processes_->size(), 3) << "run with -np 3";
  const std::vector<int> counts{2, 0, 3};  // a process may send none
  const int rank = processes_->rank();
  std::vector<double> mine;
  for (int i = 0; i < counts[static_cast<std::size_t>(rank)]; ++i) mine.push_back(value_of_row(10 * rank + i));
  double max_abs = 1.0 + rank * 0.5;
  const std::atomic<bool> abort{false};
  const std::vector<double> all = processes_->gather_sums(mine, counts, max_abs, abort, kSilenceLimitS);
  std::vector<double> expected;
  for (int r = 0; r < 3; ++r) {
    for (int i = 0; i < counts[static_cast<std::size_t>(r)]; ++i) expected.push_back(value_of_row(10 * r + i));
  }
  ASSERT_EQ(all.size(), expected.size());
  EXPECT_EQ(std::memcmp(all.data(), expected.data(), all.size() * sizeof(double)), 0);
  EXPECT_EQ(max_abs, 2.0);
}

TEST_F(MpiTest, ABarrierWaitsForTheLastProcess) {
  const std::atomic<bool> abort{false};
  processes_->barrier(abort, kSilenceLimitS);
  const auto begin = std::chrono::steady_clock::now();
  if (processes_->rank() == 1) std::this_thread::sleep_for(std::chrono::milliseconds(300));
  processes_->barrier(abort, kSilenceLimitS);
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  EXPECT_GE(waited, 0.25) << "rank " << processes_->rank() << " left the barrier before rank 1 came";
}

TEST_F(MpiTest, Rank0ReceivesEveryProcesssRows) {
  ASSERT_EQ(processes_->size(), 3) << "run with -np 3";
  constexpr std::size_t kRow = 4;  // values a row
  std::vector<double> grid(12 * kRow, -1.0);
  const RowRange mine = kRanks[static_cast<std::size_t>(processes_->rank())];
  for (std::int64_t row = mine.first; row < mine.end(); ++row) {
    for (std::size_t c = 0; c < kRow; ++c) grid[static_cast<std::size_t>(row) * kRow + c] = value_of_row(row) + c;
  }
  processes_->gather_rows(grid.data(), kRow * sizeof(double), kRanks);
  if (processes_->rank() != 0) return;
  for (std::int64_t row = 0; row < 12; ++row) {
    for (std::size_t c = 0; c < kRow; ++c) {
      const double expected = row == 0 || row == 11 ? -1.0 : value_of_row(row) + c;
      EXPECT_EQ(grid[static_cast<std::size_t>(row) * kRow + c], expected) << "row " << row;
    }
  }
}

TEST_F(MpiTest, NeighboursExchangeMessagesInOrder) {
  const int rank = processes_->rank();
  const int size = processes_->size();
  const int next = (rank + 1) % size, previous = (rank + size - 1) % size;
  std::atomic<bool> abort{false};
  for (int round = 0; round < 5; ++round) {
    const double sent = rank * 100.0 + round;
    double got = -1.0;
    auto out = processes_->send(next, 1, &sent, sizeof sent);
    auto in = processes_->receive(previous, 1, &got, sizeof got);
    wait_for(*in, abort, "a message from the previous rank");
    wait_for(*out, abort, "a message to the next rank");
    EXPECT_EQ(got, previous * 100.0 + round);
  }
}

// Persistent requests: the same buffers every round, each start carrying
// what the buffer holds then; one receive left started at the end is cancelled.
TEST_F(MpiTest, RepeatedMessagesCarryEachRoundsBufferInOrder) {
  const int rank = processes_->rank();
  const int size = processes_->size();
  const int next = (rank + 1) % size, previous = (rank + size - 1) % size;
  std::atomic<bool> abort{false};
  double sent = -1.0, got = -1.0;
  auto out = processes_->repeated_send(next, 2, &sent, sizeof sent);
  auto in = processes_->repeated_receive(previous, 2, &got, sizeof got);
  EXPECT_TRUE(out->done());  // nothing started yet
  for (int round = 0; round < 5; ++round) {
    in->start();
    sent = rank * 100.0 + round;
    out->start();
    wait_for(*in, abort, "a repeated message from the previous rank");
    wait_for(*out, abort, "a repeated message to the next rank");
    EXPECT_EQ(got, previous * 100.0 + round);
  }
  in->start();  // never met: cancelled with its message
}

TEST_F(MpiTest, AnAbortEndsAWaitForAMessageNeverSent) {
  std::atomic<bool> abort{true};
  double got = 0.0;
  auto in = processes_->receive((processes_->rank() + 1) % processes_->size(), 99, &got, sizeof got);
  EXPECT_THROW(wait_for(*in, abort, "a message never sent"), Aborted);
}

TEST_F(MpiTest, OneProcesssFailureIsEveryProcesssNamingIt) {
  const int rank = processes_->rank();
  try {
    agree(*processes_, [&] {
      if (rank == 1) HETSTENCIL_THROW(InvalidArgument, "its slab does not fit");
    });
    ADD_FAILURE() << "rank " << rank << " went on";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()), "rank 1: its slab does not fit");
  }
  EXPECT_NO_THROW(agree(*processes_, [] {}));
}

TEST_F(MpiTest, ARuntimeOnTheCommunicatorSolvesWithTheReferencesBits) {
  RuntimeOptions o;
  o.cpu_devices = 2;
  o.devices = "cpu";  // the device counts below hold on a machine with GPUs too
  o.threads_per_device = 1;
  o.profile = "/nonexistent/profile.json";  // no model: rank 0 splits evenly, nothing is written
  o.communicator = session->world();
  Runtime runtime(o);
  EXPECT_EQ(runtime.rank(), processes_->rank());
  EXPECT_EQ(runtime.processes(), processes_->size());
  ASSERT_EQ(runtime.devices().size(), 2u * static_cast<std::size_t>(processes_->size()));
  EXPECT_EQ(runtime.devices()[2].name, processes_->size() > 1 ? "r1.cpu0" : "cpu0");
  Problem p;
  p.nx = 20;
  p.ny = 23;
  p.stop.max_iterations = 60;
  const Result r = runtime.solve(p, runtime.plan(p));
  ASSERT_EQ(r.report.devices.size(), runtime.devices().size());  // every process's, on every process
  EXPECT_EQ(r.report.iterations, 60);
  if (processes_->rank() == 0) {
    EXPECT_TRUE(same_bits(r.solution, solve_reference(p).solution));
  }
}

}  // namespace
}  // namespace hetstencil

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (hetstencil::has_mpi() && hetstencil::launched_by_mpi()) hetstencil::session = std::make_unique<hetstencil::MpiSession>();
  const int failed = RUN_ALL_TESTS();
  hetstencil::session.reset();
  return failed;
}
