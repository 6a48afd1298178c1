// The auto-tuner's search and the tuned parameters' place in the profile:
// what counts as faster (beyond the spread), what is kept, what is refused,
// and that they survive a save and belong to the machine that measures them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "hetstencil/logging.hpp"
#include "model/profile.hpp"
#include "model/tune.hpp"

namespace hetstencil {
namespace {

namespace fs = std::filesystem;

const std::vector<Tunable> kTunables = {{"chunk_values", {64, 256, 1024}, 256}, {"threads", {1, 2}, 2}};

// Whether `t` gives `name` the value `value`.
bool names(const Tuning& t, const std::string& name, int value) {
  const auto it = t.find(name);
  return it != t.end() && it->second == value;
}

// Samples of a sweep whose median is `seconds`, spread by +-`noise`.
std::vector<double> around(double seconds, double noise) {
  return {seconds - noise, seconds, seconds + noise, seconds, seconds - noise, seconds + noise, seconds};
}

TEST(TuneSearch, KeepsAValueThatBeatsTheDefaultsBeyondTheSpread) {
  std::vector<Tuning> asked;
  const TuneOutcome out = search_tuning(
      kTunables,
      [&](const Tuning& t) {
        asked.push_back(t);
        const bool fast = names(t, "chunk_values", 1024);
        return around(fast ? 1.0 : 2.0, 0.05);
      },
      {});
  EXPECT_EQ(out.chosen, (Tuning{{"chunk_values", 1024}}));
  EXPECT_DOUBLE_EQ(out.default_s, 2.0);
  EXPECT_DOUBLE_EQ(out.tuned_s, 1.0);
  EXPECT_FALSE(out.out_of_time);
  ASSERT_FALSE(asked.empty());
  EXPECT_TRUE(asked.front().empty()) << "the defaults are measured first";
  // The winner is measured again beside the defaults, last.
  EXPECT_EQ(asked.back(), (Tuning{{"chunk_values", 1024}}));
  EXPECT_TRUE(asked[asked.size() - 2].empty());
  EXPECT_EQ(out.candidates, static_cast<int>(asked.size()));
}

TEST(TuneSearch, AGainWithinTheSpreadKeepsTheDefaults) {
  const TuneOutcome out = search_tuning(
      kTunables,
      [](const Tuning& t) { return around(t.empty() ? 2.0 : 1.9, 0.2); },
      {});
  EXPECT_TRUE(out.chosen.empty());
  EXPECT_DOUBLE_EQ(out.tuned_s, out.default_s);
  EXPECT_GT(out.spread_s, 0.0);
}

TEST(TuneSearch, AGainThatDoesNotHoldBesideTheDefaultsIsDropped) {
  int calls = 0;
  // Faster during the search, as fast as the defaults when measured again.
  const TuneOutcome out = search_tuning(
      kTunables,
      [&](const Tuning& t) {
        ++calls;
        const bool candidate = names(t, "threads", 1);
        return around(candidate && calls < 8 ? 1.0 : 2.0, 0.01);
      },
      {});
  EXPECT_TRUE(out.chosen.empty());
  EXPECT_DOUBLE_EQ(out.tuned_s, out.default_s);
}

TEST(TuneSearch, TheBudgetEndsTheSearchAndSaysSo) {
  TuneSearchOptions o;
  o.budget_s = 1e-9;
  int calls = 0;
  const TuneOutcome out = search_tuning(
      kTunables,
      [&](const Tuning&) {
        ++calls;
        return around(1.0, 0.0);
      },
      o);
  EXPECT_EQ(calls, 1) << "the defaults only";
  EXPECT_TRUE(out.out_of_time);
  EXPECT_TRUE(out.chosen.empty());
}

TEST(TuneSearch, AParameterThatPicksAKernelStartsASearchOfItsOwn) {
  // Kernel 1 is slower than the defaults at their width, fastest at width 4:
  // a search from the defaults alone never keeps it.
  const std::vector<Tunable> tunables = {{"kernel", {0, 1}, 0, true}, {"width", {1, 2, 4}, 1}};
  std::vector<Tuning> asked;
  const TuneOutcome out = search_tuning(
      tunables,
      [&](const Tuning& t) {
        asked.push_back(t);
        const bool other = names(t, "kernel", 1);
        const bool wide = names(t, "width", 4);
        return around(other ? (wide ? 1.0 : 3.0) : 2.0, 0.01);
      },
      {});
  EXPECT_EQ(out.chosen, (Tuning{{"kernel", 1}, {"width", 4}}));
  EXPECT_DOUBLE_EQ(out.tuned_s, 1.0);
  EXPECT_FALSE(out.out_of_time);
  for (const Tuning& t : asked) {
    EXPECT_FALSE(names(t, "kernel", 0)) << "the defaults' kernel is never named";
  }
}

TEST(TuneSearch, AParameterIsTriedOnlyWhereTheOthersMakeItMatter) {
  // "width" changes kernel 0 alone: the search from kernel 1 leaves it be,
  // and the search from kernel 0 tries each of its values.
  const std::vector<Tunable> tunables = {{"kernel", {0, 1}, 0, true}, {"width", {1, 2, 4}, 1, false, {{"kernel", {0}}}}};
  std::vector<Tuning> asked;
  const TuneOutcome out = search_tuning(
      tunables,
      [&](const Tuning& t) {
        asked.push_back(t);
        const bool other = names(t, "kernel", 1);
        const bool wide = names(t, "width", 4);
        return around(other ? 1.5 : (wide ? 1.0 : 2.0), 0.01);
      },
      {});
  EXPECT_EQ(out.chosen, (Tuning{{"width", 4}}));
  int widths_of_kernel_0 = 0;
  for (const Tuning& t : asked) {
    const bool other = names(t, "kernel", 1);
    EXPECT_FALSE(other && t.count("width")) << "width tried with kernel 1: " << tuning_text(t);
    if (!other && names(t, "width", 2)) ++widths_of_kernel_0;
  }
  EXPECT_GE(widths_of_kernel_0, 1) << "width 2 tried with kernel 0";
}


TEST(TuneSearch, AParameterMattersWhereAnotherHasAnyOfItsListedValues) {
  // "fold" changes the sweep at widths 2 and 4 and wins at 4 alone.
  const std::vector<Tunable> tunables = {{"width", {1, 2, 4}, 1}, {"fold", {0, 1}, 0, false, {{"width", {2, 4}}}}};
  const TuneOutcome out = search_tuning(
      tunables,
      [&](const Tuning& t) {
        if (!names(t, "width", 4)) return around(2.0, 0.01);
        return around(names(t, "fold", 1) ? 1.0 : 1.5, 0.01);
      },
      {});
  EXPECT_EQ(out.chosen, (Tuning{{"width", 4}, {"fold", 1}})) << tuning_text(out.chosen);
}

TEST(TuneSearch, AValueThatNoLongerMattersWhereTheSearchEndsIsNotKept) {
  // "fold" changes the sweep at widths 2 and 4 alone. The search sets it at
  // the default width 2, then moves the width to 1, where it changes nothing.
  const std::vector<Tunable> tunables = {{"fold", {0, 1}, 0, false, {{"width", {2, 4}}}}, {"width", {1, 2, 4}, 2}};
  std::vector<Tuning> asked;
  const TuneOutcome out = search_tuning(
      tunables,
      [&](const Tuning& t) {
        asked.push_back(t);
        if (names(t, "width", 1)) return around(1.0, 0.01);
        const double width_4 = names(t, "width", 4) ? 0.1 : 0.0;
        return around((names(t, "fold", 1) ? 1.8 : 2.0) - width_4, 0.01);
      },
      {});
  EXPECT_EQ(out.chosen, (Tuning{{"width", 1}})) << tuning_text(out.chosen);
  const auto tried = [&](int fold, int width) {
    return std::any_of(asked.begin(), asked.end(), [&](const Tuning& t) {
      return names(t, "fold", fold) && (width == 2 ? !t.count("width") : names(t, "width", width));
    });
  };
  EXPECT_TRUE(tried(1, 2)) << "fold tried at the default width";
  for (const Tuning& t : asked) {
    EXPECT_FALSE(names(t, "width", 1) && names(t, "fold", 0)) << "fold moved at width 1: " << tuning_text(t);
  }
}

TEST(TuneSearch, EachStepsSetsAreMadeReadyTogetherBeforeAnyIsMeasured) {
  // A device builds what its parameter sets need side by side (a GPU's
  // kernels): the search hands it the starts, then each parameter's other
  // values, before it measures the first of them.
  const std::vector<Tunable> tunables = {{"kernel", {0, 1}, 0, true}, {"width", {1, 2, 4}, 1}};
  std::vector<std::vector<Tuning>> batches;
  std::vector<Tuning> ready;
  TuneSearchOptions options;
  options.prepare = [&](const std::vector<Tuning>& sets) {
    batches.push_back(sets);
    ready.insert(ready.end(), sets.begin(), sets.end());
  };
  int measured = 0;
  search_tuning(
      tunables,
      [&](const Tuning& t) {
        ++measured;
        EXPECT_NE(std::find(ready.begin(), ready.end(), t), ready.end()) << tuning_text(t) << " measured unprepared";
        return around(names(t, "width", 4) ? 1.0 : 2.0, 0.01);
      },
      options);
  EXPECT_GT(measured, 3);
  ASSERT_GE(batches.size(), 2u);
  EXPECT_EQ(batches.front(), (std::vector<Tuning>{Tuning{}, Tuning{{"kernel", 1}}})) << "the starts, at once";
  EXPECT_EQ(batches[1], (std::vector<Tuning>{Tuning{{"width", 2}}, Tuning{{"width", 4}}}))
      << "the defaults' other widths, at once";
}
TEST(TuneSearch, NothingToTuneMeasuresTheDefaultsAlone) {
  int calls = 0;
  const TuneOutcome out = search_tuning({}, [&](const Tuning&) { return ++calls, around(1.0, 0.0); }, {});
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(out.chosen.empty());
}

TEST(TuneSearch, ATuningADeviceDoesNotTakeIsRefusedOrLeftOut) {
  try {
    check_tuning("cpu0", kTunables, {{"block_x", 32}});
    FAIL() << "an unknown parameter was taken";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("cpu0 has no kernel parameter 'block_x'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("chunk_values, threads"), std::string::npos) << e.what();
  }
  try {
    check_tuning("cpu0", kTunables, {{"chunk_values", 100}});
    FAIL() << "a value not listed was taken";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("'chunk_values' takes 64, 256, 1024, not 100"), std::string::npos) << e.what();
  }
  std::vector<std::string> warned;
  set_log_sink([&](LogLevel, const std::string& m) { warned.push_back(m); });
  const Tuning kept = usable_tuning("cpu7", kTunables, {{"chunk_values", 1024}, {"block_x", 32}, {"threads", 3}});
  set_log_sink(nullptr);
  EXPECT_EQ(kept, (Tuning{{"chunk_values", 1024}}));
  ASSERT_EQ(warned.size(), 2u);
  EXPECT_NE(warned[0].find("not used"), std::string::npos) << warned[0];
  EXPECT_EQ(tuning_text(kept), "chunk_values=1024");
  EXPECT_EQ(tuning_text({}), "defaults");
}

Fingerprint machine(const std::string& host) {
  Fingerprint f;
  f.host = host;
  f.cpu_model = "test CPU";
  f.sockets = 1;
  f.cores = 2;
  return f;
}

Profile tuned_profile(const std::string& host) {
  Profile p;
  p.fingerprint = machine(host);
  DeviceProfile& d = p.devices["cpu:node0"];
  d.name = "cpu0";
  d.kind = "cpu";
  d.tuned[tuning_key(Stencil::builtin("box9"), Precision::Float)] = {{{"chunk_values", 1024}}, 2e-3, 1.5e-3,
                                                                     "2048x2048"};
  return p;
}

TEST(TunedProfile, TunedParametersAreKeyedByStencilAndPrecisionAndSurviveJson) {
  EXPECT_EQ(tuning_key(Stencil::builtin("poisson5"), Precision::Double), "poisson5/double");
  EXPECT_EQ(tuning_key(Stencil::builtin("box27"), Precision::Float), "box27/float");
  Stencil mine = Stencil::builtin("box9");
  mine.name = "mine";
  mine.diagonal = 9.0;
  EXPECT_EQ(tuning_key(mine, Precision::Float).rfind("file:", 0), 0u);

  const Profile back = profile_from_json(to_json(tuned_profile("here")));
  const TunedParameters& t = back.devices.at("cpu:node0").tuned.at("box9/float");
  EXPECT_EQ(t.values, (std::map<std::string, int>{{"chunk_values", 1024}}));
  EXPECT_DOUBLE_EQ(t.default_s, 2e-3);
  EXPECT_DOUBLE_EQ(t.tuned_s, 1.5e-3);
  EXPECT_EQ(t.grid, "2048x2048");

  // A later calibration keeps them; a later tuning of the same key replaces them.
  Profile stored = back;
  Profile calibrated;
  calibrated.fingerprint = machine("here");
  calibrated.devices["cpu:node0"].rates[rate_key(Precision::Float, 64)] = RateCurve({{4, 1e-6}, {8, 2e-6}});
  merge_into(stored, calibrated);
  EXPECT_EQ(stored.devices.at("cpu:node0").tuned.count("box9/float"), 1u);
  Profile retuned = tuned_profile("here");
  retuned.devices["cpu:node0"].tuned["box9/float"].values.clear();
  merge_into(stored, retuned);
  EXPECT_TRUE(stored.devices.at("cpu:node0").tuned.at("box9/float").values.empty());
}

TEST(TunedProfile, AProfileWithoutTunedParametersLoadsAndBadOnesAreRefused) {
  std::string text = to_json(tuned_profile("here"));
  const auto at = text.find("\"tuned\"");
  ASSERT_NE(at, std::string::npos);
  Profile p = tuned_profile("here");
  p.devices["cpu:node0"].tuned.clear();
  EXPECT_TRUE(profile_from_json(to_json(p)).devices.at("cpu:node0").tuned.empty());
  const std::string bad = std::string(text).replace(text.find("0.002"), 5, "-1.0");
  try {
    profile_from_json(bad);
    FAIL() << "a negative time was read";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("cpu0: its tuned box9/float needs finite times > 0"), std::string::npos)
        << e.what();
  }
}

TEST(TunedProfile, AnotherMachinesTunedParametersAreNotUsed) {
  const fs::path dir = fs::temp_directory_path() / ("hetstencil_tune_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "profile.json").string();
  save_profile(path, tuned_profile("there"));
  const Fingerprint there = machine("there");
  const auto same = load_profile(path, &there);
  ASSERT_TRUE(same.has_value());
  EXPECT_EQ(same->devices.at("cpu:node0").tuned.count("box9/float"), 1u);
  std::vector<std::string> warned;
  set_log_sink([&](LogLevel, const std::string& m) { warned.push_back(m); });
  const Fingerprint here = machine("here");
  const auto other = load_profile(path, &here);
  set_log_sink(nullptr);
  EXPECT_FALSE(other.has_value());
  ASSERT_EQ(warned.size(), 1u) << "said once";
  EXPECT_NE(warned[0].find("is for another machine (host here vs there)"), std::string::npos) << warned[0];
  fs::remove_all(dir);
}

}  // namespace
}  // namespace hetstencil
