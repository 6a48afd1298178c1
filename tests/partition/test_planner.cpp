#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <random>

#include "hetstencil/error.hpp"
#include "partition/planner.hpp"
#include "tests/partition/planned.hpp"

namespace hetstencil {
namespace {

using testing_support::planned_of;

constexpr std::int64_t kNx = 1024;
const std::string kKey = rate_key(Precision::Double, kNx);

// A random device: a monotone curve (a GPU-like floor or a CPU-like line), a loop cost.
void add_device(Profile& p, const std::string& name, DeviceKind kind, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  DeviceProfile d;
  d.kind = kind == DeviceKind::Gpu ? "gpu" : "cpu";
  const double per_row = 1e-6 * (0.2 + 5 * u(rng));
  const double floor = kind == DeviceKind::Gpu ? 1e-5 * u(rng) : 0.0;
  std::vector<RateCurve::Point> points;
  double t = floor;
  for (std::int64_t r : {1, 4, 16, 64, 256}) {
    t = std::max(t, floor + per_row * static_cast<double>(r) * (0.8 + 0.4 * u(rng)));
    points.push_back({r, t});
  }
  d.rates[kKey] = RateCurve(points);
  d.step[kKey] = 2e-6 * u(rng);
  if (kind == DeviceKind::Gpu) {
    d.setup_in = {1e-5 * u(rng), 1e9 * (1 + 10 * u(rng))};
    d.setup_out = d.setup_in;
  }
  p.devices[name] = d;
}

Profile random_profile(const std::vector<std::pair<std::string, DeviceKind>>& devices, std::mt19937& rng) {
  Profile p;
  for (const auto& [name, kind] : devices) add_device(p, name, kind, rng);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (const auto& [a, ka] : devices) {
    for (const auto& [b, kb] : devices) {
      if (a != b) p.links[link_key(a, b)] = {2e-5 * u(rng), 1e9 * (1 + 50 * u(rng))};
    }
  }
  return p;
}

// The fastest split over every order and every split into rows >= 0 (a device
// with no rows is left out), priced as a planner does when `cautious`; in
// `fastest_with`, where given, the fastest total with each count of devices.
Prediction brute_force(const Profile& p, const std::vector<Candidate>& c, std::int64_t ny, const StopRule& stop,
                       bool cautious, std::map<std::size_t, double>* fastest_with = nullptr) {
  Prediction best;
  best.total_s = std::numeric_limits<double>::infinity();
  std::vector<std::size_t> order(c.size());
  for (std::size_t k = 0; k < c.size(); ++k) order[k] = k;
  std::vector<std::int64_t> rows(c.size(), 0);
  std::function<void(std::size_t, std::int64_t)> split = [&](std::size_t k, std::int64_t left) {
    if (k + 1 == c.size()) {
      rows[k] = left;
      std::vector<PlannedDevice> devices;
      for (std::size_t i = 0; i < c.size(); ++i) {
        if (rows[i] > 0) devices.push_back({c[order[i]].name, c[order[i]].kind, rows[i]});
      }
      std::vector<std::int64_t> used;
      for (const auto& d : devices) used.push_back(d.rows);
      Prediction e = SplitModel(p, devices, Precision::Double, kNx, stop, {}, cautious).predict(used);
      if (fastest_with) {
        auto [at, fresh] = fastest_with->emplace(devices.size(), e.total_s);
        if (!fresh) at->second = std::min(at->second, e.total_s);
      }
      if (e.total_s < best.total_s) best = std::move(e);
      return;
    }
    for (std::int64_t r = 0; r <= left; ++r) {
      rows[k] = r;
      split(k + 1, left - r);
    }
  };
  do {
    split(0, ny);
  } while (std::next_permutation(order.begin(), order.end()));
  return best;
}

TEST(Planner, MatchesBruteForceOrUsesFewerDevicesWithinTheLeastGain) {
  std::mt19937 rng(2026);
  for (int trial = 0; trial < 40; ++trial) {
    const bool three = trial % 2 == 1;
    std::vector<std::pair<std::string, DeviceKind>> devices = {{"cpu0", DeviceKind::Cpu}, {"gpu0", DeviceKind::Gpu}};
    if (three) devices.push_back({trial % 4 == 1 ? "gpu1" : "cpu1", trial % 4 == 1 ? DeviceKind::Gpu : DeviceKind::Cpu});
    const Profile p = random_profile(devices, rng);
    std::vector<Candidate> c;
    for (const auto& [name, kind] : devices) c.push_back({name, kind, 0});
    const std::int64_t ny = three ? 20 + static_cast<std::int64_t>(rng() % 40) : 20 + static_cast<std::int64_t>(rng() % 280);
    StopRule stop;
    stop.max_iterations = 1 + static_cast<std::int64_t>(rng() % 2000);
    const Plan plan = plan_split(p, c, Precision::Double, kNx, ny, stop);
    const std::vector<PlannedDevice> planned = planned_of(plan, c);
    std::int64_t covered = 0;
    for (const auto& d : planned) covered += d.rows;
    ASSERT_EQ(covered, ny);
    // Nothing learnt from solves: every share sized by the curves as they are.
    for (const auto& d : planned) EXPECT_DOUBLE_EQ(d.sized_slower, 1.0) << d.name;
    std::vector<std::int64_t> rows;
    for (const auto& d : planned) rows.push_back(d.rows);
    const double total = SplitModel(p, planned, Precision::Double, kNx, stop, {}, true).predict(rows).total_s;
    std::map<std::size_t, double> fastest_with;
    const Prediction best = brute_force(p, c, ny, stop, true, &fastest_with);
    EXPECT_LE(total, best.total_s * (1.0 + kLeastGainOfADevice) * 1.001) << "trial " << trial << ": ny " << ny;
    if (total > best.total_s * 1.001) {
      EXPECT_GT(best.devices.size(), planned.size()) << "trial " << trial << ": slower only for fewer devices";
    }
    // No split with fewer devices clearly within the least gain of the fastest is passed over.
    for (const auto& [count, fastest] : fastest_with) {
      if (fastest * 1.001 < best.total_s * (1.0 + kLeastGainOfADevice)) {
        EXPECT_LE(planned.size(), count) << "trial " << trial << ": ny " << ny;
        break;
      }
    }
    EXPECT_DOUBLE_EQ(plan.prediction->total_s, predict(p, planned, Precision::Double, kNx, stop).total_s);
  }
}

// A slowdown learnt from solves beside GPUs moves rows from a CPU device to
// the GPU, and only beside GPUs; without one the curves size every share.
TEST(Planner, CpuSharesBesideGpusAreSizedByTheirLearntSlowdown) {
  Profile p;
  p.devices["cpu0"].kind = "cpu";
  p.devices["cpu0"].rates[kKey] = RateCurve({{1, 1e-6}, {10000, 1e-2}});
  p.devices["cpu1"] = p.devices["cpu0"];
  p.devices["gpu0"].kind = "gpu";
  p.devices["gpu0"].rates[kKey] = RateCurve({{1, 1e-6}, {10000, 1e-3}});
  StopRule stop;
  stop.max_iterations = 1000;
  const std::vector<Candidate> cpu_gpu = {{"cpu0", DeviceKind::Cpu}, {"gpu0", DeviceKind::Gpu}};
  // cpu0 as planned beside gpu0, and the plan's prediction.
  const auto cpu_share = [&](Prediction& prediction) {
    const Plan plan = plan_split(p, cpu_gpu, Precision::Double, kNx, 11000, stop);
    EXPECT_EQ(plan.parts.size(), 2u);
    EXPECT_TRUE(plan.left_out.empty());
    prediction = *plan.prediction;
    for (const PlannedDevice& d : planned_of(plan, cpu_gpu)) {
      if (d.kind == DeviceKind::Cpu) return d;
    }
    return PlannedDevice{};
  };
  Prediction prediction;
  // Balanced by the curves the CPU (10x slower a row) takes 11000 / 11 rows.
  PlannedDevice cpu = cpu_share(prediction);
  EXPECT_NEAR(static_cast<double>(cpu.rows), 11000.0 / 11.0, 2.0);
  EXPECT_DOUBLE_EQ(cpu.sized_slower, 1.0);
  EXPECT_EQ(caution_of(prediction), "");
  // 1.5x as slow as its curve in a solve beside the GPU: sized for that, 11000 / 16.
  p.devices["cpu0"].slowdown_beside_gpus = 1.5;
  cpu = cpu_share(prediction);
  EXPECT_NEAR(static_cast<double>(cpu.rows), 11000.0 / 16.0, 2.0);
  EXPECT_DOUBLE_EQ(cpu.sized_slower, 1.5);
  EXPECT_LT(prediction.devices[0].iteration_s + prediction.devices[1].iteration_s, 2 * prediction.iteration_s)
      << "by the curves the CPU finishes first";
  EXPECT_EQ(caution_of(prediction),
            "cpu0 sized for sweeps 50% slower than its curve (as slow as it swept beside GPUs in solves)");
  // 3x: its 11000 / 31 rows save 3% of the GPU's time, more than the least gain, and it is used.
  p.devices["cpu0"].slowdown_beside_gpus = 3.0;
  EXPECT_NEAR(static_cast<double>(cpu_share(prediction).rows), 11000.0 / 31.0, 2.0);
  const Plan cpus = plan_split(p, {{"cpu0", DeviceKind::Cpu}, {"cpu1", DeviceKind::Cpu}}, Precision::Double, kNx,
                               11000, stop);
  EXPECT_EQ(caution_of(*cpus.prediction), "");
  EXPECT_EQ(cpus.parts[0].rows, 5500);
}

// A device joins only where it saves kLeastGainOfADevice: a CPU device 200
// times slower a row than the GPU would save 0.5% and is left out, saying so;
// one 40 times slower saves 2.4% and joins.
TEST(Planner, ADeviceJoinsOnlyWhereItSavesTheLeastGain) {
  Profile p;
  p.devices["gpu0"].kind = "gpu";
  p.devices["gpu0"].rates[kKey] = RateCurve({{1, 1e-7}, {10000, 1e-3}});
  p.devices["cpu0"].kind = "cpu";
  StopRule stop;
  stop.max_iterations = 1000;
  const std::vector<Candidate> cpu_gpu = {{"cpu0", DeviceKind::Cpu}, {"gpu0", DeviceKind::Gpu}};
  p.devices["cpu0"].rates[kKey] = RateCurve({{1, 2e-5}, {10000, 0.2}});
  const Plan little = plan_split(p, cpu_gpu, Precision::Double, kNx, 10000, stop);
  ASSERT_EQ(little.parts.size(), 1u);
  ASSERT_EQ(little.left_out.size(), 1u);
  EXPECT_EQ(little.left_out[0].name, "cpu0");
  EXPECT_NE(little.left_out[0].reason.find("would save 0.5%"), std::string::npos) << little.left_out[0].reason;
  EXPECT_NE(little.left_out[0].reason.find("a device joins only to save 1%"), std::string::npos)
      << little.left_out[0].reason;
  p.devices["cpu0"].rates[kKey] = RateCurve({{1, 4e-6}, {10000, 0.04}});
  const Plan enough = plan_split(p, cpu_gpu, Precision::Double, kNx, 10000, stop);
  EXPECT_EQ(enough.parts.size(), 2u);
  EXPECT_TRUE(enough.left_out.empty());
}

TEST(Planner, EqualDevicesDifferByAtMostOneRow) {
  std::mt19937 rng(5);
  Profile p = random_profile({{"gpu0", DeviceKind::Gpu}}, rng);
  for (const char* name : {"gpu1", "gpu2", "gpu3"}) p.devices[name] = p.devices["gpu0"];
  for (const char* a : {"gpu0", "gpu1", "gpu2", "gpu3"}) {
    for (const char* b : {"gpu0", "gpu1", "gpu2", "gpu3"}) {
      if (std::string(a) != b) p.links[link_key(a, b)] = {5e-6, 300e9};
    }
  }
  std::vector<Candidate> c = {{"gpu0", DeviceKind::Gpu}, {"gpu1", DeviceKind::Gpu}, {"gpu2", DeviceKind::Gpu},
                              {"gpu3", DeviceKind::Gpu}};
  StopRule stop;
  stop.max_iterations = 100000;
  const Plan plan = plan_split(p, c, Precision::Double, kNx, 1000003, stop);
  ASSERT_EQ(plan.parts.size(), 4u);
  std::int64_t lo = plan.parts[0].rows, hi = lo;
  for (const auto& d : plan.parts) {
    lo = std::min(lo, d.rows);
    hi = std::max(hi, d.rows);
  }
  EXPECT_LE(hi - lo, 1);
}

// A GPU whose smallest slabs take longer than its large ones (edges no interior
// hides, plus its loop's overhead), as a tiny grid calibrates: alone, it gets
// every row, and beside a slower CPU device it still gets most.
TEST(Planner, AGpuSlowerOnFewRowsThanOnManyStillTakesTheGrid) {
  Profile p;
  DeviceProfile gpu;
  gpu.kind = "gpu";
  gpu.rates[kKey] = RateCurve({{4, 7.7e-6}, {128, 7.7e-6}, {256, 8.0e-6}});
  gpu.step[kKey] = 2.0e-5;
  gpu.overhead[kKey] = 1.9e-5;
  gpu.setup_in = gpu.setup_out = {1e-5, 5e9};
  p.devices["gpu0"] = gpu;
  const std::vector<Candidate> alone = {{"gpu0", DeviceKind::Gpu}};
  StopRule stop;
  stop.max_iterations = 5000;
  const Plan plan = plan_split(p, alone, Precision::Double, kNx, 256, stop);
  ASSERT_EQ(plan.parts.size(), 1u);
  EXPECT_EQ(plan.parts[0].rows, 256);

  DeviceProfile cpu;
  cpu.kind = "cpu";
  cpu.rates[kKey] = RateCurve({{1, 1e-6}, {256, 256e-6}});
  cpu.step[kKey] = 1e-6;
  p.devices["cpu0"] = cpu;
  p.links[link_key("cpu0", "gpu0")] = p.links[link_key("gpu0", "cpu0")] = {5e-6, 10e9};
  const Plan both = plan_split(p, {{"cpu0", DeviceKind::Cpu}, {"gpu0", DeviceKind::Gpu}}, Precision::Double, kNx, 256, stop);
  std::int64_t gpu_rows = 0;
  for (const auto& part : both.parts) gpu_rows += part.device == 1 ? part.rows : 0;  // candidates[1]: gpu0
  EXPECT_GT(gpu_rows, 128);
}

// A blocked split: the GPUs priced by their blocked curves, and no device with
// fewer rows than the depth (its neighbours' ghost rows come from it).
TEST(Planner, BlockedSplitsGiveEveryDeviceItsDepthInRows) {
  std::mt19937 rng(13);
  for (int trial = 0; trial < 20; ++trial) {
    Profile p = random_profile({{"cpu0", DeviceKind::Cpu}, {"gpu0", DeviceKind::Gpu}, {"gpu1", DeviceKind::Gpu},
                                {"cpu1", DeviceKind::Cpu}},
                               rng);
    const VariantChoice blocked{Variant::Blocked, 2 + trial % 7};
    for (const char* gpu : {"gpu0", "gpu1"}) {
      DeviceProfile& d = p.devices[gpu];
      d.rates[rate_key(Precision::Double, kNx, blocked)] = d.rates[kKey].scaled(0.5);
      d.step[rate_key(Precision::Double, kNx, blocked)] = d.step[kKey];
    }
    const std::vector<Candidate> c = {{"cpu0", DeviceKind::Cpu}, {"gpu0", DeviceKind::Gpu},
                                      {"gpu1", DeviceKind::Gpu}, {"cpu1", DeviceKind::Cpu}};
    StopRule stop;
    stop.max_iterations = 1000;
    const std::int64_t ny = 4 * blocked.param + static_cast<std::int64_t>(rng() % 40);
    const Plan plan = plan_split(p, c, Precision::Double, kNx, ny, stop, blocked);
    std::int64_t total = 0;
    for (const auto& d : planned_of(plan, c)) {
      if (plan.parts.size() > 1) {
        EXPECT_GE(d.rows, blocked.param) << d.name << ", trial " << trial;
      }
      total += d.rows;
    }
    EXPECT_EQ(total, ny);
    EXPECT_TRUE(std::isfinite(plan.prediction->total_s));
  }
}

TEST(Planner, LeavesOutWhatDoesNotPayAndSaysWhy) {
  std::mt19937 rng(9);
  Profile p = random_profile({{"cpu0", DeviceKind::Cpu}, {"gpu0", DeviceKind::Gpu}}, rng);
  // A GPU 300x faster than the CPU, and slow halo hand-overs that its short
  // sweep cannot hide: the CPU does not pay.
  p.devices["cpu0"].rates[kKey] = RateCurve({{1, 30e-6}, {1000, 30e-3}});
  p.devices["gpu0"].rates[kKey] = RateCurve({{1, 0.1e-6}, {1000, 0.1e-3}});
  p.devices["gpu0"].step[kKey] = 0.0;
  p.links[link_key("cpu0", "gpu0")] = {50e-6, 10e9};
  p.links[link_key("gpu0", "cpu0")] = {50e-6, 10e9};
  const std::vector<Candidate> c = {{"cpu0", DeviceKind::Cpu}, {"gpu0", DeviceKind::Gpu}};
  StopRule stop;
  stop.max_iterations = 1000;
  Plan plan = plan_split(p, c, Precision::Double, kNx, 1000, stop);
  ASSERT_EQ(plan.parts.size(), 1u);
  EXPECT_EQ(plan.prediction->devices[0].name, "gpu0");
  ASSERT_EQ(plan.left_out.size(), 1u);
  EXPECT_NE(plan.left_out[0].reason.find("halo hand-overs and loop add"), std::string::npos) << plan.left_out[0].reason;
  EXPECT_NE(plan.left_out[0].reason.find("% of the rows would cost"), std::string::npos) << plan.left_out[0].reason;
  // With one iteration, copying the grid to the GPU does not pay.
  p.devices["gpu0"].setup_in = {1e-3, 1e8};
  p.devices["gpu0"].setup_out = {1e-3, 1e8};
  stop.max_iterations = 1;
  plan = plan_split(p, c, Precision::Double, kNx, 1000, stop);
  ASSERT_EQ(plan.parts.size(), 1u);
  EXPECT_EQ(plan.prediction->devices[0].name, "cpu0");
  EXPECT_NE(plan.left_out[0].reason.find("copying its slab in and out takes"), std::string::npos)
      << plan.left_out[0].reason;
}

// A CPU device whose best split is to run alone, slower than the other alone:
// its line says so, with both totals.
TEST(Planner, ADeviceBestOnItsOwnSaysSo) {
  std::mt19937 rng(5);
  Profile p = random_profile({{"cpu0", DeviceKind::Cpu}, {"cpu1", DeviceKind::Cpu}}, rng);
  p.devices["cpu0"].rates[kKey] = RateCurve({{1, 1e-6}, {1000, 1e-3}});
  p.devices["cpu1"].rates[kKey] = RateCurve({{1, 2e-6}, {1000, 2e-3}});
  p.links[link_key("cpu0", "cpu1")] = {1.0, 10e9};  // a second a hand-over: no split pays
  p.links[link_key("cpu1", "cpu0")] = {1.0, 10e9};
  StopRule stop;
  stop.max_iterations = 10;
  const Plan plan = plan_split(p, {{"cpu0", DeviceKind::Cpu}, {"cpu1", DeviceKind::Cpu}}, Precision::Double, kNx, 1000, stop);
  ASSERT_EQ(plan.left_out.size(), 1u);
  EXPECT_EQ(plan.left_out[0].name, "cpu1");
  EXPECT_NE(plan.left_out[0].reason.find("on its own (all the rows) it would take"), std::string::npos)
      << plan.left_out[0].reason;
}

TEST(Planner, DegenerateCases) {
  std::mt19937 rng(3);
  Profile p = random_profile({{"cpu0", DeviceKind::Cpu}, {"cpu1", DeviceKind::Cpu}, {"gpu0", DeviceKind::Gpu}}, rng);
  StopRule stop;
  stop.max_iterations = 10;
  // One device.
  Plan one = plan_split(p, {{"cpu0", DeviceKind::Cpu}}, Precision::Double, kNx, 7, stop);
  ASSERT_EQ(one.parts.size(), 1u);
  EXPECT_EQ(one.parts[0].rows, 7);
  // Fewer rows than devices.
  Plan few = plan_split(p, {{"cpu0", DeviceKind::Cpu}, {"cpu1", DeviceKind::Cpu}, {"gpu0", DeviceKind::Gpu}},
                             Precision::Double, kNx, 2, stop);
  EXPECT_LE(few.parts.size(), 2u);
  EXPECT_EQ(few.parts.size() + few.left_out.size(), 3u);
  // A device with (almost) zero speed gets nothing.
  p.devices["cpu1"].rates[kKey] = RateCurve({{1, 1e6}, {2, 2e6}});
  Plan slow = plan_split(p, {{"cpu0", DeviceKind::Cpu}, {"cpu1", DeviceKind::Cpu}}, Precision::Double, kNx, 100, stop);
  ASSERT_EQ(slow.parts.size(), 1u);
  EXPECT_EQ(slow.parts[0].device, 0u);
  // Memory too small in total: the error says how much is missing.
  try {
    plan_split(p, {{"cpu0", DeviceKind::Cpu, 40}, {"gpu0", DeviceKind::Gpu, 50}}, Precision::Double, kNx, 100, stop);
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("holds 90 of the 100 rows"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("GiB more are needed"), std::string::npos) << e.what();
  }
  // Memory bounds a device's rows.
  Plan bounded = plan_split(p, {{"cpu0", DeviceKind::Cpu, 0}, {"gpu0", DeviceKind::Gpu, 10}}, Precision::Double, kNx,
                            100, stop);
  for (const auto& d : bounded.parts) {
    if (d.device == 1) {
      EXPECT_LE(d.rows, 10);
    }
  }
}

TEST(Planner, SixteenDevicesAndAMillionRowsInAFewMilliseconds) {
  std::mt19937 rng(16);
  std::vector<std::pair<std::string, DeviceKind>> devices;
  for (int k = 0; k < 4; ++k) devices.push_back({"cpu" + std::to_string(k), DeviceKind::Cpu});
  for (int k = 0; k < 12; ++k) devices.push_back({"gpu" + std::to_string(k), DeviceKind::Gpu});
  const Profile p = random_profile(devices, rng);
  std::vector<Candidate> c;
  for (const auto& [name, kind] : devices) c.push_back({name, kind, 0});
  StopRule stop;
  stop.max_iterations = 1000;
  const auto start = std::chrono::steady_clock::now();
  const Plan plan = plan_split(p, c, Precision::Double, kNx, 1000000, stop);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::int64_t covered = 0;
  for (const auto& d : plan.parts) covered += d.rows;
  EXPECT_EQ(covered, 1000000);
  std::printf("16 devices, 10^6 rows: planned in %.1f ms (%zu devices used)\n", ms, plan.parts.size());
}

}  // namespace
}  // namespace hetstencil
