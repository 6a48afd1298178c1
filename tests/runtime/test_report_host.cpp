// A report says when the host was not as calibrated: other processes crowding
// the solve, or the host's canary apart from the calibration's.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "hetstencil/hetstencil.hpp"

namespace hetstencil {
namespace {

Report measured_on(HostLoad::Figures load, double canary, double calibrated) {
  Report r;
  r.nx = r.ny = 64;
  r.iterations = 10;
  r.solve_s = 0.01;
  r.host.load = load;
  r.host.canary_bytes_per_s = canary;
  r.host.calibrated_canary_bytes_per_s = calibrated;
  return r;
}

TEST(ReportHost, AQuietHostAsCalibratedIsNotMentioned) {
  const Report quiet = measured_on({0.05, 1.9}, 40e9, 38e9);
  EXPECT_EQ(host_disturbance(quiet), "");
  EXPECT_EQ(format_report(quiet).find("host:"), std::string::npos) << format_report(quiet);
  const Report unmeasured = measured_on({-1.0, 0.0}, 0.0, 40e9);
  EXPECT_EQ(host_disturbance(unmeasured), "");
  const nlohmann::json j = nlohmann::json::parse(to_json(unmeasured));
  EXPECT_TRUE(j.at("host").at("others_cores").is_null());
  EXPECT_TRUE(j.at("host").at("canary_bytes_per_s").is_null());
  EXPECT_EQ(j.at("host").at("calibration_canary_bytes_per_s").get<double>(), 40e9);
}

TEST(ReportHost, OtherProcessesCrowdingTheSolveAreSaid) {
  const Report crowded = measured_on({1.5, 0.2}, 40e9, 40e9);
  const std::string said = host_disturbance(crowded);
  EXPECT_NE(said.find("other processes took 1.5 cores while it ran (0.2 left idle)"), std::string::npos) << said;
  EXPECT_NE(format_report(crowded).find("host: the host was not as calibrated"), std::string::npos)
      << format_report(crowded);
  const nlohmann::json j = nlohmann::json::parse(to_json(crowded));
  EXPECT_EQ(j.at("host").at("others_cores").get<double>(), 1.5);
  EXPECT_EQ(j.at("host").at("disturbance").get<std::string>(), said);
  EXPECT_EQ(host_disturbance(measured_on({1.5, 3.0}, 40e9, 40e9)), "") << "a daemon on a spare core takes none";
}

TEST(ReportHost, ACanaryApartFromTheCalibrationsIsSaid) {
  const std::string slower = host_disturbance(measured_on({0.0, 2.0}, 20e9, 40e9));
  EXPECT_NE(slower.find("canary ran at 20.0 GB/s after the iterations against 40.0 GB/s"), std::string::npos) << slower;
  EXPECT_NE(slower.find("(slower now)"), std::string::npos) << slower;
  EXPECT_NE(host_disturbance(measured_on({0.0, 2.0}, 60e9, 40e9)).find("(faster now)"), std::string::npos);
  EXPECT_EQ(host_disturbance(measured_on({0.0, 2.0}, 48e9, 40e9)), "") << "within kCanariesApart";
  EXPECT_TRUE(canaries_apart(51e9, 40e9));
  EXPECT_FALSE(canaries_apart(40e9, 49e9));
}

}  // namespace
}  // namespace hetstencil
