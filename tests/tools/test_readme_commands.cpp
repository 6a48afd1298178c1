// Every command line README shows is one the parser takes: the synopsis in its
// fenced blocks (each optional part and each alternative tried) and the inline
// examples. Each is parsed for real (HETSTENCIL_PARSE_ONLY=1: parse, then stop)
// and must exit 0; a usage error (2) means README and the parser disagree.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/tools/cli_runner.hpp"

namespace hetstencil {
namespace {

namespace fs = std::filesystem;
using Tokens = std::vector<std::string>;


const std::set<std::string> kCommands{"probe",   "solve", "sweep",    "bench", "calibrate",
                                      "profile", "predict", "plan", "stencils", "tune"};

// A value for each option README shows with a placeholder (N, FILE, a,b,..., ...).
// A new placeholder needs a line here: the test says which.
const std::map<std::string, std::string>& sample_values() {
  static const std::map<std::string, std::string> values{
      {"--nx", "64"}, {"--ny", "32"}, {"--iters", "10"}, {"--tol", "1e-3"}, {"--check-every", "5"},
      {"--boundary", "0.5"}, {"--devices", "cpu0"}, {"--cpu-devices", "2"}, {"--threads", "1"},
      {"--rows", "16,16"}, {"--split", "0.5,0.5"}, {"--budget", "1"}, {"--output", "u.npy"},
      {"--variant", "blocked"}, {"--depth", "2"}, {"--alpha", "2"}, {"--vary", "cpu0"}, {"--from", "0.4"},
      {"--to", "0.6"}, {"--step", "0.1"}, {"--repeats", "1"}, {"--json", "out.json"}, {"--csv", "out.csv"}, {"--plot", "out.png"},
      {"--reps", "1"}, {"--precision", "float"}, {"--sizes", "64,128"}, {"--runs", "1"}, {"--gpu", "0"},
      {"--max-rows", "16"}, {"--stencil", "poisson7"}, {"--nz", "8"}, {"--gpus", "1"}, {"--coefficients", "grids"},
      {"--plan", std::string(HETSTENCIL_FIXTURES) + "/profiles/eight_gpus_two_sockets.json"},
      {"--profile", std::string(HETSTENCIL_FIXTURES) + "/profiles/eight_gpus_two_sockets.json"},
      {"--topology", std::string(HETSTENCIL_FIXTURES) + "/topology/two_sockets_four_gpus.xml"}};
  return values;
}

bool is_placeholder(const std::string& word) {
  if (word.find("...") != std::string::npos || word == "a,b") return true;
  const std::string stem = word.substr(0, word.find('.'));  // FILE.xml, FILE.png
  return !stem.empty() && std::all_of(stem.begin(), stem.end(), [](char c) { return (c >= 'A' && c <= 'Z') || c == '_'; });
}

// Splits on blanks outside double quotes (the quotes go); [ ] and a lone | are words of their own.
Tokens words_of(const std::string& text) {
  Tokens out;
  std::string word;
  bool quoted = false, any = false;
  auto flush = [&] {
    if (any) out.push_back(word);
    word.clear();
    any = false;
  };
  for (char c : text) {
    if (c == '"') {
      quoted = !quoted;
      any = true;
    } else if (!quoted && (c == ' ' || c == '\t' || c == '\n')) {
      flush();
    } else if (!quoted && (c == '[' || c == ']')) {
      flush();
      out.emplace_back(1, c);
    } else {
      word += c;
      any = true;
    }
  }
  flush();
  return out;
}

// The synopsis grammar: words, [optional groups] and alternatives (a | b).
// Expanded into command lines: the words outside groups alone, then with each
// alternative of each group in turn (recursively), so that every option shown is
// tried once at least.
std::vector<Tokens> expand(const Tokens& w, std::size_t& at, bool in_group);

std::vector<Tokens> expand_sequence(const Tokens& w, std::size_t& at) {
  Tokens base;
  std::vector<std::vector<Tokens>> groups;
  while (at < w.size() && w[at] != "]" && w[at] != "|") {
    if (w[at] == "[") {
      ++at;
      groups.push_back(expand(w, at, true));
      ++at;  // ]
    } else {
      base.push_back(w[at++]);
    }
  }
  std::vector<Tokens> out{base};
  for (const auto& group : groups) {
    for (const auto& option : group) {
      Tokens line = base;
      line.insert(line.end(), option.begin(), option.end());
      out.push_back(line);
    }
  }
  return out;
}

std::vector<Tokens> expand(const Tokens& w, std::size_t& at, bool in_group) {
  std::vector<Tokens> out;
  for (;;) {
    for (auto& line : expand_sequence(w, at)) {
      // Prose in brackets ("[solve's problem and machine options]") names no option: skipped.
      const bool prose = in_group && std::none_of(line.begin(), line.end(), [](const std::string& s) { return s[0] == '-'; });
      if (!prose) out.push_back(line);
    }
    if (at < w.size() && w[at] == "|") {
      ++at;
      continue;
    }
    return out;
  }
}

// float|double|both as one word: a line for each.
std::vector<Tokens> split_value_alternatives(const Tokens& line) {
  for (std::size_t k = 0; k < line.size(); ++k) {
    if (line[k].size() > 1 && line[k].find('|') != std::string::npos) {
      std::vector<Tokens> out;
      std::stringstream choices(line[k]);
      for (std::string choice; std::getline(choices, choice, '|');) {
        Tokens one = line;
        one[k] = choice;
        for (auto& l : split_value_alternatives(one)) out.push_back(l);
      }
      return out;
    }
  }
  return {line};
}

// Placeholders become sample values; ADD_FAILURE names any without one.
Tokens with_sample_values(Tokens line, const std::string& source) {
  for (std::size_t k = 1; k < line.size(); ++k) {
    if (line[k - 1].rfind("--", 0) == 0 && is_placeholder(line[k])) {
      const auto found = sample_values().find(line[k - 1]);
      if (found == sample_values().end()) {
        ADD_FAILURE() << "README's placeholder " << line[k] << " after " << line[k - 1]
                      << " has no sample value in this test (" << source << ")";
      } else {
        line[k] = found->second;
      }
    }
  }
  return line;
}

struct Example {
  std::string text;  // as README has it
  Tokens words;      // from the command on
};

// From "... hetstencil CMD ..." or "tools/setup.sh solve ..." or "CMD --option ...": the words from CMD on,
// up to a redirection; empty when the text is no command line.
Tokens command_words(const std::string& text, bool inline_span) {
  Tokens w = words_of(text);
  std::size_t start = w.size();
  for (std::size_t k = 0; k < w.size(); ++k) {
    const bool named = (w[k] == "build/hetstencil" || w[k] == "hetstencil" || w[k] == "./build/hetstencil" ||
                        w[k] == "tools/setup.sh") && k + 1 < w.size() && kCommands.count(w[k + 1]);
    if (named) {
      start = k + 1;
      break;
    }
  }
  if (start == w.size() && inline_span && w.size() > 1 && kCommands.count(w[0])) start = 0;
  if (start == w.size()) return {};
  Tokens out(w.begin() + static_cast<std::ptrdiff_t>(start), w.end());
  // A redirection or a shell comment ends the command.
  const auto redirect = std::find_if(out.begin(), out.end(), [](const std::string& s) { return s == ">" || s[0] == '#'; });
  out.erase(redirect, out.end());
  return out;
}

std::vector<Example> readme_examples() {
  std::ifstream in(HETSTENCIL_README);
  std::vector<Example> out;
  std::string line, prose;
  bool fenced = false;
  while (std::getline(in, line)) {
    if (line.rfind("```", 0) == 0) {
      fenced = !fenced;
      continue;
    }
    if (!fenced) {
      prose += line + "\n";
      continue;
    }
    // A line of a block; indented lines under it continue it.
    if (!line.empty() && line[0] == ' ' && !out.empty()) {
      out.back().text += "\n" + line;
    } else {
      out.push_back({line, {}});
    }
  }
  for (auto& e : out) e.words = command_words(e.text, false);
  // Inline `code` spans, which may run over a line break.
  for (std::size_t open = prose.find('`'); open != std::string::npos;) {
    const std::size_t close = prose.find('`', open + 1);
    if (close == std::string::npos) break;
    const std::string span = prose.substr(open + 1, close - open - 1);
    Tokens words = command_words(span, true);
    if (!words.empty()) out.push_back({span, words});
    open = prose.find('`', close + 1);
  }
  out.erase(std::remove_if(out.begin(), out.end(), [](const Example& e) { return e.words.empty(); }), out.end());
  return out;
}

TEST(ReadmeCommands, EveryCommandLineInReadmeParses) {
  const std::vector<Example> examples = readme_examples();
  std::set<std::string> commands_seen;
  int lines_run = 0;
  for (const Example& e : examples) {
    std::size_t at = 0;
    for (const Tokens& grammar_line : expand(e.words, at, false)) {
      for (const Tokens& choice : split_value_alternatives(grammar_line)) {
        const Tokens args = with_sample_values(choice, e.text);
        std::string shown;
        for (const auto& a : args) shown += a + " ";
        const test::CliResult r = test::run_command(HETSTENCIL_CLI, args, fs::temp_directory_path(),
                                                    {"HETSTENCIL_PARSE_ONLY=1"});
        EXPECT_EQ(r.exit_code, 0) << "README: " << e.text << "\nran: hetstencil " << shown << "\nstderr: " << r.err;
        commands_seen.insert(args.front());
        ++lines_run;
      }
    }
  }
  EXPECT_EQ(commands_seen, kCommands) << "README should show every command";
  EXPECT_GE(lines_run, 60) << "too few command lines found in README: the extraction broke";
}

// The extraction itself: a synopsis line expands to each option alone.
TEST(ReadmeCommands, SynopsisExpandsToEachOptionAndAlternative) {
  Tokens w = command_words("build/hetstencil bench cpu [--nx N] [--precision float|both] [--a X | --b [--c K]]", false);
  std::size_t at = 0;
  std::vector<Tokens> lines;
  for (const auto& l : expand(w, at, false)) {
    for (const auto& c : split_value_alternatives(l)) lines.push_back(c);
  }
  const std::vector<Tokens> expected{{"bench", "cpu"},
                                     {"bench", "cpu", "--nx", "N"},
                                     {"bench", "cpu", "--precision", "float"},
                                     {"bench", "cpu", "--precision", "both"},
                                     {"bench", "cpu", "--a", "X"},
                                     {"bench", "cpu", "--b"},
                                     {"bench", "cpu", "--b", "--c", "K"}};
  EXPECT_EQ(lines, expected);
  EXPECT_EQ(command_words("hetstencil plan --nx 8 --json > FILE", true), (Tokens{"plan", "--nx", "8", "--json"}));
  EXPECT_EQ(command_words("tools/setup.sh solve --nx 4096", true), (Tokens{"solve", "--nx", "4096"}));
  EXPECT_TRUE(command_words("--rows a,b", true).empty());
}

}  // namespace
}  // namespace hetstencil
