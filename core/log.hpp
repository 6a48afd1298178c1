// The library's only way to log: hetstencil's own logger (hetstencil/logging.hpp
// sets its level and sink), never spdlog's default logger, which belongs to the
// application. Formatting happens only for a message that passes the level.
#pragma once

#include <string>
#include <utility>

#include <spdlog/fmt/fmt.h>

#include "hetstencil/logging.hpp"

namespace hetstencil::log {

/// Whether a message at `level` would be written.
bool enabled(LogLevel level);

/// Writes `message` at `level` to the sink set (stderr by default).
void write(LogLevel level, const std::string& message);

template <typename... Args>
void debug(fmt::format_string<Args...> format, Args&&... args) {
  if (enabled(LogLevel::debug)) write(LogLevel::debug, fmt::format(format, std::forward<Args>(args)...));
}

template <typename... Args>
void info(fmt::format_string<Args...> format, Args&&... args) {
  if (enabled(LogLevel::info)) write(LogLevel::info, fmt::format(format, std::forward<Args>(args)...));
}

template <typename... Args>
void warn(fmt::format_string<Args...> format, Args&&... args) {
  if (enabled(LogLevel::warn)) write(LogLevel::warn, fmt::format(format, std::forward<Args>(args)...));
}

template <typename... Args>
void error(fmt::format_string<Args...> format, Args&&... args) {
  if (enabled(LogLevel::error)) write(LogLevel::error, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace hetstencil::log
