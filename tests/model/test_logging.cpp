// The library's log: its own logger, quiet below warnings, stderr by default and
// never stdout or the application's spdlog default logger; an application's sink
// gets each message with its level. A profile that cannot be used is the known
// warning these tests provoke.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "core/log.hpp"
#include "hetstencil/logging.hpp"
#include "model/profile.hpp"
#include "tests/test_support.hpp"

namespace hetstencil {
namespace {

namespace fs = std::filesystem;

// A corrupt profile file in a folder of its own, removed at the end; loading it logs a warning.
struct CorruptProfile {
  testing_support::Scratch folder{"hetstencil_log"};
  fs::path path = folder.file("profile.json");
  CorruptProfile() { std::ofstream(path) << "not json at all"; }
  std::string warning() const { return "profile '" + path.string() + "' is unusable"; }
};

// Every message the library sends, kept; the default sink and level come back at the end.
struct Collected {
  std::mutex mutex;
  std::vector<std::pair<LogLevel, std::string>> messages;
  Collected() {
    set_log_sink([this](LogLevel level, const std::string& message) {
      std::lock_guard<std::mutex> hold(mutex);
      messages.emplace_back(level, message);
    });
  }
  ~Collected() {
    set_log_sink(nullptr);
    set_log_level(LogLevel::warn);
  }
};

TEST(Logging, ASinkGetsTheLibrarysWarningWithItsLevel) {
  CorruptProfile file;
  Collected log;
  EXPECT_FALSE(load_profile(file.path.string(), nullptr).has_value());
  ASSERT_EQ(log.messages.size(), 1u);
  EXPECT_EQ(log.messages[0].first, LogLevel::warn);
  EXPECT_EQ(log.messages[0].second.rfind(file.warning(), 0), 0u) << log.messages[0].second;
}

TEST(Logging, QuietBelowWarningsUnlessAskedAndSilentWhenOff) {
  EXPECT_EQ(log_level(), LogLevel::warn);
  Collected log;
  log::debug("a detail: {}", 42);
  log::info("a step");
  EXPECT_TRUE(log.messages.empty());
  set_log_level(LogLevel::debug);
  log::debug("a detail: {}", 42);
  ASSERT_EQ(log.messages.size(), 1u);
  EXPECT_EQ(log.messages[0], std::make_pair(LogLevel::debug, std::string("a detail: 42")));
  set_log_level(LogLevel::off);
  CorruptProfile file;
  load_profile(file.path.string(), nullptr);
  log::error("an error");
  EXPECT_EQ(log.messages.size(), 1u);
}

TEST(Logging, ByDefaultWarningsGoToStderrNeverToStdoutNorTheApplicationsLogger) {
  // The application's own spdlog default logger, which the library must leave alone.
  std::ostringstream application;
  const auto before = spdlog::default_logger();
  spdlog::set_default_logger(
      std::make_shared<spdlog::logger>("application", std::make_shared<spdlog::sinks::ostream_sink_mt>(application)));
  spdlog::set_level(spdlog::level::trace);
  CorruptProfile file;
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  load_profile(file.path.string(), nullptr);
  const std::string out = ::testing::internal::GetCapturedStdout();
  const std::string err = ::testing::internal::GetCapturedStderr();
  spdlog::set_default_logger(before);
  EXPECT_EQ(out, "");
  EXPECT_NE(err.find(file.warning()), std::string::npos) << err;
  EXPECT_EQ(application.str(), "");
}

}  // namespace
}  // namespace hetstencil
