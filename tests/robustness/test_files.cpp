// Files, profiles and topologies: input files that are corrupt, truncated,
// empty, binary, of the wrong shape or describing a huge machine.
#include <unistd.h>

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/robustness/common_args.hpp"
#include "tests/robustness/harness.hpp"

namespace hetstencil::robustness {
namespace {

using nlohmann::json;

// Contents no reader of a JSON file may crash or hang on.
std::vector<std::string> bad_json() {
  return {"",
          "{",
          "not json at all",
          std::string("\x00\x01\x02\xff\xfe binary", 13),
          R"({"nx": 8, "ny": 8, "precision": "dou)",
          R"({"nx": 1e400, "ny": 8})",
          R"({"nx": 99999999999999999999999, "ny": 8})",
          R"({"nx": "8", "ny": [], "devices": {}})",
          "[]",
          "42",
          "null",
          R"({"format": "hetstencil-profile-999", "devices": {}})",
          std::string(100000, '[') + std::string(100000, ']')};
}

std::string plan_json(const std::string& devices, std::int64_t ny) {
  return R"({"nx": 8, "ny": )" + std::to_string(ny) + R"(, "precision": "double", "devices": [)" + devices + "]}";
}

TEST(RobustFiles, SavedPlansThatAreNotPlans) {
  Sandbox box;
  for (const std::string& text : bad_json()) {
    cli_case(box, "files", with(quick_solve(), "--plan", box.write("plan.json", text).string()), Expect::Fails);
  }
  const std::string big = "9223372036854775807";
  for (const std::string& text :
       {plan_json(R"({"name": "cpu0", "rows": )" + big + R"(}, {"name": "cpu1", "rows": )" + big + "}", -2),
        plan_json(R"({"name": "cpu0", "rows": 12}, {"name": "cpu1", "rows": -4})", 8),
        plan_json(R"({"name": "cpu0", "rows": 0}, {"name": "cpu1", "rows": 8})", 8),
        plan_json(R"({"name": "gpu7", "rows": 8})", 8), plan_json("", 8), plan_json(R"({"name": 5, "rows": "8"})", 8)}) {
    cli_case(box, "files", with(quick_solve(), "--plan", box.write("plan.json", text).string()), Expect::Fails);
  }
  cli_case(box, "files",
           with(quick_solve(), "--plan", box.write("plan.json", plan_json(R"({"name": "cpu0", "rows": 3}, {"name": "cpu1", "rows": 5})", 8)).string()));
}

TEST(RobustFiles, ProfilesThatAreNotProfilesAreReportedAndKept) {
  Sandbox box;
  for (const std::string& text : bad_json()) {
    const std::string profile = box.write("profile.json", text).string();
    cli_case(box, "files", {"plan", "--profile", profile, "--nx", "64", "--iters", "10"}, Expect::Fails);
    cli_case(box, "files", {"predict", "--profile", profile, "--nx", "64", "--iters", "10"}, Expect::Fails);
    cli_case(box, "files", {"profile", "show", "--profile", profile}, Expect::Fails);
    cli_case(box, "files", {"calibrate", "--nx", "16", "--max-rows", "16", "--budget", "2", "--devices", "cpu", "--cpu-devices",
                            "1", "--threads", "1", "--profile", profile});
    check_kept("files", "calibrate over a file that is not a profile", text.empty() || some_file_holds(box.root(), text),
               "the old file is gone (no .bad copy)");
  }
}

TEST(RobustFiles, TopologyFilesThatAreNotTopologies) {
  Sandbox box;
  const std::string fixture = read_file(std::string(HETSTENCIL_FIXTURES) + "/topology/two_sockets_four_gpus.xml");
  std::vector<std::string> texts = bad_json();
  texts.push_back(fixture.substr(0, fixture.size() / 2));
  texts.push_back("<topology>");
  texts.push_back(R"(<?xml version="1.0"?><topology version="2.0"><object type="Machine" os_index="0"/></topology>)");
  texts.push_back(R"(<?xml version="1.0"?><!DOCTYPE t [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">)"
                  R"(<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">]><topology>&d;</topology>)");
  for (const std::string& text : texts) {
    const std::string file = box.write("machine.xml", text).string();
    cli_case(box, "files", {"probe", "--topology", file}, Expect::Fails, within(20));
  }
  cli_case(box, "files", {"probe", "--topology", box.root().string()}, Expect::Fails, within(20));
}

// The fixture profile with every curve of cpu0 replaced by `curve`.
std::string fixture_with_cpu0_curves(const Sandbox& box, const json& curve) {
  json j = json::parse(read_file(copy_fixture_profile(box)));
  for (const char* table : {"rates", "checks"}) {
    for (auto& [key, value] : j["devices"]["cpu0"][table].items()) value = curve;
  }
  return box.write("profile.json", j.dump(2)).string();
}

TEST(RobustProfiles, CurvesWithoutPointsOrWithPointsThatAreNotNumbers) {
  Sandbox box;
  for (const json& curve : {json::array(), json::parse("[[64, null]]"), json::parse("[[64, -1]]"), json::parse("[[0, 0]]"),
                            json::parse("[[64, 1e308], [64, 1e-308]]"), json::parse("[[64, 0.1]]"),
                            json::parse(R"([["a", "b"]])"), json::parse("[[64]]"), json("curve"), json(nullptr)}) {
    const std::string profile = fixture_with_cpu0_curves(box, curve);
    cli_case(box, "profiles", {"plan", "--profile", profile, "--nx", "16384", "--iters", "100"});
    cli_case(box, "profiles", {"predict", "--profile", profile, "--nx", "16384", "--iters", "100"});
    cli_case(box, "profiles", {"profile", "show", "--profile", profile});
  }
}

std::string host_name() {
  char name[256] = {};
  return gethostname(name, sizeof(name) - 1) == 0 ? name : "unknown-host";
}

const Args kLearningSolve = {"solve", "--devices", "cpu", "--cpu-devices", "2", "--threads", "1", "--nx", "16", "--iters", "3",
                             "--budget", "3"};

TEST(RobustProfiles, AForeignProfileIsKeptNotSilentlyReplaced) {
  Sandbox box;
  const std::string foreign = read_file(copy_fixture_profile(box));
  fs::remove(box.path("eight_gpus.json"));
  box.write("cache/hetstencil/" + host_name() + ".json", foreign);
  cli_case(box, "profiles", kLearningSolve);
  check_kept("profiles", "a solve beside a foreign profile", some_file_holds(box.root(), foreign), "the foreign profile is gone");
}

TEST(RobustProfiles, EmptiedCurvesDoNotBreakLaterSolves) {
  Sandbox box;
  const Outcome first = cli_case(box, "profiles", kLearningSolve, Expect::Success);
  const fs::path path = box.cache() / "hetstencil" / (host_name() + ".json");
  ASSERT_TRUE(fs::exists(path)) << "no profile at " << path << "\n" << first.err;
  json j = json::parse(read_file(path));
  // Every curve table's curves emptied, wherever the format keeps them.
  std::function<void(json&)> empty = [&](json& node) {
    if (!node.is_object()) return;
    for (auto& [key, value] : node.items()) {
      if ((key == "rates" || key == "checks") && value.is_object()) {
        for (auto& [k, curve] : value.items()) curve = json::array();
      } else {
        empty(value);
      }
    }
  };
  empty(j);
  box.write("cache/hetstencil/" + host_name() + ".json", j.dump());
  cli_case(box, "profiles", kLearningSolve, Expect::Success);
  cli_case(box, "profiles", kLearningSolve, Expect::Success);
}

TEST(RobustTopologies, HugeSyntheticMachinesProbeQuickly) {
  Sandbox box;
  for (const char* machine : {"pack:16 numa:1 core:32 pu:2", "pack:16 numa:2 core:64 pu:2", "pack:2 core:1024 pu:1"}) {
    cli_case(box, "topologies", {"probe", "--synthetic", machine}, Expect::Success, within(5));
    cli_case(box, "topologies", {"probe", "--json", "--synthetic", machine}, Expect::Success, within(5));
    cli_case(box, "topologies", with(with(with(quick_solve(), "--synthetic", machine), "--cpu-devices", "0"), "--nx", "64"),
             Expect::Any, within(20));
  }
}

TEST(RobustTopologies, SyntheticDescriptionsThatDescribeNoMachine) {
  Sandbox box;
  for (const char* machine : {"pack:0", "pack:-1", "pack:2 core:0", "numa:1 pack:2", "core:", "pack:zero", "pu:1 pu:1",
                              "pack:2 numa:1 core:3 pu:1 junk"}) {
    cli_case(box, "topologies", {"probe", "--synthetic", machine}, Expect::Fails, within(20));
  }
  cli_case(box, "topologies", with(quick_solve(), "--synthetic", "pack:0"), Expect::Fails, within(20));
}

}  // namespace
}  // namespace hetstencil::robustness
