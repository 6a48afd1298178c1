#include "tools/hetstencil/option_checks.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include <spdlog/fmt/fmt.h>

#include "hetstencil/error.hpp"

namespace hetstencil::cli {

CLI::Validator integer_in(std::int64_t lo, std::int64_t hi) {
  const std::string allowed = hi == std::numeric_limits<std::int64_t>::max()
                                  ? fmt::format("a whole number of at least {}", lo)
                                  : fmt::format("a whole number from {} to {}", lo, hi);
  const std::string shape = hi == std::numeric_limits<std::int64_t>::max() ? fmt::format(">={}", lo)
                                                                            : fmt::format("{}..{}", lo, hi);
  return CLI::Validator(
      [lo, hi, allowed](std::string& text) -> std::string {
        const char* first = text.data();
        const char* last = text.data() + text.size();
        if (first != last && *first == '+') ++first;
        std::int64_t value = 0;
        const auto [end, error] = std::from_chars(first, last, value);
        if (first == last || end != last || error != std::errc() || value < lo || value > hi) {
          return "must be " + allowed + ", not " + as_typed(text);
        }
        text = std::to_string(value);
        return {};
      },
      shape);
}

CLI::Validator number_in(double lo, double hi, bool above_lo) {
  std::string allowed = "a finite number";
  if (!std::isinf(hi)) {
    allowed = above_lo ? fmt::format("a number greater than {} and at most {}", lo, hi)
                       : fmt::format("a number from {} to {}", lo, hi);
  } else if (!std::isinf(lo)) {
    allowed += fmt::format(" {} {}", above_lo ? "greater than" : "of at least", lo);
  }
  std::string shape = fmt::format("{}{}", above_lo ? ">" : ">=", lo);
  if (std::isinf(lo)) shape = "";
  if (!std::isinf(hi)) shape = fmt::format("{}{}..{}", above_lo ? ">" : "", lo, hi);
  return CLI::Validator(
      [lo, hi, above_lo, allowed](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = text.empty() || std::isspace(static_cast<unsigned char>(text.front()))
                                 ? NAN
                                 : std::strtod(text.c_str(), &end);
        const bool whole = end == text.c_str() + text.size();
        if (!whole || !std::isfinite(value) || value < lo || value > hi || (above_lo && value == lo)) {
          return "must be " + allowed + ", not " + as_typed(text);
        }
        text = fmt::format("{}", value);  // the shortest text that reads back as the same double
        return {};
      },
      shape);
}

CLI::Validator positive_number() { return number_in(0.0, INFINITY, true); }

CLI::Validator finite_number() { return number_in(-INFINITY, INFINITY); }

CLI::Validator one_of(const std::vector<std::string>& choices) {
  std::string allowed;
  for (std::size_t k = 0; k < choices.size(); ++k) {
    allowed += (k == 0 ? "" : k + 1 == choices.size() ? " or " : ", ") + choices[k];
  }
  return CLI::Validator(
      [choices, allowed](std::string& text) -> std::string {
        for (const auto& c : choices) {
          if (text == c) return {};
        }
        return "must be " + allowed + ", not " + as_typed(text);
      },
      fmt::format("{}", fmt::join(choices, "|")));
}

CLI::Validator naming(const std::string& what) {
  return CLI::Validator(
      [what](std::string& text) -> std::string { return text.empty() ? "must name " + what + ", not ''" : std::string(); },
      "");
}

std::map<std::string, int> kernel_parameters(const std::string& text) {
  const std::string form = "must be NAME=VALUE pairs joined by commas, e.g. warps=2,lines=4, not " + as_typed(text);
  std::map<std::string, int> out;
  std::size_t begin = 0;
  while (true) {
    const std::size_t end = std::min(text.find(',', begin), text.size());
    const std::string pair = text.substr(begin, end - begin);
    const std::size_t equals = pair.find('=');
    if (equals == std::string::npos || equals == 0) HETSTENCIL_THROW(InvalidArgument, form);
    const std::string name = pair.substr(0, equals);
    const char* first = pair.data() + equals + 1;
    const char* last = pair.data() + pair.size();
    int value = 0;
    const auto [stop, error] = std::from_chars(first, last, value);
    if (first == last || stop != last || error != std::errc()) HETSTENCIL_THROW(InvalidArgument, form);
    if (!out.emplace(name, value).second) {
      HETSTENCIL_THROW(InvalidArgument, "names '" + name + "' twice in " + as_typed(text));
    }
    if (end == text.size()) return out;
    begin = end + 1;
  }
}

CLI::Validator kernel_parameter_set() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        try {
          kernel_parameters(text);
          return {};
        } catch (const InvalidArgument& e) {
          return e.what();
        }
      },
      "NAME=VALUE,...");
}

std::string empty_list_item(const CLI::App& command, int argc, const char* const* argv) {
  for (const CLI::Option* option : command.get_options()) {
    const char delimiter = option->get_delimiter();
    if (delimiter == '\0') continue;
    for (const std::string& name : option->get_lnames()) {
      const std::string flag = "--" + name;
      for (int k = 1; k < argc; ++k) {
        const std::string word = argv[k];
        std::string value;
        if (word == flag && k + 1 < argc) {
          value = argv[k + 1];
        } else if (word.rfind(flag + "=", 0) == 0) {
          value = word.substr(flag.size() + 1);
        } else {
          continue;
        }
        const std::string doubled(2, delimiter);
        if (value.empty() || value.front() == delimiter || value.back() == delimiter ||
            value.find(doubled) != std::string::npos) {
          return flag + ": an item of " + as_typed(value) + " is empty; give values separated by single commas";
        }
      }
    }
  }
  return {};
}

void check_row_counts(const std::string& option, const std::vector<std::string>& names,
                      const std::vector<std::int64_t>& rows, std::int64_t ny) {
  for (std::size_t k = 0; k < rows.size(); ++k) {
    if (rows[k] < 0 || rows[k] > ny) {
      HETSTENCIL_THROW(InvalidArgument, fmt::format("{} gives {} {} rows: a device takes 0 (left out) to {} rows",
                                                    option, names[k], rows[k], ny));
    }
  }
}

}  // namespace hetstencil::cli
