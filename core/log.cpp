#include "core/log.hpp"

#include <atomic>
#include <memory>
#include <mutex>

#include <spdlog/logger.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

namespace hetstencil {
namespace {

// LogLevel lists spdlog's levels in spdlog's order, less "critical".
spdlog::level::level_enum to_spdlog(LogLevel level) {
  switch (level) {
    case LogLevel::trace: return spdlog::level::trace;
    case LogLevel::debug: return spdlog::level::debug;
    case LogLevel::info: return spdlog::level::info;
    case LogLevel::warn: return spdlog::level::warn;
    case LogLevel::error: return spdlog::level::err;
    case LogLevel::off: break;
  }
  return spdlog::level::off;
}

LogLevel from_spdlog(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace: return LogLevel::trace;
    case spdlog::level::debug: return LogLevel::debug;
    case spdlog::level::info: return LogLevel::info;
    case spdlog::level::warn: return LogLevel::warn;
    default: return LogLevel::error;
  }
}

// Hands each message to the application's callback, one at a time (base_sink's
// mutex), as its bare text.
class CallbackSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit CallbackSink(LogSink sink) : sink_(std::move(sink)) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& message) override {
    sink_(from_spdlog(message.level), std::string(message.payload.data(), message.payload.size()));
  }
  void flush_() override {}

 private:
  LogSink sink_;
};

// The logger is not registered with spdlog: an application's own spdlog (or its
// own logger named "hetstencil") never meets it. Its level stays at trace; the
// level set lives in `level` so that it survives a change of sink.
std::shared_ptr<spdlog::logger> make_logger(spdlog::sink_ptr sink) {
  auto logger = std::make_shared<spdlog::logger>("hetstencil", std::move(sink));
  logger->set_level(spdlog::level::trace);
  return logger;
}

std::atomic<LogLevel> level{LogLevel::warn};

// Swapped whole (std::atomic_load/store) so that a message logged on a device
// thread while the sink changes reaches one sink or the other.
std::shared_ptr<spdlog::logger>& logger_slot() {
  static std::shared_ptr<spdlog::logger> logger = make_logger(std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  return logger;
}

}  // namespace

void set_log_level(LogLevel new_level) { level.store(new_level); }

LogLevel log_level() { return level.load(); }

void set_log_sink(LogSink sink) {
  auto logger = sink ? make_logger(std::make_shared<CallbackSink>(std::move(sink)))
                     : make_logger(std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  std::atomic_store(&logger_slot(), std::move(logger));
}

namespace log {

bool enabled(LogLevel at) { return at != LogLevel::off && at >= level.load(); }

void write(LogLevel at, const std::string& message) {
  std::atomic_load(&logger_slot())->log(to_spdlog(at), message);
}

}  // namespace log
}  // namespace hetstencil
