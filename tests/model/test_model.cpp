#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "hetstencil/error.hpp"
#include "hetstencil/statistics.hpp"
#include "model/curves.hpp"
#include "model/learn.hpp"
#include "model/predict.hpp"
#include "model/profile.hpp"
#include "core/robust.hpp"

namespace hetstencil {
namespace {

namespace fs = std::filesystem;

// Others crowd a measurement when they take more than 0.2 cores and more than
// the host left idle; on Linux the figures are read (this process excluded).
TEST(HostLoad, OthersCrowdOnlyBeyondWhatWasIdle) {
  EXPECT_TRUE((HostLoad::Figures{1.3, 0.2}.crowded()));
  EXPECT_FALSE((HostLoad::Figures{1.3, 6.0}.crowded())) << "a daemon on a spare core of a large host";
  EXPECT_FALSE((HostLoad::Figures{0.1, 0.0}.crowded()));
  EXPECT_FALSE((HostLoad::Figures{}.crowded())) << "unread figures";
  const HostLoad load;
  volatile double x = 0.0;
  for (int k = 0; k < 20000000; ++k) x = x + 1.0;  // this process's own work
  const HostLoad::Figures f = load.since_start();
  EXPECT_GE(f.others, 0.0);
  EXPECT_GE(f.idle, 0.0);
}

// The hypervisor stops CPUs that have work: what it takes crowds a measurement
// however much else was idle.
TEST(HostLoad, WhatTheHypervisorTakesCrowdsEvenBesideIdleCores) {
  EXPECT_TRUE((HostLoad::Figures{0.0, 30.0, 0.5}.crowded()));
  EXPECT_FALSE((HostLoad::Figures{0.0, 30.0, 0.1}.crowded()));
  const std::string both = HostLoad::Figures{1.3, 0.2, 6.1}.describe();
  EXPECT_NE(both.find("other processes took 1.3 cores while it ran (0.2 left idle); the hypervisor took 6.1 cores' "
                      "worth"),
            std::string::npos)
      << both;
  const std::string stolen = HostLoad::Figures{0.0, 30.0, 6.1}.describe();
  EXPECT_EQ(stolen.find("other processes"), std::string::npos) << stolen;
  EXPECT_NE(stolen.find("where a CPU device's workers fill its cores, fewer threads leave it room"), std::string::npos)
      << stolen;
  EXPECT_EQ((HostLoad::Figures{1.3, 6.0, 0.1}.describe()), "") << "nothing crowded it";
}

TEST(Robust, OneSpikeChangesNothing) {
  std::vector<double> ms(21, 1.0);
  for (std::size_t k = 0; k < ms.size(); ++k) ms[k] += 0.001 * static_cast<double>(k % 5);
  const double clean = robust_time(ms);
  EXPECT_NEAR(clean, 1.0 + 0.001 * 40 / 21, 1e-12) << "the mean of samples that are all alike";
  ms.push_back(70.0);  // StarPU's 70 ms spike
  EXPECT_DOUBLE_EQ(robust_time(ms), clean);
  EXPECT_EQ(without_outliers(ms).size(), ms.size() - 1);
  EXPECT_DOUBLE_EQ(median({3.0, 1.0, 2.0, 10.0}), 2.5);
  std::vector<double> hundred;
  for (int k = 100; k >= 1; --k) hundred.push_back(k);
  EXPECT_DOUBLE_EQ(percentile(hundred, 0.9), 90.0);
  EXPECT_DOUBLE_EQ(percentile(hundred, 1.0), 100.0);
  EXPECT_DOUBLE_EQ(percentile({5.0}, 0.9), 5.0);
  EXPECT_THROW(percentile({}, 0.5), InvalidArgument);
  EXPECT_NEAR(mad({1.0, 2.0, 3.0, 4.0, 100.0}), 1.4826, 1e-12);
  EXPECT_THROW(median({}), InvalidArgument);
}

TEST(RateCurve, InterpolatesMonotonicallyAndExtrapolates) {
  // A GPU-like curve: a floor of 10 us under 64 rows, then linear; one noisy
  // sample (256 rows faster than 128) is lifted to keep the curve monotone.
  const RateCurve c({{16, 10e-6}, {64, 11e-6}, {128, 20e-6}, {256, 18e-6}, {1024, 80e-6}});
  EXPECT_DOUBLE_EQ(c.seconds(128), 20e-6);
  EXPECT_DOUBLE_EQ(c.seconds(256), 20e-6);
  EXPECT_NEAR(c.seconds(640), 20e-6 + 60e-6 * 384.0 / 768.0, 1e-15);
  EXPECT_NEAR(c.seconds(2048), 80e-6 + 60e-6 / 768.0 * 1024.0, 1e-15);  // the last segment's slope
  double previous = 0.0;
  for (std::int64_t r = 1; r <= 4096; r += 7) {
    EXPECT_GE(c.seconds(r), previous) << r;
    previous = c.seconds(r);
  }
  // Below the first point: towards the first two points' intercept, which is
  // near the floor for this curve and near zero for a CPU-like one.
  EXPECT_GT(c.seconds(1), 9e-6);
  const RateCurve cpu({{10, 1e-3}, {20, 2e-3}, {40, 4e-3}});
  EXPECT_NEAR(cpu.seconds(5), 0.5e-3, 1e-12);
  EXPECT_DOUBLE_EQ(cpu.seconds(0), 0.0);
  EXPECT_THROW(RateCurve({{0, 1.0}}), InvalidArgument);
}

// Across a cache's edge (2 times slower a row from 2048 rows to 2560), rows
// between the two points sweep at the later one's pace; elsewhere, linearly.
TEST(RateCurve, AcrossACachesEdgeAtThePacePastIt) {
  const RateCurve c({{1024, 0.5e-3}, {2048, 1.0e-3}, {2560, 2.56e-3}, {4096, 4.2e-3}});
  EXPECT_NEAR(c.seconds(2304), 2304 * 1e-6, 1e-15);
  EXPECT_NEAR(c.seconds(2049), 2049 * 1e-6, 1e-15);
  EXPECT_NEAR(c.seconds(1536), 0.75e-3, 1e-15);
  EXPECT_NEAR(c.seconds(3328), 2.56e-3 + 768 * (4.2e-3 - 2.56e-3) / 1536, 1e-15);
  const RateCurve ending({{1024, 0.5e-3}, {2048, 1.0e-3}, {2560, 2.56e-3}});
  EXPECT_NEAR(ending.seconds(5120), 5.12e-3, 1e-15) << "past a last segment that is an edge: at its pace";
  double previous = 0.0;
  for (std::int64_t r = 1; r <= 8192; r += 3) {
    EXPECT_GE(c.seconds(r), previous) << r;
    previous = c.seconds(r);
  }
}

// The pace more rows settle at: the slowest a row among the points at or
// past the rows asked for.
TEST(RateCurve, TheSlowestRowAmongLargerPoints) {
  const RateCurve c({{64, 32e-6}, {1024, 512e-6}, {2048, 2048e-6}, {8192, 7000e-6}});
  EXPECT_DOUBLE_EQ(c.slowest_row_s(1024), 1e-6) << "2048 rows' pace, past a cache that 1024 fit";
  EXPECT_DOUBLE_EQ(c.slowest_row_s(65), 1e-6);
  EXPECT_DOUBLE_EQ(c.slowest_row_s(4096), 7000e-6 / 8192);
  EXPECT_EQ(c.slowest_row_s(8193), 0.0) << "no point so large";
}

TEST(RateCurve, UpdatesMoveTowardsMeasurements) {
  RateCurve c({{100, 1.0}, {1000, 10.0}});
  c.update(100, 2.0, 0.5);
  EXPECT_DOUBLE_EQ(c.seconds(100), 1.5);
  c.update(400, 4.0, 0.5);  // no point within 25%: a new one
  EXPECT_EQ(c.points().size(), 3u);
  EXPECT_DOUBLE_EQ(c.seconds(400), 4.0);
}

TEST(TransferCurve, FitsLatencyAndBandwidth) {
  std::vector<std::pair<double, double>> samples;
  for (double b : {1e3, 1e4, 1e5, 1e6}) samples.push_back({b, 2e-6 + b / 50e9});
  const TransferCurve c = TransferCurve::fit(samples);
  EXPECT_NEAR(c.latency_s, 2e-6, 1e-12);
  EXPECT_NEAR(c.bytes_per_s, 50e9, 1e3);
  // Samples whose best line has a negative latency are fitted through the origin.
  const TransferCurve through_origin = TransferCurve::fit({{1e3, 1e-6}, {1e6, 0.5e-6}});
  EXPECT_EQ(through_origin.latency_s, 0.0);
  EXPECT_GT(through_origin.bytes_per_s, 0.0);
}

Profile sample_profile() {
  Profile p;
  p.fingerprint.host = "node7";
  p.fingerprint.cpu_model = "Xeon";
  p.fingerprint.sockets = 2;
  p.fingerprint.cores = 32;
  p.fingerprint.gpus = {"NVIDIA H200 GPU-1", "NVIDIA H200 GPU-2"};
  p.fingerprint.driver_version = 13000;
  DeviceProfile cpu;
  cpu.kind = "cpu";
  cpu.rates[rate_key(Precision::Float, 1024)] = RateCurve({{16, 16e-6}, {1024, 1024e-6}});
  cpu.checks[rate_key(Precision::Float, 1024)] = RateCurve({{16, 8e-6}, {1024, 512e-6}});
  cpu.step[rate_key(Precision::Float, 1024)] = 2e-6;
  cpu.fixed[rate_key(Precision::Float, 1024)] = 300e-6;
  cpu.setup_in = {1e-6, 40e9};  // allocation and first touch
  cpu.setup_out = {1e-6, 50e9};
  cpu.slowdown_beside_gpus = 1.5;
  DeviceProfile gpu;
  gpu.kind = "gpu";
  gpu.rates[rate_key(Precision::Float, 1024)] = RateCurve({{16, 10e-6}, {1024, 40e-6}});
  gpu.checks[rate_key(Precision::Float, 1024)] = RateCurve({{16, 20e-6}, {1024, 30e-6}});
  gpu.step[rate_key(Precision::Float, 1024)] = 12e-6;
  gpu.overhead[rate_key(Precision::Float, 1024)] = 1.5e-6;
  gpu.fixed[rate_key(Precision::Float, 1024)] = 2e-3;
  gpu.setup_in = {5e-6, 20e9};
  gpu.setup_out = {5e-6, 25e9};
  p.devices["cpu0"] = cpu;
  p.devices["gpu0"] = gpu;
  p.links[link_key("cpu0", "gpu0")] = {3e-6, 10e9};
  p.links[link_key("gpu0", "cpu0")] = {4e-6, 12e9};
  p.link_conditions = "test";
  return p;
}

TEST(Profile, JsonRoundTrip) {
  const Profile p = sample_profile();
  const Profile q = profile_from_json(to_json(p));
  EXPECT_EQ(to_json(q), to_json(p));
  EXPECT_TRUE(q.fingerprint == p.fingerprint);
  EXPECT_DOUBLE_EQ(q.devices.at("cpu0").slowdown_beside_gpus, 1.5);
  EXPECT_DOUBLE_EQ(q.devices.at("gpu0").slowdown_beside_gpus, 1.0);
  EXPECT_DOUBLE_EQ(q.devices.at("gpu0").overhead.at(rate_key(Precision::Float, 1024)), 1.5e-6);
  EXPECT_DOUBLE_EQ(q.devices.at("gpu0").fixed.at(rate_key(Precision::Float, 1024)), 2e-3);
  EXPECT_DOUBLE_EQ(q.rate("gpu0", Precision::Float, 1024)->seconds(512), p.rate("gpu0", Precision::Float, 1024)->seconds(512));
}

TEST(Profile, NearestWidthIsScaledAndMissingOnesAreEmpty) {
  const Profile p = sample_profile();
  EXPECT_DOUBLE_EQ(p.rate("cpu0", Precision::Float, 2048)->seconds(1024), 2 * 1024e-6);
  EXPECT_FALSE(p.rate("cpu0", Precision::Double, 1024).has_value());
  EXPECT_FALSE(p.rate("gpu9", Precision::Float, 1024).has_value());
}

TEST(Profile, MalformedTextIsRefusedWithAReason) {
  EXPECT_THROW(profile_from_json("{"), InvalidArgument);
  EXPECT_THROW(profile_from_json("{\"format\": \"something else\"}"), InvalidArgument);
  std::string partial = to_json(sample_profile());
  partial = partial.substr(0, partial.size() / 2);
  EXPECT_THROW(profile_from_json(partial), InvalidArgument);
  std::string faster = to_json(sample_profile());
  faster.replace(faster.find("\"slowdown_beside_gpus\": 1.5"), 27, "\"slowdown_beside_gpus\": 0.5");
  EXPECT_THROW(profile_from_json(faster), InvalidArgument) << "a slowdown below 1";
  std::string negative = to_json(sample_profile());
  const std::string overhead = "\"float/1024\": 1.5e-06";
  negative.replace(negative.find(overhead), overhead.size(), "\"float/1024\": -1.5e-06");
  EXPECT_DOUBLE_EQ(profile_from_json(negative).devices.at("gpu0").overhead.at(rate_key(Precision::Float, 1024)), -1.5e-6)
      << "a GPU alone may run its graph's sweeps closer than one sweep timed by itself";
}

struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("hetstencil_profile_" + std::to_string(getpid()));
  Scratch() { fs::remove_all(dir); }
  ~Scratch() { fs::remove_all(dir); }
};

TEST(Profile, SavesAtomicallyAndLoadsOnlyForTheSameMachine) {
  Scratch s;
  const std::string path = (s.dir / "deep" / "node7.json").string();
  const Profile p = sample_profile();
  EXPECT_THROW(save_profile(path, p), SystemError) << "a folder the caller named is not made for it";
  fs::create_directories(s.dir / "deep");
  save_profile(path, p);
  EXPECT_EQ(std::distance(fs::directory_iterator(s.dir / "deep"), fs::directory_iterator()), 1) << "a temp file was left";
  ASSERT_TRUE(load_profile(path, &p.fingerprint).has_value());
  Fingerprint other = p.fingerprint;
  other.gpus.pop_back();
  EXPECT_FALSE(load_profile(path, &other).has_value());
  other = p.fingerprint;
  other.kernels = "older";
  EXPECT_NE(other.difference(p.fingerprint).find("kernels"), std::string::npos);
  EXPECT_FALSE(load_profile(path, &other).has_value());
  EXPECT_FALSE(load_profile((s.dir / "missing.json").string(), nullptr).has_value());
  { std::ofstream(path) << "{\"format\": \"hetstencil-profile-1\", \"fingerprint\": {"; }
  EXPECT_FALSE(load_profile(path, nullptr).has_value()) << "a corrupt file must be ignored, not crash";
}

TEST(Profile, DefaultPathFollowsXdg) {
  setenv("XDG_CACHE_HOME", "/x/cache", 1);
  EXPECT_EQ(default_profile_path("n1"), "/x/cache/hetstencil/n1.json");
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", "/home/u", 1);
  EXPECT_EQ(default_profile_path("n1"), "/home/u/.cache/hetstencil/n1.json");
}

// A GPU's iteration of a full slab is its sweep and what its loop does not
// hide (launch gaps, waits between its streams: its overhead); a small slab's
// is its host thread's loop. A profile without the overhead says so.
TEST(Predict, AGpusOverheadAddsToItsSweepAndItsLoopFloorsIt) {
  Profile p = sample_profile();
  StopRule stop;
  stop.max_iterations = 10;
  const auto alone = [&](std::int64_t rows) {
    return predict(p, {{"gpu0", DeviceKind::Gpu, rows}}, Precision::Float, 1024, stop);
  };
  EXPECT_NEAR(alone(1024).iteration_s, 40e-6 + 1.5e-6, 1e-15);
  EXPECT_NEAR(alone(4).iteration_s, 12e-6, 1e-15) << "4 rows sweep in under 10 us: the loop's 12 us";
  EXPECT_TRUE(alone(1024).notes.empty());
  p.devices["gpu0"].overhead.clear();
  EXPECT_NEAR(alone(1024).iteration_s, 40e-6, 1e-15);
  ASSERT_EQ(alone(1024).notes.size(), 1u);
  EXPECT_NE(alone(1024).notes[0].find("no overhead figure for gpu0"), std::string::npos) << alone(1024).notes[0];
}

// Alone, a GPU's iterations are one graph, whose sweeps may follow each other
// closer than a sweep timed by itself: a negative overhead prices that; with
// a neighbour each sweep is launched, and it counts as none.
TEST(Predict, ANegativeOverheadCountsOnlyForAGpuAlone) {
  Profile p = sample_profile();
  p.devices["gpu0"].overhead[rate_key(Precision::Float, 1024)] = -5e-6;
  StopRule stop;
  stop.max_iterations = 10;
  const Prediction alone = predict(p, {{"gpu0", DeviceKind::Gpu, 1024}}, Precision::Float, 1024, stop);
  EXPECT_NEAR(alone.iteration_s, 40e-6 - 5e-6, 1e-15);
  const Prediction beside =
      predict(p, {{"cpu0", DeviceKind::Cpu, 64}, {"gpu0", DeviceKind::Gpu, 960}}, Precision::Float, 1024, stop);
  EXPECT_GE(beside.devices[1].exposed_s, 0.0);
}

// A CPU curve that sweeps 1024 rows at half the pace a row of 4096 (its two
// slabs fit the last-level cache at 1024): the model prices the curve, and
// gives the slower pace beside it, in the prediction and in a note.
TEST(Predict, ACpuSlabThatFitsACacheHasThePacePastItBeside) {
  Profile p = sample_profile();
  const RateCurve stepped({{16, 16e-6}, {1024, 512e-6}, {2048, 1024e-6}, {4096, 4096e-6}});
  p.devices["cpu0"].rates[rate_key(Precision::Float, 1024)] = stepped;
  p.devices["gpu0"].rates[rate_key(Precision::Float, 1024)] = stepped.scaled(0.1);
  StopRule stop;
  stop.max_iterations = 10;
  const Prediction cached =
      predict(p, {{"cpu0", DeviceKind::Cpu, 1024}, {"gpu0", DeviceKind::Gpu, 1500}}, Precision::Float, 1024, stop);
  const DevicePrediction& cpu = cached.devices[0];
  EXPECT_NEAR(cpu.compute_s, 512e-6, 1e-15);
  EXPECT_NEAR(cpu.uncached_compute_s, 1024e-6, 1e-15);
  EXPECT_NEAR(cached.uncached_iteration_s, cpu.iteration_s + 512e-6, 1e-15);
  ASSERT_EQ(cached.notes.size(), 1u);
  EXPECT_NE(cached.notes[0].find("cpu0's 1024 rows are priced at 0.512 ms a sweep, and its curve sweeps more rows "
                                 "2.0 times slower a row"),
            std::string::npos)
      << cached.notes[0];
  EXPECT_NE(cached.notes[0].find("at up to that pace, 1.02 ms"), std::string::npos) << cached.notes[0];
  EXPECT_EQ(cached.devices[1].uncached_compute_s, 0.0) << "a GPU's curve, stepped too, is not read so";
  // Past the step, and on it (between the points either side of the
  // cache's edge, priced at the pace past it), one pace.
  for (const std::int64_t rows : {4096, 3000}) {
    const Prediction one =
        predict(p, {{"cpu0", DeviceKind::Cpu, rows}, {"gpu0", DeviceKind::Gpu, 4000}}, Precision::Float, 1024, stop);
    EXPECT_NEAR(one.devices[0].compute_s, static_cast<double>(rows) * 1e-6, 1e-15) << rows;
    EXPECT_EQ(one.devices[0].uncached_compute_s, 0.0) << rows;
    EXPECT_EQ(one.uncached_iteration_s, 0.0) << rows;
    EXPECT_TRUE(one.notes.empty()) << rows;
  }
}

TEST(Predict, CpuAndGpuSplit) {
  const Profile p = sample_profile();
  StopRule stop;
  stop.max_iterations = 100;
  stop.tolerance = 1e-6;
  stop.check_every = 10;  // checks at 0, 10, ..., 100
  const Prediction pr =
      predict(p, {{"cpu0", DeviceKind::Cpu, 64}, {"gpu0", DeviceKind::Gpu, 960}}, Precision::Float, 1024, stop);
  ASSERT_EQ(pr.devices.size(), 2u);
  const double row = 1026.0 * 4;
  const DevicePrediction& cpu = pr.devices[0];
  const DevicePrediction& gpu = pr.devices[1];
  EXPECT_NEAR(cpu.compute_s, 64e-6, 1e-15);
  EXPECT_NEAR(cpu.exchange_s, 4e-6 + row / 12e9, 1e-15);  // the GPU's edge row, through the host
  EXPECT_DOUBLE_EQ(cpu.exposed_s, cpu.exchange_s + 2e-6);  // and its loop, after the sweep
  EXPECT_NEAR(gpu.exchange_s, (3e-6 + row / 10e9) + (4e-6 + row / 12e9), 1e-15);
  EXPECT_NEAR(gpu.exposed_s, 1.5e-6, 1e-15);  // its overhead: exchange and loop hidden behind its interior
  // A small slab cannot hide the host's loop: 4 rows sweep in under 10 us, the loop takes 12.
  const Prediction small = predict(p, {{"gpu0", DeviceKind::Gpu, 4}}, Precision::Float, 1024, stop);
  EXPECT_NEAR(small.devices[0].iteration_s, 12e-6, 1e-15);
  EXPECT_GT(small.devices[0].exposed_s, 0.0);
  EXPECT_NEAR(gpu.setup_s, 5e-6 + row * 962 / 20e9, 1e-15);
  EXPECT_NEAR(cpu.setup_s, 1e-6 + row * 66 / 40e9, 1e-15);  // CPU slabs are set up too
  EXPECT_NEAR(pr.setup_s, std::max(cpu.setup_s, gpu.setup_s), 1e-15);
  EXPECT_DOUBLE_EQ(pr.iteration_s, std::max(cpu.iteration_s, gpu.iteration_s));  // the pair's chain is shorter
  EXPECT_EQ(pr.checks, 11);
  EXPECT_NEAR(cpu.check_s, 32e-6, 1e-15);
  EXPECT_NEAR(pr.check_s, std::max(cpu.check_s, gpu.check_s), 1e-15);
  EXPECT_NEAR(pr.fixed_s, 2e-3, 1e-15);  // the GPU's: devices start and end together
  EXPECT_NEAR(pr.total_s, pr.setup_s + pr.fixed_s + 100 * pr.iteration_s + 11 * pr.check_s + pr.teardown_s, 1e-12);
  EXPECT_TRUE(pr.notes.empty());
  EXPECT_THROW(predict(p, {{"cpu0", DeviceKind::Cpu, 64}}, Precision::Double, 1024, stop), InvalidArgument);
}

}  // namespace
}  // namespace hetstencil

namespace hetstencil {
namespace {

// Two CPU devices calibrated together on 1024 rows: 2 us a row each while the
// other sweeps as many rows, 3 us a row while it sweeps the rest of the 1024
// (their rows evict each other's from a shared cache). At equal shares the
// curve holds; at 256 and 768 each is priced by its rest curve, and between,
// in proportion to the rows the other sweeps.
TEST(Predict, CpuDevicesSharingMemoryArePricedByWhatTheOthersSweep) {
  Profile p;
  for (const char* name : {"cpu0", "cpu1"}) {
    DeviceProfile cpu;
    cpu.kind = "cpu";
    cpu.rates[rate_key(Precision::Double, 512)] = RateCurve({{8, 16e-6}, {1024, 2048e-6}});
    cpu.rest[rate_key(Precision::Double, 512)] = RateCurve({{8, 24e-6}, {1024, 3072e-6}});
    cpu.rest_rows[rate_key(Precision::Double, 512)] = 1024;
    p.devices[name] = cpu;
  }
  StopRule stop;
  stop.max_iterations = 10;
  const auto at = [&](std::int64_t a, std::int64_t b) {
    return predict(p, {{"cpu0", DeviceKind::Cpu, a}, {"cpu1", DeviceKind::Cpu, b}}, Precision::Double, 512, stop);
  };
  // Each sweeps its rows and the ghost row beside the other: rows_swept adds none for sync.
  const Prediction even = at(512, 512);
  EXPECT_NEAR(even.devices[0].compute_s, 1024e-6, 1e-12);
  EXPECT_NEAR(even.devices[1].compute_s, 1024e-6, 1e-12);
  const Prediction uneven = at(256, 768);
  EXPECT_NEAR(uneven.devices[0].compute_s, 768e-6, 1e-12) << "256 rows beside the other's 768: the rest curve";
  EXPECT_NEAR(uneven.devices[1].compute_s, 2304e-6, 1e-12);
  EXPECT_NEAR(uneven.iteration_s, uneven.devices[1].iteration_s, 1e-15);
  EXPECT_NEAR(uneven.devices[1].iteration_s, uneven.devices[1].compute_s + uneven.devices[1].exposed_s, 1e-15);
  // 256 rows beside 512 (a grid of 768): half way from 256 (the curve) to 768 (the rest curve).
  EXPECT_NEAR(at(256, 512).devices[0].compute_s, 0.5 * (512e-6 + 768e-6), 1e-12);
  // Near an equal split the rest curve counts as little as the conditions differ: 24 of half the 1024 rows.
  EXPECT_NEAR(at(500, 524).devices[0].compute_s, 1000e-6 + 24.0 / 512 * 500e-6, 1e-12);
  // A run measured as priced leaves the curves where they are.
  Report r;
  r.nx = 512;
  r.precision = Precision::Double;
  r.iterations = 10;
  r.predicted = uneven;
  for (const DevicePrediction& d : uneven.devices) {
    DeviceReport measured;
    measured.name = d.name;
    measured.rows = d.rows;
    measured.compute_s = 10 * d.compute_s;
    r.devices.push_back(measured);
  }
  EXPECT_EQ(learn(p, r), 2);
  EXPECT_NEAR(p.rate("cpu1", Precision::Double, 512)->seconds(768), 1536e-6, 1e-12);
  EXPECT_NEAR(p.rate("cpu0", Precision::Double, 512)->seconds(256), 512e-6, 1e-12);
  // The rest curve and its rows are kept in the profile's JSON; without them the curve prices every split.
  const Profile q = profile_from_json(to_json(p));
  ASSERT_TRUE(q.rest("cpu0", Precision::Double, 512));
  EXPECT_DOUBLE_EQ(q.rest("cpu0", Precision::Double, 512)->first.seconds(512), 1536e-6);
  EXPECT_EQ(q.rest("cpu0", Precision::Double, 512)->second, 1024);
  EXPECT_FALSE(q.rest("cpu0", Precision::Double, 1024));
  for (auto& [name, d] : p.devices) d.rest.clear();
  EXPECT_NEAR(at(256, 768).devices[1].compute_s, 1536e-6, 1e-12);
}

TEST(Learn, RunsMoveTheCurveButSpikesDoNot) {
  Profile p;
  p.devices["cpu0"].kind = "cpu";
  p.devices["cpu0"].rates[rate_key(Precision::Double, 512)] = RateCurve({{100, 1e-3}, {1000, 10e-3}});
  Report r;
  r.nx = 512;
  r.precision = Precision::Double;
  r.iterations = 100;
  DeviceReport d;
  d.name = "cpu0";
  d.rows = 1000;
  d.compute_s = 100 * 20e-3;  // the device got twice as slow
  r.devices = {d};
  EXPECT_EQ(learn(p, r), 1);
  const double once = p.rate("cpu0", Precision::Double, 512)->seconds(1000);
  EXPECT_NEAR(once, 12.5e-3, 1e-12);
  for (int run = 0; run < 20; ++run) learn(p, r);
  EXPECT_NEAR(p.rate("cpu0", Precision::Double, 512)->seconds(1000), 20e-3, 1e-4) << "it follows a lasting slowdown";
  r.devices[0].compute_s = 100 * 1.0;  // a 1 s spike per iteration
  EXPECT_EQ(learn(p, r), 0);
  r.nx = 1024;  // no curve for this width: nothing to learn
  EXPECT_EQ(learn(p, r), 0);
}

// A float 1024-wide run of 100 iterations: cpu0's rows from row 1, swept in
// `cpu_s` an iteration, then gpu0's (30 us an iteration) to row 1024.
Report cpu_beside_gpu(std::int64_t cpu_rows, double cpu_s) {
  Report r;
  r.nx = 1024;
  r.precision = Precision::Float;
  r.iterations = 100;
  r.devices = {DeviceReport{"cpu0", 1, cpu_rows, 100 * cpu_s, 0, 0, 0},
               DeviceReport{"gpu0", cpu_rows + 1, 1024 - cpu_rows, 100 * 30e-6, 0, 0, 0}};
  return r;
}

// A CPU share that fits a cache in its curve, swept beside a GPU at the curve's
// pace past that cache, is what the prediction's second figure says: no
// slowdown of its own, which would price that figure slower again.
TEST(Learn, ARunAtThePacePastACacheIsNoSlowdown) {
  Profile p = sample_profile();
  p.devices["cpu0"].slowdown_beside_gpus = 1.0;
  p.devices["cpu0"].rates[rate_key(Precision::Float, 1024)] =
      RateCurve({{100, 100e-6}, {200, 200e-6}, {300, 600e-6}, {400, 800e-6}});  // 1 us a row, 2 us from 300 rows
  Report r = cpu_beside_gpu(200, 400e-6);
  EXPECT_EQ(learn(p, r, 0.25), 2);
  EXPECT_DOUBLE_EQ(p.devices["cpu0"].slowdown_beside_gpus, 1.0) << "200 rows at 2 us a row, the pace past the cache";
  r.devices[0].compute_s = 100 * 600e-6;
  learn(p, r, 0.25);
  EXPECT_NEAR(p.devices["cpu0"].slowdown_beside_gpus, 1.5, 1e-12) << "3 us a row: 1.5 times the pace past the cache";
}

// Beside a GPU a CPU device's curve stays (calibrated beside loaded GPUs); its
// slowdown takes the slowest run and forgets a twentieth of it at each faster one.
TEST(Learn, ACpuBesideGpusMovesItsSlowdownNotItsCurve) {
  Profile p = sample_profile();
  p.devices["cpu0"].slowdown_beside_gpus = 1.0;
  const double curve_before = p.rate("cpu0", Precision::Float, 1024)->seconds(512);
  Report r = cpu_beside_gpu(512, 1024e-6);
  EXPECT_EQ(learn(p, r, 0.25), 2);
  EXPECT_DOUBLE_EQ(p.rate("cpu0", Precision::Float, 1024)->seconds(512), curve_before);
  EXPECT_NEAR(p.devices["cpu0"].slowdown_beside_gpus, 2.0, 1e-12) << "1024 us where its curve says 512";
  r.devices[0].compute_s = 100 * 512e-6;  // as fast as its curve
  learn(p, r, 0.25);
  EXPECT_NEAR(p.devices["cpu0"].slowdown_beside_gpus, 1.95, 1e-12);
  r.devices[0].compute_s = 100 * 512e-6 * 5;  // five times slower: no spike, a whole run's average
  learn(p, r, 0.25);
  EXPECT_NEAR(p.devices["cpu0"].slowdown_beside_gpus, 5.0, 1e-12);
  r.devices[0].compute_s = 100 * 512e-6;  // as fast as its curve on average, a tenth of its iterations 6x slower
  r.devices[0].compute_p90_s = 6 * 512e-6;
  learn(p, r, 0.25);
  EXPECT_NEAR(p.devices["cpu0"].slowdown_beside_gpus, 6.0, 1e-12) << "the GPU waits for its slow iterations";
  r.devices[0].compute_p90_s = 0.0;
  r.devices[0].compute_s = 100 * 200e-6;  // faster than its curve: forgets, never below 1
  for (int run = 0; run < 600; ++run) learn(p, r, 0.25);
  EXPECT_NEAR(p.devices["cpu0"].slowdown_beside_gpus, 1.0, 1e-9);
  EXPECT_GE(p.devices["cpu0"].slowdown_beside_gpus, 1.0);
  r.devices.pop_back();  // alone: its curve learns
  r.devices[0].compute_s = 100 * 1024e-6;
  learn(p, r, 0.25);
  EXPECT_GT(p.rate("cpu0", Precision::Float, 1024)->seconds(512), curve_before);
}

}  // namespace
}  // namespace hetstencil

namespace hetstencil {
namespace {

// A GPU's blocked curve is its own; a CPU device sweeps plainly under any
// variant. A blocked split sweeps K - 1 ghost rows a side with a neighbour and
// pays a K-row trip once per K iterations, which a GPU hides behind its interior
// and a CPU device waits for; no device may have fewer than K rows.
TEST(Predict, BlockedSplitsPriceGhostZonesAndOneExchangeARound) {
  Profile p = sample_profile();
  const VariantChoice blocked{Variant::Blocked, 4};
  const std::string key = rate_key(Precision::Float, 1024, blocked);
  EXPECT_EQ(key, "float/1024/blocked-4");
  p.devices["gpu0"].rates[key] = RateCurve({{16, 5e-6}, {1024, 20e-6}});
  p.devices["gpu0"].step[key] = 3e-6;
  EXPECT_DOUBLE_EQ(p.rate("gpu0", Precision::Float, 1024, blocked)->seconds(1024), 20e-6);
  EXPECT_DOUBLE_EQ(p.rate("gpu0", Precision::Float, 2048, blocked)->seconds(1024), 40e-6) << "scaled from its width";
  EXPECT_DOUBLE_EQ(p.rate("cpu0", Precision::Float, 1024, blocked)->seconds(1024), 1024e-6) << "the CPU's sync curve";
  EXPECT_FALSE(p.rate("gpu0", Precision::Float, 1024, {Variant::Blocked, 8}).has_value());

  StopRule stop;
  stop.max_iterations = 100;
  const std::vector<PlannedDevice> devices = {{"cpu0", DeviceKind::Cpu, 0}, {"gpu0", DeviceKind::Gpu, 0}};
  const SplitModel plain(p, devices, Precision::Float, 1024, stop);
  const SplitModel deep(p, devices, Precision::Float, 1024, stop, blocked);
  EXPECT_EQ(plain.min_rows(), 1);
  EXPECT_EQ(deep.min_rows(), 4);
  EXPECT_TRUE(std::isinf(deep.device(0, 3).iteration_s));
  const double row = 1026 * 4;
  const DevicePrediction cpu = deep.device(0, 64), gpu = deep.device(1, 512);
  EXPECT_NEAR(cpu.compute_s, p.rate("cpu0", Precision::Float, 1024)->seconds(64 + 3), 1e-15);
  EXPECT_NEAR(gpu.compute_s, p.rate("gpu0", Precision::Float, 1024, blocked)->seconds(512 + 3), 1e-15);
  // cpu0 pulls 4 rows from gpu0 a round; gpu0 pulls 4 from cpu0 and pushes its 4 to the host.
  EXPECT_NEAR(cpu.exchange_s, (4e-6 + 4 * row / 12e9) / 4, 1e-15);
  EXPECT_NEAR(gpu.exchange_s, (3e-6 + 4 * row / 10e9 + 4e-6 + 4 * row / 12e9) / 4, 1e-15);
  EXPECT_NEAR(cpu.exposed_s, 2e-6 + cpu.exchange_s, 1e-15) << "the CPU's loop, and the exchange waited for";
  EXPECT_GT(gpu.exchange_s, 0.0);
  EXPECT_DOUBLE_EQ(gpu.exposed_s, 0.0) << "the GPU's 4 edge rows travel while its 508 others sweep";
  const DevicePrediction thin = deep.device(1, 8);  // 4 edge rows, an interior of 4
  EXPECT_NEAR(thin.exposed_s, thin.exchange_s, 1e-15) << "an interior as short as the edge rows hides nothing";
  EXPECT_LT(deep.device(1, 512).exchange_s, plain.device(1, 512).exchange_s);
  const Prediction pr = deep.predict({64, 512});
  EXPECT_DOUBLE_EQ(pr.iteration_s, std::max(cpu.iteration_s, gpu.iteration_s));
  EXPECT_THROW(SplitModel(sample_profile(), devices, Precision::Float, 1024, stop, blocked), InvalidArgument)
      << "no blocked curve for the GPU";
}

TEST(Learn, AVariantRunMovesTheVariantsCurveAtTheRowsSwept) {
  Profile p = sample_profile();
  const VariantChoice blocked{Variant::Blocked, 4};
  const std::string key = rate_key(Precision::Float, 1024, blocked);
  p.devices["gpu0"].rates[key] = RateCurve({{16, 5e-6}, {1024, 20e-6}});
  const double sync_before = p.rate("gpu0", Precision::Float, 1024)->seconds(515);
  const double blocked_before = p.rate("gpu0", Precision::Float, 1024, blocked)->seconds(515);
  Report r;
  r.nx = 1024;
  r.precision = Precision::Float;
  r.iterations = 100;
  r.devices = {DeviceReport{"cpu0", 1, 512, 100 * 600e-6, 0, 0, 0}, DeviceReport{"gpu0", 513, 512, 100 * 30e-6, 0, 0, 0}};
  EXPECT_EQ(learn(p, r, 0.5, blocked), 2);
  const double blocked_after = p.rate("gpu0", Precision::Float, 1024, blocked)->seconds(515);
  EXPECT_GT(blocked_after, blocked_before) << "moved towards the 30 us measured at 512 + 3 rows";
  EXPECT_LE(blocked_after, 30e-6);
  EXPECT_DOUBLE_EQ(p.rate("gpu0", Precision::Float, 1024)->seconds(515), sync_before) << "the sync curve stays";
}

}  // namespace
}  // namespace hetstencil
