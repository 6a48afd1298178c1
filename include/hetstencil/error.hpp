/// \file
/// Exceptions thrown by hetstencil. Each carries the source location that raised it,
/// so a message from deep inside a device thread can still be traced.
#pragma once

#include <stdexcept>
#include <string>

#include "hetstencil/export.hpp"

namespace hetstencil {

/// Base of every hetstencil exception. what() is the user-facing message; file()
/// and line() say where it was raised.
class HETSTENCIL_API Error : public std::runtime_error {
 public:
  /// `message` for users; `file` and `line` where it was raised (HETSTENCIL_THROW fills them in).
  Error(const std::string& message, const char* file, int line)
      : std::runtime_error(message), file_(file), line_(line) {}
  /// The source file that raised it.
  const char* file() const noexcept { return file_; }
  /// The line of file() that raised it.
  int line() const noexcept { return line_; }

 private:
  const char* file_;
  int line_;
};

/// A problem, option or file the caller gave is not usable.
class HETSTENCIL_API InvalidArgument : public Error {
 public:
  /// As Error's.
  using Error::Error;
};

/// A system call failed; the message names the call, what it was doing and errno's text.
class HETSTENCIL_API SystemError : public Error {
 public:
  /// As Error's.
  using Error::Error;
};

/// The feature needs a part of hetstencil this build does not contain (e.g. CUDA).
class HETSTENCIL_API NotCompiled : public Error {
 public:
  /// As Error's.
  using Error::Error;
};

/// Work stopped because another device of the same solve failed first.
class HETSTENCIL_API Aborted : public Error {
 public:
  /// As Error's.
  using Error::Error;
};

/// Text a user gave, as messages quote it: in single quotes, cut to 24
/// characters (saying how many there were), control characters shown as '?'.
HETSTENCIL_API std::string as_typed(const std::string& text);

}  // namespace hetstencil

/// Throws `Type` (an Error) with `message` and the place it is raised.
#define HETSTENCIL_THROW(Type, message) throw Type((message), __FILE__, __LINE__)
