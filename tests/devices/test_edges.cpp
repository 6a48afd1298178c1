// The edges of the device layer: slabs no deeper than the halo, iteration counts
// around the depth, and worker threads the system will not give.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <grp.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "devices/cpu/cpu_device.hpp"
#include "devices/cpu/worker_team.hpp"
#include "devices/device_map.hpp"
#include "devices/memory.hpp"
#include "devices/sync.hpp"
#include "hetstencil/error.hpp"
#include "hetstencil/reference.hpp"
#include "hetstencil/runtime.hpp"
#include "tests/test_support.hpp"

namespace hetstencil {
namespace {

using testing_support::expect_same_bits;

// Blocked with depth K on 1..3 CPU devices of 1..K+1 rows each, for 1..2K+1
// iterations (rounds cut short at the end, and at checks with a tolerance):
// every result has the reference's bits; a plan with a device of fewer rows
// than K beside others is refused.
TEST(BlockedEdges, SlabsAroundTheDepthMatchTheReference) {
  for (int devices = 1; devices <= 3; ++devices) {
    Runtime runtime(testing_support::cpu_devices(devices, 2));
    for (int depth : {1, 2, 3, 4, 8}) {
      for (std::int64_t rows = 1; rows <= depth + 1; ++rows) {
        for (std::int64_t iterations = 1; iterations <= 2 * depth + 1; ++iterations) {
          for (bool tolerance : {false, true}) {
            Problem p = testing_support::exactness_problem(5, devices * rows,
                                                           iterations % 2 ? Precision::Double : Precision::Float,
                                                           tolerance);
            p.stop.max_iterations = iterations;
            if (tolerance) p.stop.check_every = 1 + iterations % 3;
            Plan plan({}, {Variant::Blocked, depth});
            for (int k = 0; k < devices; ++k) {
              plan.parts.push_back({static_cast<std::size_t>(k), 1 + k * rows, rows});
            }
            SCOPED_TRACE("K " + std::to_string(depth) + ", " + std::to_string(devices) + " devices of " +
                         std::to_string(rows) + " rows, " + std::to_string(iterations) + " iterations" +
                         (tolerance ? ", checks every " + std::to_string(p.stop.check_every) : ""));
            if (devices > 1 && rows < depth) {
              EXPECT_THROW(runtime.solve(p, plan), InvalidArgument);
              continue;
            }
            expect_same_bits(runtime.solve(p, plan), solve_reference(p));
          }
        }
      }
    }
  }
}

MemoryFigure node(std::uint64_t total, std::uint64_t free, bool grows = false) {
  MemoryFigure m;
  m.where = "NUMA node 3";
  m.total = m.reported = total;
  m.free = free;
  m.reserved = 100;
  m.grows = grows;
  return m;
}

std::string refusal(const std::vector<MemoryDemand>& demands) {
  try {
    check_memory(demands);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

// Refused only beyond the total less the runtime's reserve, the users' demands
// on one memory added up; beyond what is free only a warning; nothing refused
// where memory is plugged in as it is used.
TEST(MemoryCheck, RefusesOnlyWhatCannotFitInTheTotal) {
  const std::string refused = refusal({{"cpu0", 901, node(1000, 10)}});
  EXPECT_NE(refused.find("cpu0 needs 901 bytes of NUMA node 3, which has 1000 bytes in all"), std::string::npos)
      << refused;
  EXPECT_EQ(refusal({{"cpu0", 900, node(1000, 10)}}), "");
  const std::string shared = refusal({{"cpu0", 500, node(1000, 1000)}, {"cpu1", 401, node(1000, 1000)}});
  EXPECT_NE(shared.find("cpu0 and cpu1 need 901 bytes of NUMA node 3"), std::string::npos) << shared;
  EXPECT_EQ(refusal({{"cpu0", 500, node(1000, 1000)}, {"gpu0", 800, MemoryFigure{"gpu0's", 1000, 1000, 1000}}}), "");
  EXPECT_EQ(refusal({{"cpu0", std::uint64_t(1) << 40, node(1000, 10, true)}}), "");
  MemoryFigure ballooned = node(1000, 10);
  ballooned.reported = 300;
  EXPECT_EQ(refusal({{"cpu0", 800, ballooned}}), "") << "a balloon gives its memory back";
}

TEST(MemoryCheck, GridSizesHaveBoundsAndDoNotOverflow) {
  EXPECT_EQ(grid_bytes(1, 1, Precision::Float), 9u * 4u);
  EXPECT_EQ(grid_bytes(kMaxGridSide, 1, Precision::Double), std::uint64_t(kMaxGridSide + 2) * 3u * 8u);
  for (const auto& [nx, ny] : {std::pair<std::int64_t, std::int64_t>{0, 5}, {5, -1}, {kMaxGridSide + 1, 1},
                               {1, std::numeric_limits<std::int64_t>::max()}, {kMaxGridSide, kMaxGridSide}}) {
    EXPECT_THROW(grid_bytes(nx, ny, Precision::Double), InvalidArgument) << nx << " x " << ny;
  }
  try {
    grid_bytes(1 << 22, 1 << 22, Precision::Float);
    ADD_FAILURE() << "a 64 TiB grid passed";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("a grid may take 70368744177664 bytes (64.0 TiB) at most"),
              std::string::npos)
        << e.what();
  }
}

// A device whose slab cannot fit its node is refused before any allocation.
TEST(MemoryCheck, ASolveTooLargeForItsNodeIsRefused) {
  Runtime runtime(testing_support::cpu_devices(2, 1));
  Problem p;
  p.nx = 1 << 20;
  p.ny = 1 << 20;
  p.stop.max_iterations = 1;
  const MemoryFigure m = numa_node_memory(runtime.devices().front().numa_node);
  if (m.grows) GTEST_SKIP() << "memory is plugged into this machine as it is used: no total to refuse by";
  try {
    runtime.solve(p);
    ADD_FAILURE() << "an 8 TiB grid ran";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("in all"), std::string::npos) << e.what();
  }
}

// The job of an attachment may end with it (bench cpu's is a local): what the
// device says of its slab after detach() reads none of it (such a read is a
// use after scope, which ASan reports).
TEST(DetachedDevice, ReadsNothingOfItsJobAfterDetach) {
  const Topology topology = load_topology();
  const DeviceSpec spec = map_devices(topology, DeviceMapOptions{1, 2, "", false, {}}).front();
  CpuDevice device(spec.info, spec.worker_cpus, 1, 50);
  auto grid = std::make_unique<Grid<float>>(6, 5);
  auto job = std::make_unique<StencilJob>();
  job->precision = Precision::Float;
  job->nx = 5;
  job->ny = 6;
  job->initial = job->result = grid->data();
  device.attach(*job, RowRange{1, 6});
  const bool streaming = device.streaming_stores();
  device.detach();
  job.reset();
  EXPECT_EQ(device.streaming_stores(), streaming);
}

// In a child process, as an unprivileged user (root is not bound by
// RLIMIT_NPROC) allowed `limit` processes: `body` returns 0 when it did what it
// should. A hang ends in SIGALRM, which the parent reports.
int in_child_with_process_limit(rlim_t limit, const std::function<int()>& body) {
  const pid_t pid = fork();
  if (pid == 0) {
    alarm(30);
    if (getuid() == 0 && (setgroups(0, nullptr) != 0 || setresgid(65534, 65534, 65534) != 0 ||
                          setresuid(65534, 65534, 65534) != 0)) {
      _exit(90);
    }
    const rlimit l{limit, limit};
    if (setrlimit(RLIMIT_NPROC, &l) != 0) _exit(91);
    _exit(body());
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// 0 when `make` throws a SystemError with `who` and the project's words, 1
// when it succeeds (a limit high enough), 2 on any other outcome.
int expect_thread_refusal(const std::function<void()>& make, const std::string& who) {
  try {
    make();
    return 1;
  } catch (const SystemError& e) {
    const std::string m = e.what();
    return m.find(who) != std::string::npos && m.find("cannot start a thread") != std::string::npos &&
                   m.find("pthread_create error") != std::string::npos
               ? 0
               : 2;
  } catch (...) {
    return 3;
  }
}

// A worker team or a solve's threads that the system will not all give: an
// error naming who and why, the threads already started stopped and joined,
// at every point of the start-up.
TEST(ThreadLimits, ATeamThatCannotStartFailsAndStopsTheWorkersStarted) {
  for (rlim_t limit = 1; limit <= 6; ++limit) {
    const int rc = in_child_with_process_limit(limit, [] {
      return expect_thread_refusal([] { WorkerTeam team("cpu9", std::vector<std::vector<int>>(8), 50); },
                                   "cpu9 worker ");
    });
    EXPECT_EQ(rc, 0) << "limit " << limit << ": 1 ran, 2 or 3 another error, >= 128 a signal (SIGALRM: a hang)";
  }
}

TEST(ThreadLimits, HostThreadsThatCannotStartStopTheOnesStarted) {
  for (rlim_t limit = 1; limit <= 6; ++limit) {
    const int rc = in_child_with_process_limit(limit, [] {
      return expect_thread_refusal(
          [] {
            // Each task waits for all: the ones started hang unless told to stop.
            std::atomic<bool> abort{false};
            run_on_threads(
                8,
                [&](std::size_t) {
                  Counter never;
                  never.wait_at_least(1, abort);
                },
                [&] { abort.store(true); }, [](std::size_t k) { return "gpu" + std::to_string(k) + "'s host thread"; });
          },
          "'s host thread");
    });
    EXPECT_EQ(rc, 0) << "limit " << limit << ": 1 ran, 2 or 3 another error, >= 128 a signal (SIGALRM: a hang)";
  }
}

TEST(ThreadLimits, ARuntimeThatCannotStartItsWorkersFails) {
  if (const std::string why = testing_support::why_limits_cannot_be_tested(); !why.empty()) GTEST_SKIP() << why;
  const int rc = in_child_with_process_limit(1, [] {
    return expect_thread_refusal([] { Runtime runtime(testing_support::cpu_devices(2, 2)); }, "cpu0 worker 0 of 2");
  });
  EXPECT_EQ(rc, 0);
}

}  // namespace
}  // namespace hetstencil
