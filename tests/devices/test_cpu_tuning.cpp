// The tuning seam on a CPU device: the kernel parameters it lists for a job,
// and its refusal of values it does not take.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "core/timing_grid.hpp"
#include "devices/backend.hpp"
#include "devices/cpu/cpu_device.hpp"
#include "devices/cpu/jacobi_kernels.hpp"
#include "hetstencil/error.hpp"

namespace hetstencil {
namespace {

MachineDevices one_cpu_device() {
  return make_devices(load_topology(TopologySource{"", "pack:1 numa:1 core:2 pu:1"}),
                      DeviceMapOptions{1, 2, "", false, {}});
}

StencilJob job_of(const std::string& stencil) {
  StencilJob job;
  job.precision = Precision::Double;
  job.stencil = Stencil::builtin(stencil);
  job.poisson5 = stencil == "poisson5";
  job.nx = 16;
  job.ny = 12;
  job.nz = job.stencil.dimension == 3 ? 10 : 0;
  return job;
}

std::vector<std::string> names_of(const std::vector<Tunable>& tunables) {
  std::vector<std::string> out;
  for (const Tunable& t : tunables) out.push_back(t.name);
  return out;
}

TEST(CpuTuning, ACpuDeviceListsItsParametersForEachKindOfStencil) {
  MachineDevices m = one_cpu_device();
  const Device& device = *m.devices.front();
  EXPECT_EQ(names_of(device.tunables(job_of("poisson5"))), (std::vector<std::string>{"threads", "streaming"}));
  EXPECT_EQ(names_of(device.tunables(job_of("box9"))),
            (std::vector<std::string>{"threads", "streaming", "chunk_values", "points_per_pass"}));
  EXPECT_EQ(names_of(device.tunables(job_of("box27"))),
            (std::vector<std::string>{"threads", "streaming", "chunk_values", "points_per_pass", "tile_kib",
                                      "tile_rows_per_radius"}));
  for (const std::string stencil : {"poisson5", "box9", "poisson7", "box27", "star4"}) {
    for (const Tunable& t : device.tunables(job_of(stencil))) {
      SCOPED_TRACE(stencil + " " + t.name);
      EXPECT_GE(t.values.size(), 2u);
      EXPECT_NE(std::find(t.values.begin(), t.values.end(), t.default_value), t.values.end());
      EXPECT_TRUE(std::is_sorted(t.values.begin(), t.values.end()));
    }
  }
  const auto threads = device.tunables(job_of("poisson5")).front();
  EXPECT_EQ(threads.default_value, device.info().threads);
  EXPECT_EQ(threads.values, (std::vector<int>{1, 2}));
  // A larger team: an eighth, a quarter, a half, 3/4, 7/8 and all of it.
  MachineDevices sixteen = make_devices(load_topology(TopologySource{"", "pack:1 numa:1 core:16 pu:1"}),
                                        DeviceMapOptions{1, 0, "", false, {}});
  EXPECT_EQ(sixteen.devices.front()->tunables(job_of("box9")).front().values,
            (std::vector<int>{2, 4, 8, 12, 14, 16}));
}

TEST(CpuTuning, AttachRefusesAParameterOrValueTheDeviceDoesNotTake) {
  MachineDevices m = one_cpu_device();
  Device& device = *m.devices.front();
  const Grid<double> grid = timing_grid<double>(12, 16);
  StencilJob job = job_of("poisson5");
  job.initial = grid.data();
  job.tuning = {{"chunk_values", 512}};
  try {
    device.attach(job, RowRange{1, 12});
    FAIL() << "poisson5's kernels took a chunk size";
  } catch (const InvalidArgument& e) {
    const std::string why = e.what();
    EXPECT_NE(why.find("cpu0 has no kernel parameter 'chunk_values' for this job (it tunes: threads, streaming)"),
              std::string::npos)
        << why;
  }
  job.tuning = {{"threads", 3}};
  try {
    device.attach(job, RowRange{1, 12});
    FAIL() << "3 threads of 2 were taken";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("cpu0: the kernel parameter 'threads' takes 1, 2, not 3"), std::string::npos)
        << e.what();
  }
  job.tuning = {{"threads", 1}};
  device.attach(job, RowRange{1, 12});
  EXPECT_FALSE(device.sweep_vs_copy(job, 1).skipped);
  device.detach();
}

// A slab far larger than the device's cache streams its stores where tuned
// to; by default for double and poisson5, not for another float stencil.
TEST(CpuTuning, StreamingStoresAreATunedChoice) {
  MachineDevices m = make_devices(load_topology(TopologySource{"", "pack:1 numa:1 l3:1 core:2 pu:1"}),
                                  DeviceMapOptions{1, 2, "", false, {}});
  auto& device = static_cast<CpuDevice&>(*m.devices.front());
  StencilJob job = job_of("box9");
  job.nx = 2048;
  job.ny = 2048;
  const Grid<double> grid = timing_grid<double>(job.ny, job.nx);
  job.initial = grid.data();
  for (int streaming : {1, 0}) {
    job.tuning = {{"streaming", streaming}};
    device.attach(job, RowRange{1, job.ny});
    EXPECT_EQ(device.streaming_stores(), streaming == 1 && kHasStreamingStores) << "streaming=" << streaming;
    device.detach();
  }
  const auto streaming_default = [&](const std::string& stencil, Precision precision) {
    StencilJob j = job_of(stencil);
    j.precision = precision;
    for (const Tunable& t : device.tunables(j)) {
      if (t.name == "streaming") return t.default_value;
    }
    return -1;
  };
  EXPECT_EQ(streaming_default("box9", Precision::Double), 1);
  EXPECT_EQ(streaming_default("poisson7", Precision::Double), 1);
  EXPECT_EQ(streaming_default("poisson5", Precision::Float), 1);
  EXPECT_EQ(streaming_default("box9", Precision::Float), 0);
  EXPECT_EQ(streaming_default("star4", Precision::Float), 0);
}

}  // namespace
}  // namespace hetstencil
