// A report says when other processes or the hypervisor crowded the solve's cores.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "hetstencil/hetstencil.hpp"

namespace hetstencil {
namespace {

Report measured_beside(HostLoad::Figures load) {
  Report r;
  r.nx = r.ny = 64;
  r.iterations = 10;
  r.solve_s = 0.01;
  r.host.load = load;
  return r;
}

TEST(ReportHost, AQuietHostIsNotMentioned) {
  const Report quiet = measured_beside({0.05, 1.9});
  EXPECT_EQ(host_disturbance(quiet), "");
  EXPECT_EQ(format_report(quiet).find("host:"), std::string::npos) << format_report(quiet);
  EXPECT_EQ(host_disturbance(measured_beside({1.5, 3.0})), "") << "a daemon on a spare core takes none";
  const Report unmeasured = measured_beside({-1.0, 0.0});
  EXPECT_EQ(host_disturbance(unmeasured), "");
  const nlohmann::json j = nlohmann::json::parse(to_json(unmeasured));
  EXPECT_TRUE(j.at("host").at("others_cores").is_null());
  EXPECT_TRUE(j.at("host").at("idle_cores").is_null());
  EXPECT_TRUE(j.at("host").at("stolen_cores").is_null());
}

TEST(ReportHost, OtherProcessesCrowdingTheSolveAreSaid) {
  const Report crowded = measured_beside({1.5, 0.2});
  const std::string said = host_disturbance(crowded);
  EXPECT_NE(said.find("other processes took 1.5 cores while it ran (0.2 left idle)"), std::string::npos) << said;
  EXPECT_NE(format_report(crowded).find("host: other processes took"), std::string::npos) << format_report(crowded);
  const nlohmann::json j = nlohmann::json::parse(to_json(crowded));
  EXPECT_EQ(j.at("host").at("others_cores").get<double>(), 1.5);
  EXPECT_EQ(j.at("host").at("idle_cores").get<double>(), 0.2);
  EXPECT_EQ(j.at("host").at("disturbance").get<std::string>(), said);
}

TEST(ReportHost, WhatTheHypervisorTookIsSaid) {
  const Report stolen = measured_beside({0.0, 20.0, 4.4});
  const std::string said = host_disturbance(stolen);
  EXPECT_NE(said.find("the hypervisor took 4.4 cores' worth of the machine's CPUs"), std::string::npos) << said;
  const nlohmann::json j = nlohmann::json::parse(to_json(stolen));
  EXPECT_EQ(j.at("host").at("stolen_cores").get<double>(), 4.4);
  EXPECT_EQ(j.at("host").at("disturbance").get<std::string>(), said);
}

}  // namespace
}  // namespace hetstencil
