/// \file
/// Where the library's log messages go. The library logs through a logger of its
/// own (never a global or default logger of the application), to stderr, and
/// says nothing below a warning unless asked: an application embedding it sees
/// its warnings (a profile left unused, memory short) and nothing on stdout.
#pragma once

#include <functional>
#include <string>

#include "hetstencil/export.hpp"

namespace hetstencil {

/// The importance of a log message, from the most detailed to none.
enum class LogLevel { trace, debug, info, warn, error, off };

/// Receives each message at or above the level set: its level and its text (one
/// line, no level or time stamp added). Called on the thread that logs, which
/// may be a device thread: it must be safe to call from several threads at once
/// and must not call back into hetstencil's logging functions.
using LogSink = std::function<void(LogLevel level, const std::string& message)>;

/// Messages below `level` are dropped (LogLevel::off drops all). The default is
/// LogLevel::warn. Safe to call from any thread.
HETSTENCIL_API void set_log_level(LogLevel level);

/// The level set (LogLevel::warn unless set_log_level changed it).
HETSTENCIL_API LogLevel log_level();

/// Sends every message to `sink` instead of stderr; an empty sink (nullptr)
/// restores stderr. The level is kept. Safe to call from any thread: a message
/// being logged meanwhile goes to the old sink or the new one, whole.
HETSTENCIL_API void set_log_sink(LogSink sink);

}  // namespace hetstencil
