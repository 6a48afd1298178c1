#include "tools/hetstencil/plot.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <spdlog/fmt/fmt.h>

namespace hetstencil::cli {

bool draw_plot(const std::string& script, const std::string& csv, const std::string& png, const std::string& title) {
  const char* tools_env = std::getenv("HETSTENCIL_TOOLS_DIR");
  const std::string path = std::string(tools_env ? tools_env : HETSTENCIL_TOOLS_DIR) + "/" + script;
  const char* python_env = std::getenv("HETSTENCIL_PYTHON");
  const std::string python =
      python_env ? python_env : (access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3");
  const pid_t child = fork();
  if (child == 0) {
    execlp(python.c_str(), python.c_str(), path.c_str(), csv.c_str(), png.c_str(), "--title", title.c_str(),
           static_cast<char*>(nullptr));
    std::fprintf(stderr, "hetstencil: cannot run %s: %s\n", python.c_str(), std::strerror(errno));
    _exit(127);
  }
  int status = 0;
  bool drawn = false;
  if (child > 0) {
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    drawn = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  if (!drawn) fmt::print(stderr, "hetstencil: the plot was not drawn; draw it with: {} {} {} {}\n", python, path, csv, png);
  return drawn;
}

}  // namespace hetstencil::cli
