// A report names the devices whose sweeps ran well past their prediction.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

#include "hetstencil/hetstencil.hpp"

namespace hetstencil {
namespace {

// cpu0 and gpu0, 100 iterations: measured sweeping `cpu_ms` and `gpu_ms` an
// iteration, against predictions of 0.5 and 0.6 ms.
Report swept(double cpu_ms, double gpu_ms, bool predicted = true) {
  Report r;
  r.nx = r.ny = 1024;
  r.iterations = 100;
  r.solve_s = 100 * std::max(cpu_ms, gpu_ms) * 1e-3;
  r.devices = {{"cpu0", 1, 100, 100 * cpu_ms * 1e-3, 0.0, 0.0, r.solve_s},
               {"gpu0", 101, 924, 100 * gpu_ms * 1e-3, 0.0, 0.0, r.solve_s}};
  if (predicted) {
    Prediction p;
    p.iterations = 100;
    p.iteration_s = 0.6e-3;
    DevicePrediction cpu, gpu;
    cpu.name = "cpu0";
    cpu.compute_s = cpu.iteration_s = 0.5e-3;
    gpu.name = "gpu0";
    gpu.compute_s = gpu.iteration_s = 0.6e-3;
    p.devices = {cpu, gpu};
    r.predicted = p;
  }
  return r;
}

TEST(ReportSlowSweeps, SweepsNearTheirPredictionAreNotMentioned) {
  const Report near = swept(0.6, 0.65);  // 1.2 and 1.08 times
  EXPECT_EQ(slow_sweeps(near), "");
  EXPECT_EQ(format_report(near).find("slow sweeps:"), std::string::npos) << format_report(near);
  EXPECT_EQ(nlohmann::json::parse(to_json(near)).at("slow_sweeps").get<std::string>(), "");
  EXPECT_EQ(slow_sweeps(swept(2.0, 0.6, false)), "") << "nothing predicted, nothing to compare";
  EXPECT_EQ(slow_sweeps(swept(0.62, 0.6)), "") << "1.24 times";
  EXPECT_EQ(slow_sweeps(swept(0.63, 0.6)), "cpu0 swept 1.26 times its prediction (0.6300 against 0.5000 ms an iteration)");
  Report unpredicted = swept(0.5, 0.6);
  unpredicted.devices.push_back({"cpu1", 1025, 0, 1.0, 0.0, 0.0, unpredicted.solve_s});
  EXPECT_EQ(slow_sweeps(unpredicted), "") << "a device the prediction does not have is not compared";
}

TEST(ReportSlowSweeps, ASlowDeviceIsNamedWithItsFigures) {
  const Report slow = swept(1.75, 0.6);
  const std::string said = slow_sweeps(slow);
  EXPECT_EQ(said, "cpu0 swept 3.50 times its prediction (1.7500 against 0.5000 ms an iteration)");
  EXPECT_NE(format_report(slow).find("slow sweeps: " + said), std::string::npos) << format_report(slow);
  EXPECT_EQ(nlohmann::json::parse(to_json(slow)).at("slow_sweeps").get<std::string>(), said);
  const std::string both = slow_sweeps(swept(0.65, 0.9));
  EXPECT_EQ(both, "cpu0 swept 1.30 times its prediction (0.6500 against 0.5000 ms an iteration); "
                  "gpu0 swept 1.50 times its prediction (0.9000 against 0.6000 ms an iteration)");
}

}  // namespace
}  // namespace hetstencil
