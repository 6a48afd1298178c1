// A report puts the run's set-up beside its prediction.
#include <gtest/gtest.h>

#include <string>

#include "hetstencil/hetstencil.hpp"

namespace hetstencil {
namespace {

TEST(ReportRun, TheRunsSetUpIsShownBesideItsPrediction) {
  Report r;
  r.nx = r.ny = 4096;
  r.iterations = 20;
  r.solve_s = 0.19;
  r.setup_s = 0.2765;
  r.teardown_s = 0.0088;
  r.devices = {{"cpu0", 1, 4096, r.solve_s, 0.0, 0.0, r.solve_s}};
  Prediction p;
  p.iterations = 20;
  p.iteration_s = 0.0096;
  p.setup_s = 0.0117;
  p.total_s = 0.2040;
  DevicePrediction cpu;
  cpu.name = "cpu0";
  cpu.compute_s = cpu.iteration_s = p.iteration_s;
  p.devices = {cpu};
  r.predicted = p;
  const std::string text = format_report(r);
  EXPECT_NE(text.find("the run predicted 0.2040 s, measured 0.4753 s (-57.1%), its set-up 0.0117 s against 0.2765"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace hetstencil
