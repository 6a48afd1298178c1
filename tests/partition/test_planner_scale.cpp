// Planning at scale: many devices, and iteration counts up to the largest.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <string>

#include "hetstencil/error.hpp"
#include "partition/planner.hpp"
#include "tests/partition/planned.hpp"

namespace hetstencil {
namespace {

constexpr std::int64_t kNx = 2048;
const std::string kKey = rate_key(Precision::Double, kNx);

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Two CPU sockets and `gpus` equal GPUs, with curves shaped like an H200
// node's at nx 2048: a CPU socket ~14x slower a row than a GPU.
Profile node(int gpus) {
  Profile p;
  for (int k = 0; k < 2; ++k) {
    DeviceProfile& cpu = p.devices["cpu" + std::to_string(k)];
    cpu.kind = "cpu";
    cpu.rates[kKey] = RateCurve({{64, 1.05e-4}, {1024, 1.7e-3}, {16384, 2.7e-2}});
    cpu.checks[kKey] = RateCurve({{64, 7.5e-5}, {16384, 2e-2}});
    cpu.step[kKey] = 5e-6;
  }
  for (int k = 0; k < gpus; ++k) {
    DeviceProfile& gpu = p.devices["gpu" + std::to_string(k)];
    gpu.kind = "gpu";
    gpu.rates[kKey] = RateCurve({{4, 9e-6}, {64, 1.0e-5}, {1024, 1.9e-5}, {16384, 1.4e-4}});
    gpu.checks[kKey] = RateCurve({{4, 2e-6}, {16384, 1e-5}});
    gpu.step[kKey] = 1.5e-5;
    gpu.setup_in = {1e-5, 16.6e9};
    gpu.setup_out = {1.4e-5, 18.5e9};
  }
  std::vector<std::string> names;
  for (const auto& [name, d] : p.devices) names.push_back(name);
  for (const auto& a : names) {
    for (const auto& b : names) {
      if (a != b) p.links[link_key(a, b)] = {8e-6, a[0] == 'g' && b[0] == 'g' ? 150e9 : 20e9};
    }
  }
  return p;
}

std::vector<Candidate> candidates(const Profile& p) {
  std::vector<Candidate> c;
  for (const auto& [name, d] : p.devices) c.push_back({name, kind_of(d), 0});
  return c;
}

TEST(PlannerScale, ResidualChecksAreCountedAsARunMakesThem) {
  for (std::int64_t iterations : {0, 1, 5, 99, 100, 101, 1000}) {
    for (std::int64_t every : {1, 3, 100, 5000}) {
      for (double tolerance : {0.0, 1e-6}) {
        StopRule stop;
        stop.max_iterations = iterations;
        stop.tolerance = tolerance;
        stop.check_every = every;
        std::int64_t counted = 0;
        for (std::int64_t t = 0; t <= iterations; ++t) counted += stop.checks_at(t) ? 1 : 0;
        EXPECT_EQ(residual_checks(stop, iterations), counted) << iterations << " / " << every << " / " << tolerance;
      }
    }
  }
  StopRule most;
  most.max_iterations = std::numeric_limits<std::int64_t>::max();
  most.tolerance = 1e-9;
  most.check_every = 1;
  EXPECT_EQ(residual_checks(most, most.max_iterations), std::numeric_limits<std::int64_t>::max()) << "saturates";
}

// The cost of planning and predicting does not grow with the iterations.
TEST(PlannerScale, TheLargestIterationCountPlansAtOnce) {
  const Profile p = node(2);
  StopRule stop;
  stop.max_iterations = std::numeric_limits<std::int64_t>::max();
  stop.tolerance = 1e-9;
  stop.check_every = 10;
  const auto start = std::chrono::steady_clock::now();
  const std::vector<Candidate> c = candidates(p);
  const Plan plan = plan_split(p, c, Precision::Double, kNx, 2048, stop);
  const Prediction again = predict(p, testing_support::planned_of(plan, c), Precision::Double, kNx, stop);
  // Work per iteration would take centuries here; any closed form, seconds even under a sanitizer.
  EXPECT_LT(seconds_since(start), 30.0);
  EXPECT_TRUE(std::isfinite(plan.prediction->total_s));
  EXPECT_GT(plan.prediction->total_s, 1e12);
  EXPECT_EQ(again.iterations, stop.max_iterations);
  EXPECT_EQ(again.checks, stop.max_iterations / 10 + 2) << "iterate 0, every tenth, and the last";
}

// 8, 16 and 64 GPUs beside two slow CPU sockets: every GPU takes an equal
// share (on a small grid too, where the balance of iterations alone would
// starve the middle ones), the plan covers the grid, and the search stays fast.
TEST(PlannerScale, ManyGpusShareTheGridEqually) {
  for (int gpus : {8, 16, 64}) {
    const Profile p = node(gpus);
    StopRule stop;
    stop.max_iterations = 100;
    for (std::int64_t ny : {std::int64_t(2048), std::int64_t(1) << 20}) {
      const auto start = std::chrono::steady_clock::now();
      const std::vector<Candidate> c = candidates(p);
      const Plan plan = plan_split(p, c, Precision::Double, kNx, ny, stop);
      const double took = seconds_since(start);
      std::int64_t covered = 0, lo = ny, hi = 0;
      int used_gpus = 0;
      for (const auto& d : testing_support::planned_of(plan, c)) {
        EXPECT_GT(d.rows, 0) << d.name;
        covered += d.rows;
        if (d.kind == DeviceKind::Gpu) {
          ++used_gpus;
          lo = std::min(lo, d.rows);
          hi = std::max(hi, d.rows);
        }
      }
      EXPECT_EQ(covered, ny) << gpus << " GPUs";
      EXPECT_EQ(used_gpus, gpus) << "ny " << ny;
      EXPECT_LE(hi - lo, 1) << gpus << " GPUs, ny " << ny;
      EXPECT_EQ(plan.parts.size() + plan.left_out.size(), static_cast<std::size_t>(gpus + 2));
      EXPECT_TRUE(std::isfinite(plan.prediction->total_s));
      // A search over device orders takes hours at 64 devices; this one, seconds even under a sanitizer.
      EXPECT_LT(took, 30.0) << gpus << " GPUs, ny " << ny;
      std::printf("%d GPUs + 2 CPU sockets, %lld rows: planned in %.1f ms, %zu devices used\n", gpus,
                  static_cast<long long>(ny), took * 1e3, plan.parts.size());
    }
  }
}

// A device given no rows takes no part: it neither slows the prediction nor
// makes it infinite; negative rows are refused.
TEST(PlannerScale, ADeviceWithoutRowsIsLeftOutOfThePrediction) {
  const Profile p = node(1);
  StopRule stop;
  stop.max_iterations = 10;
  const Prediction alone = predict(p, {{"cpu0", DeviceKind::Cpu, 100}}, Precision::Double, kNx, stop);
  const Prediction with_idle =
      predict(p, {{"cpu0", DeviceKind::Cpu, 100}, {"cpu1", DeviceKind::Cpu, 0}}, Precision::Double, kNx, stop);
  ASSERT_TRUE(std::isfinite(with_idle.iteration_s));
  EXPECT_DOUBLE_EQ(with_idle.total_s, alone.total_s);
  ASSERT_EQ(with_idle.devices.size(), 1u);
  EXPECT_EQ(with_idle.devices[0].name, "cpu0");
  try {
    predict(p, {{"cpu0", DeviceKind::Cpu, 105}, {"cpu1", DeviceKind::Cpu, -5}}, Precision::Double, kNx, stop);
    FAIL() << "negative rows were priced";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("cpu1 is given -5 rows"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace hetstencil
