// hetstencil: probe, solve and benchmark stencil solves on every CPU socket and
// GPU of this machine. A thin client of the library in runtime/.
#include <cstdio>
#include <map>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "hetstencil/error.hpp"
#include "tools/hetstencil/commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"hetstencil: 2-D Poisson Jacobi solves on every CPU socket and GPU of this machine at once"};
  app.require_subcommand(1);
  bool verbose = false;
  app.add_flag("-v,--verbose", verbose, "log what the runtime does (to stderr)");
  std::map<CLI::App*, hetstencil::cli::Command> commands;
  for (auto add : {hetstencil::cli::add_probe_command, hetstencil::cli::add_solve_command, hetstencil::cli::add_sweep_command,
                   hetstencil::cli::add_bench_command, hetstencil::cli::add_model_commands}) {
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
    std::fprintf(stderr, "hetstencil: unknown command '%s' (commands: probe, solve, sweep, bench, calibrate, profile, predict, plan; see --help)\n", argv[1]);
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  spdlog::set_default_logger(spdlog::stderr_color_mt("hetstencil"));
  spdlog::set_level(verbose ? spdlog::level::debug : spdlog::level::warn);
  try {
    for (auto& [sub, run] : commands) {
      if (sub->parsed()) return run();
    }
  } catch (const hetstencil::InvalidArgument& e) {
    std::fprintf(stderr, "hetstencil: error: %s\n", e.what());
    return 2;
  } catch (const hetstencil::Error& e) {
    std::fprintf(stderr, "hetstencil: error: %s\n", e.what());
    spdlog::debug("raised at {}:{}", e.file(), e.line());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hetstencil: error: %s\n", e.what());
    return 1;
  }
  return 1;
}
