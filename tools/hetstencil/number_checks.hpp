// Numeric options checked before CLI11 converts them: a bad value is named
// (cut when long) with the range allowed, in the project's words.
#pragma once

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <CLI/CLI.hpp>
#include <spdlog/fmt/fmt.h>

namespace hetstencil::cli {

/// `text` as given, cut to its first 20 characters and "..." when longer.
inline std::string cut(const std::string& text) {
  constexpr std::size_t kShown = 20;
  return text.size() <= kShown ? text : text.substr(0, kShown) + "...";
}

/// A whole number in [lo, hi] (each element of a list option).
inline CLI::Validator integer_in(std::int64_t lo, std::int64_t hi) {
  const std::string allowed = fmt::format("a whole number from {} to {}", lo, hi);
  return CLI::Validator(
      [lo, hi, allowed](std::string& text) -> std::string {
        errno = 0;
        char* end = nullptr;
        const long long value = std::strtoll(text.c_str(), &end, 10);
        if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || value < lo || value > hi) {
          return "'" + cut(text) + "' is not allowed: give " + allowed;
        }
        return {};
      },
      fmt::format("INT in [{}, {}]", lo, hi));
}

/// A finite number in [lo, hi], or (lo, hi] when `above_lo`.
inline CLI::Validator number_in(double lo, double hi, bool above_lo = false) {
  const std::string allowed =
      fmt::format("a finite number {} {:g} and <= {:g}", above_lo ? ">" : ">=", lo, hi);
  return CLI::Validator(
      [lo, hi, above_lo, allowed](std::string& text) -> std::string {
        errno = 0;
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(value) || value > hi ||
            (above_lo ? value <= lo : value < lo)) {
          return "'" + cut(text) + "' is not allowed: give " + allowed;
        }
        return {};
      },
      fmt::format("NUMBER in {}{:g}, {:g}]", above_lo ? "(" : "[", lo, hi));
}

}  // namespace hetstencil::cli
