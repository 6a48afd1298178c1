// hetstencil: probe, solve and benchmark stencil solves on every CPU socket and
// GPU of this machine. A thin client of the library in runtime/.
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>

#include <unistd.h>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "hetstencil/error.hpp"
#include "hetstencil/logging.hpp"
#include "hetstencil/processes.hpp"
#include "hetstencil/version.hpp"
#include "tools/hetstencil/commands.hpp"
#include "tools/hetstencil/exit_codes.hpp"
#include "tools/hetstencil/option_checks.hpp"

namespace {

using hetstencil::cli::kExitFailure;
using hetstencil::cli::kExitSuccess;
using hetstencil::cli::kExitUsage;

constexpr const char* kCommandList =
    "probe, solve, sweep, bench, calibrate, profile, predict, plan, project, stencils, tune";

// The deepest (sub)command the parser had entered when it stopped.
const CLI::App* entered(const CLI::App& app) {
  const CLI::App* at = &app;
  while (!at->get_subcommands().empty()) at = at->get_subcommands().front();
  return at;
}

// "hetstencil bench gpu" for the (sub)command `at`.
std::string command_path(const CLI::App* at) {
  std::string path;
  for (; at->get_parent() != nullptr; at = at->get_parent()) path = " " + at->get_name() + path;
  return "hetstencil" + path;
}

// CLI11's message with any word too long to read (a 309-digit argument) cut.
std::string with_long_words_cut(const std::string& message) {
  constexpr std::size_t kLongest = 40;
  std::string out, word;
  for (std::size_t k = 0; k <= message.size(); ++k) {
    if (k == message.size() || message[k] == ' ') {
      out += word.size() > kLongest ? hetstencil::as_typed(word) : word;
      if (k < message.size()) out += ' ';
      word.clear();
    } else {
      word += message[k];
    }
  }
  return out;
}

// The project's words for CLI11's errors where it has its own; CLI11's otherwise
// (they name the option or argument).
std::string parse_message(const CLI::ParseError& e, const CLI::App* at) {
  const std::string raw = e.what();
  const std::string unconverted = "Could not convert: ";
  if (e.get_name() == "ConversionError" && raw.rfind(unconverted, 0) == 0 && raw.find(" = ") != std::string::npos) {
    // Only options CLI11 checks alone get here (flags given a value): the others are checked first.
    const std::size_t equals = raw.find(" = ");
    const std::string name = raw.substr(unconverted.size(), equals - unconverted.size());
    return name + " does not take the value " + hetstencil::as_typed(raw.substr(equals + 3));
  }
  const std::string what = with_long_words_cut(raw);
  const std::size_t colon = what.find(": ");
  if (e.get_name() == "ArgumentMismatch" && colon != std::string::npos && what.find("missing") != std::string::npos) {
    return what.substr(0, colon) + " needs a value";
  }
  if (e.get_name() == "RequiredError" && what.rfind("A subcommand", 0) == 0) {
    std::string names;
    for (const CLI::App* sub : at->get_subcommands({})) names += (names.empty() ? "" : ", ") + sub->get_name();
    return "name a command after '" + command_path(at) + "': " + names;
  }
  return what;
}

// What a process of an MPI job says when the launcher ends it (it does when
// another process fails or dies, or the job is cancelled): made before the
// signal, written by the handler with write() alone.
char ended_message[160];

extern "C" void ended_by_launcher(int signal) {
  const ssize_t written = write(STDERR_FILENO, ended_message, std::strlen(ended_message));
  (void)written;
  _exit(128 + signal);
}

// Arms the message of a process the launcher ends (SIGTERM when another
// process of the job failed), naming the rank and the job's size.
void say_when_ended(const std::string& rank, const std::string& size) {
  std::snprintf(ended_message, sizeof ended_message,
                "hetstencil: rank %s of %s: ended by the launcher (another process of the job failed or the job "
                "was stopped)\n",
                rank.c_str(), size.c_str());
  struct sigaction action {};
  action.sa_handler = ended_by_launcher;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
}

// The launcher's word for this process's rank or the job's size, before MPI
// starts (which takes a while on a busy host, and the launcher may end the
// job meanwhile): "?" where no variable gives it.
std::string launcher_variable(std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (const char* value = std::getenv(name)) return value;
  }
  return "?";
}

int usage_error(const std::string& message, const std::string& help_of) {
  std::fprintf(stderr, "hetstencil: error: %s (see %s --help)\n", message.c_str(), help_of.c_str());
  return kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  // CUDA loads the kernels' modules when it starts instead of at their first
  // launch: loaded lazily (its default), they cost a process's first solve
  // about 1.7 ms on an H200 at 256^2 (docs/model.md), which no calibration
  // sees, as it loads them before it times anything. A value the user set is
  // kept; where it cannot be set, the modules load lazily.
  if (::setenv("CUDA_MODULE_LOADING", "EAGER", 0) != 0) {
    std::fprintf(stderr, "hetstencil: CUDA_MODULE_LOADING could not be set (%s); CUDA loads its modules lazily\n",
                 std::strerror(errno));
  }
  CLI::App app{"hetstencil: Jacobi solves of any stencil on every CPU socket and GPU of this machine at once"};
  app.require_subcommand(1);
  // The program's own options (-v, --version) are taken after any (sub)command too.
  app.fallthrough();
  app.set_version_flag("--version", std::string("hetstencil ") + hetstencil::version(), "print the version and exit");
  bool verbose = false;
  app.add_flag("-v,--verbose", verbose, "log what the runtime does (to stderr)");
  app.footer("Exit codes: 0 success; 1 run-time failure; 2 usage error (nothing run); 3 results written, the\n"
             "profile update failed; 128+N stopped by signal N.");
  std::map<CLI::App*, hetstencil::cli::Command> commands;
  for (auto add : {hetstencil::cli::add_probe_command, hetstencil::cli::add_solve_command, hetstencil::cli::add_sweep_command,
                   hetstencil::cli::add_bench_command, hetstencil::cli::add_model_commands,
                   hetstencil::cli::add_stencils_command, hetstencil::cli::add_project_command,
                   hetstencil::cli::add_tune_command}) {
    const std::size_t before = app.get_subcommands({}).size();
    hetstencil::cli::Command run = add(app);
    const auto subs = app.get_subcommands({});
    for (std::size_t k = before; k < subs.size(); ++k) commands[subs[k]] = run;
  }
  // CLI11 would only say that a subcommand is required; name the word instead.
  auto is_command = [&](const std::string& word) {
    for (const CLI::App* sub : app.get_subcommands({})) {
      if (sub->check_name(word)) return true;
    }
    return false;
  };
  if (argc > 1 && argv[1][0] != '-' && !is_command(argv[1])) {
    return usage_error("unknown command " + hetstencil::as_typed(argv[1]) + "; the commands are " + kCommandList,
                       "hetstencil");
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version end here too, with 0; every other parse error is a usage error.
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    const CLI::App* at = entered(app);
    return usage_error(parse_message(e, at), command_path(at));
  }
  if (const std::string empty = hetstencil::cli::empty_list_item(*entered(app), argc, argv); !empty.empty()) {
    return usage_error(empty, command_path(entered(app)));
  }
  // For checking command lines (README's are, by a test): parse, then stop before running anything.
  if (const char* parse_only = std::getenv("HETSTENCIL_PARSE_ONLY"); parse_only && std::string(parse_only) == "1") {
    return kExitSuccess;
  }
  // The library logs through its own logger; the command's own messages through spdlog's default one.
  hetstencil::set_log_level(verbose ? hetstencil::LogLevel::debug : hetstencil::LogLevel::warn);
  spdlog::set_default_logger(spdlog::stderr_color_mt("hetstencil"));
  spdlog::set_level(verbose ? spdlog::level::debug : spdlog::level::warn);
  // Under an MPI launcher the processes of the job solve together; a process
  // that fails ends them all, naming its rank, since the others would wait
  // for it forever.
  std::optional<hetstencil::MpiSession> mpi;
  const auto fail = [&](const std::string& message, int code) {
    if (mpi && mpi->size() > 1) {
      std::fprintf(stderr, "hetstencil: error: rank %d of %d: %s\n", mpi->rank(), mpi->size(), message.c_str());
      std::fflush(stderr);
      mpi->abort(code);
    }
    std::fprintf(stderr, "hetstencil: error: %s\n", message.c_str());
    return code;
  };
  try {
    if (hetstencil::launched_by_mpi()) {
      say_when_ended(launcher_variable({"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"}),
                     launcher_variable({"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}));
      mpi.emplace();
      say_when_ended(std::to_string(mpi->rank()), std::to_string(mpi->size()));
      if (mpi->size() > 1 && !app.get_subcommand("solve")->parsed()) {
        return fail("only 'hetstencil solve' runs over several processes; start other commands without a launcher",
                    kExitUsage);
      }
      hetstencil::cli::solve_over(mpi->world());
    }
    for (auto& [sub, run] : commands) {
      if (sub->parsed()) return run();
    }
  } catch (const hetstencil::InvalidArgument& e) {
    return fail(e.what(), kExitUsage);
  } catch (const hetstencil::Error& e) {
    spdlog::debug("raised at {}:{}", e.file(), e.line());
    return fail(e.what(), kExitFailure);
  } catch (const std::exception& e) {
    return fail(e.what(), kExitFailure);
  }
  return kExitFailure;
}
