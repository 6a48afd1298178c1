// Checks of option values with the project's messages. CLI11 runs them on the
// text as typed, before converting it, and prefixes the option's name:
// "--nx: must be a whole number from 1 to 1073741824, not 'abc'". The number
// checks also rewrite the text into the one form CLI11's conversion reads the
// same way (CLI11 would read "010" as octal): give them to Option::transform,
// which keeps the rewritten text (Option::check would drop it).
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "hetstencil/error.hpp"

namespace hetstencil::cli {

/// A whole number from `lo` to `hi`.
CLI::Validator integer_in(std::int64_t lo, std::int64_t hi = std::numeric_limits<std::int64_t>::max());

/// A finite number from `lo` to `hi`; with `above_lo`, greater than `lo`.
CLI::Validator number_in(double lo, double hi, bool above_lo = false);
/// A finite number greater than 0.
CLI::Validator positive_number();
/// Any finite number.
CLI::Validator finite_number();

/// One of `choices`, spelt exactly.
CLI::Validator one_of(const std::vector<std::string>& choices);

/// Not empty: `what` says what the value names ("a file", "a device").
CLI::Validator naming(const std::string& what);

/// Kernel parameters as typed, "warps=2,lines=4": each name once, each value a
/// whole number. Throws InvalidArgument saying what is wrong with `text`.
std::map<std::string, int> kernel_parameters(const std::string& text);
/// Text that kernel_parameters reads.
CLI::Validator kernel_parameter_set();

/// The list options of `command` (those with a delimiter) as typed in argv:
/// an empty item ("1,,1", "1,") is refused, since CLI11 would drop it
/// unseen. Returns the message, or "" when every list is whole.
std::string empty_list_item(const CLI::App& command, int argc, const char* const* argv);

/// Refuses (InvalidArgument naming `option` and the device) a count below 0 or
/// above ny; rows[k] is for names[k].
void check_row_counts(const std::string& option, const std::vector<std::string>& names,
                      const std::vector<std::int64_t>& rows, std::int64_t ny);

}  // namespace hetstencil::cli
