#include "tools/hetstencil/plot.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <spdlog/fmt/fmt.h>

#include "hetstencil/error.hpp"

namespace hetstencil::cli {
namespace {

// The child's exit status when python could not be started at all.
constexpr int kNotStarted = 127;

// The folder of the plotting scripts: HETSTENCIL_TOOLS_DIR when set; else, for
// an installed command, share/hetstencil/plot beside its bin folder; else (a
// command in its build tree) the source tree's tools folder.
std::string scripts_dir(const std::string& script) {
  if (const char* env = std::getenv("HETSTENCIL_TOOLS_DIR")) return env;
  char exe[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = '\0';
    std::string dir(exe);
    dir = dir.substr(0, dir.rfind('/')) + "/" + HETSTENCIL_PLOT_DIR_FROM_BIN;
    if (access((dir + "/" + script).c_str(), R_OK) == 0) return dir;
  }
  return HETSTENCIL_SOURCE_TOOLS_DIR;
}

}  // namespace

void check_plot_options(const std::string& csv, const std::string& png) {
  if (!png.empty() && csv.empty()) {
    HETSTENCIL_THROW(InvalidArgument, "--plot " + png + " is drawn from the CSV: give --csv FILE too");
  }
}

void draw_plot(const std::string& script, const std::string& csv, const std::string& png, const std::string& title) {
  const std::string path = scripts_dir(script) + "/" + script;
  const char* python_env = std::getenv("HETSTENCIL_PYTHON");
  const std::string python =
      python_env ? python_env : (access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3");
  const std::string by_hand = fmt::format("{} is written; draw the plot with: {} {} {} {}", csv, python, path, csv, png);
  std::fflush(stdout);
  const pid_t child = fork();
  if (child < 0) {
    HETSTENCIL_THROW(SystemError, fmt::format("the plot {} was not drawn: fork failed: {}; {}", png,
                                              std::strerror(errno), by_hand));
  }
  if (child == 0) {
    // The script's own output is a log: stdout carries the command's results.
    dup2(STDERR_FILENO, STDOUT_FILENO);
    execlp(python.c_str(), python.c_str(), path.c_str(), csv.c_str(), png.c_str(), "--title", title.c_str(),
           static_cast<char*>(nullptr));
    std::fprintf(stderr, "hetstencil: cannot run %s: %s\n", python.c_str(), std::strerror(errno));
    _exit(kNotStarted);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) {
      HETSTENCIL_THROW(SystemError, fmt::format("the plot {} was not drawn: waitpid failed: {}; {}", png,
                                                std::strerror(errno), by_hand));
    }
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return;
  std::string why;
  if (WIFEXITED(status) && WEXITSTATUS(status) == kNotStarted) {
    why = python + " could not be run (install python3 and python3-matplotlib)";
  } else if (WIFEXITED(status)) {
    why = fmt::format("{} {} failed with exit status {} (its message is above; it needs python3-matplotlib)", python,
                      path, WEXITSTATUS(status));
  } else {
    why = fmt::format("{} {} was stopped by signal {}", python, path, WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  }
  HETSTENCIL_THROW(Error, fmt::format("the plot {} was not drawn: {}; {}", png, why, by_hand));
}

}  // namespace hetstencil::cli
