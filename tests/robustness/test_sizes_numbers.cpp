// Sizes and numbers: every numeric option with values at and past its edges.
#include <string>
#include <vector>

#include "tests/robustness/common_args.hpp"
#include "tests/robustness/harness.hpp"

namespace hetstencil::robustness {
namespace {

const std::string k2p31 = "2147483648";
const std::string k2p63m1 = "9223372036854775807";
const std::string k2p63 = "9223372036854775808";
const std::string kDigits309 = "1" + std::string(308, '0');

TEST(RobustSizes, GridSizesAtAndPastTheEdges) {
  Sandbox box;
  for (const char* option : {"--nx", "--ny"}) {
    for (const std::string& v : Args{"1", std::string("2")}) cli_case(box, "sizes", with(quick_solve(), option, v));
    for (const std::string& v : Args{"0", std::string("-1"), k2p63, "18446744073709551616"}) {
      cli_case(box, "sizes", with(quick_solve(), option, v), Expect::Refused);
    }
    // Grids no machine holds (or whose cell count overflows): refused before
    // anything is allocated.
    for (const std::string& v : Args{k2p31, k2p63m1}) {
      cli_case(box, "sizes", with(with(quick_solve(), "--nx", v), "--ny", v), Expect::Fails);
    }
  }
  cli_case(box, "sizes", with(with(quick_solve(), "--nx", "4294967296"), "--ny", "4294967296"), Expect::Fails);
  cli_case(box, "sizes", with(with(quick_solve(), "--nx", "1"), "--ny", k2p63m1), Expect::Fails);
}

TEST(RobustSizes, CountsAtAndPastTheEdges) {
  Sandbox box;
  cli_case(box, "sizes", with(quick_solve(), "--iters", "1"), Expect::Success);
  cli_case(box, "sizes", with(quick_solve(), "--iters", "0"));
  for (const char* option : {"--iters", "--threads", "--cpu-devices"}) {
    for (const std::string& v : Args{"-1", k2p63, kDigits309}) {
      cli_case(box, "sizes", with(quick_solve(), option, v), Expect::Refused);
    }
  }
  for (const std::string& v : Args{k2p31, k2p63m1}) {
    cli_case(box, "sizes", with(quick_solve(), "--threads", v), Expect::Fails);
    cli_case(box, "sizes", with(quick_solve(), "--cpu-devices", v), Expect::Fails);
  }
  cli_case(box, "sizes", with(quick_solve(), "--cpu-devices", "9"), Expect::Fails);  // more devices than rows
  for (const std::string& v : Args{"0", std::string("1"), k2p63m1, std::string("-1")}) {
    cli_case(box, "sizes", with(with(quick_solve(), "--tol", "1e-3"), "--check-every", v));
  }
}

TEST(RobustSizes, BlockedDepthsAgainstSmallSlabs) {
  Sandbox box;
  // One device whose rows are fewer than the depth, odd iteration counts.
  cli_case(box, "sizes", {"solve", "--no-calibrate", "--nx", "8", "--ny", "2", "--variant", "blocked", "--depth", "4", "--iters", "3"});
  for (const std::string& depth : Args{"1", "2", "3", "4", "5", "8"}) {
    for (const std::string& iters : Args{"1", "3", "7"}) {
      cli_case(box, "sizes", with(with(with(quick_solve(), "--variant", "blocked"), "--depth", depth), "--iters", iters));
    }
  }
  for (const std::string& depth : Args{"0", "9", "-1", k2p31.c_str()}) {
    cli_case(box, "sizes", with(with(quick_solve(), "--variant", "blocked"), "--depth", depth), Expect::Refused);
  }
}

TEST(RobustSizes, HugeGridsForCalibrateAndBench) {
  Sandbox box;
  cli_case(box, "sizes", {"calibrate", "--nx", k2p63m1, "--budget", "5", "--devices", "cpu"}, Expect::Fails);
  cli_case(box, "sizes", {"calibrate", "--nx", k2p31, "--budget", "5", "--devices", "cpu"}, Expect::Fails);
  cli_case(box, "sizes", {"calibrate", "--nx", "16", "--max-rows", k2p63m1, "--budget", "5", "--devices", "cpu"});
  cli_case(box, "sizes", {"bench", "cpu", "--nx", k2p63m1, "--ny", k2p63m1, "--reps", "1"}, Expect::Fails);
  cli_case(box, "sizes", {"bench", "cpu", "--nx", k2p31, "--ny", k2p31, "--reps", "1"}, Expect::Fails);
  cli_case(box, "sizes", {"bench", "cpu", "--nx", "1", "--ny", "1", "--reps", "1"});
}

TEST(RobustSizes, PlanningIsClosedFormForAnyIterationCount) {
  Sandbox box;
  const std::string profile = copy_fixture_profile(box);
  // 7 or more devices plan (eight GPUs and two sockets here).
  cli_case(box, "sizes", {"plan", "--profile", profile, "--nx", "2048", "--ny", "2048", "--iters", "100"}, Expect::Success);
  for (const std::string& iters : Args{"1000000000", k2p63m1}) {
    RunOptions quick;
    quick.timeout_s = 10;
    for (const char* command : {"plan", "predict"}) {
      cli_case(box, "sizes", {command, "--profile", profile, "--nx", "2048", "--iters", iters, "--tol", "1e-6"}, Expect::Any, quick);
    }
  }
}

TEST(RobustSizes, RowCountsThatOverflowOrAreNotCounts) {
  Sandbox box;
  const std::string profile = copy_fixture_profile(box);
  for (const std::string& rows : Args{k2p63m1 + "," + k2p63m1, "4,-4", "12,-4", "-1,9", k2p63 + ",1"}) {
    cli_case(box, "sizes", with(quick_solve(), "--rows", rows), Expect::Refused);
  }
  for (const std::string& split : Args{"1e308,1e308", "-1,2", "0,0", "1e-320,1"}) {
    cli_case(box, "sizes", with(quick_solve(), "--split", split));
  }
  for (const std::string& rows : Args{"105,-5", "-5,105", k2p63m1 + "," + k2p63m1}) {
    cli_case(box, "sizes", {"predict", "--cpu-devices", "2", "--devices", "cpu", "--nx", "100", "--rows", rows}, Expect::Fails);
  }
  // A device given no rows is left out, not infinitely slow.
  const Outcome o = cli_case(box, "sizes", {"predict", "--profile", profile, "--nx", "100", "--ny", "100", "--rows", "100,0,0,0,0,0,0,0,0,0"});
  EXPECT_EQ(o.out.find("inf"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("nan"), std::string::npos) << o.out;
}

TEST(RobustNumbers, IntegerOptionsRefuseWhatIsNotAnInteger) {
  Sandbox box;
  for (const std::string& v : Args{"nan", std::string("inf"), std::string("-inf"), std::string("1e309"), kDigits309,
                               std::string(""), std::string(" "), std::string("16abc"), std::string("-5"),
                               std::string("4.5"), std::string("-0"), std::string("0x"), std::string("1,2")}) {
    cli_case(box, "numbers", with(quick_solve(), "--nx", v), Expect::Refused);
  }
  for (const std::string& v : Args{"0x10", " 16", "16 ", "+16", "1e1", "010"}) cli_case(box, "numbers", with(quick_solve(), "--nx", v));
}

TEST(RobustNumbers, RealOptionsRefuseWhatIsNotAUsableNumber) {
  Sandbox box;
  for (const std::string& v : Args{"nan", "-nan", "inf", "-1", "0", "-0", "1e309", "", "0.1abc", "0x1p-3z"}) {
    cli_case(box, "numbers", with(quick_solve(), "--tol", v), Expect::Refused);
  }
  for (const std::string& v : Args{"nan", "-1", "0", "-0", "", "1e309", "-inf"}) {
    cli_case(box, "numbers", {"calibrate", "--nx", "16", "--devices", "cpu", "--budget", v}, Expect::Refused);
    cli_case(box, "numbers", with(quick_solve(), "--budget", v), Expect::Refused);
  }
  for (const std::string& v : Args{"nan", "inf", "-0", "1e309", "1e-320"}) cli_case(box, "numbers", with(quick_solve(), "--boundary", v));
  for (const std::string& v : Args{"nan,1", "inf,1", "1e309,1", ",", "1,,1", "0.5", "abc,1"}) {
    cli_case(box, "numbers", with(quick_solve(), "--split", v), Expect::Refused);
  }
  for (const std::string& v : Args{"4,abc", "4,", "4,4.5", "1e3,1", ""}) {
    cli_case(box, "numbers", with(quick_solve(), "--rows", v), Expect::Refused);
  }
}

TEST(RobustNumbers, WordsAndListsAsTheParserTakesThem) {
  Sandbox box;
  cli_case(box, "numbers", {"explode"}, Expect::Refused);
  cli_case(box, "numbers", {"--version"}, Expect::Success);
  cli_case(box, "numbers", plus(quick_solve(), {"-v"}), Expect::Success);  // -v after the subcommand
  for (const std::string& v : Args{"", "half", "double "}) cli_case(box, "numbers", with(quick_solve(), "--precision", v), Expect::Refused);
  for (const std::string& v : Args{"", "wild", "blocked,sync"}) cli_case(box, "numbers", with(quick_solve(), "--variant", v), Expect::Refused);
  for (const std::string& v : Args{"-cpu0,-cpu1", "cpu9", "\xff\xfe", "gpu"}) cli_case(box, "numbers", with(quick_solve(), "--devices", v));
  cli_case(box, "numbers", {"bench", "gpu", "--sizes", "16384,32768", "--reps", "1"});
  cli_case(box, "numbers", {"bench", "variants", "--sizes", "64,abc"}, Expect::Refused);
  cli_case(box, "numbers", {"sweep", "--nx", "16", "--from", "nan", "--to", "1", "--no-calibrate"}, Expect::Refused);
  cli_case(box, "numbers", {"sweep", "--nx", "16", "--step", "1e-300", "--no-calibrate"}, Expect::Any, within(30));
}

}  // namespace
}  // namespace hetstencil::robustness
