// Runs the hetstencil command as a user would, with a private profile cache:
// its exit code, stdout and stderr apart.
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace hetstencil::test {

struct CliResult {
  int exit_code = -1;  // -1: it did not exit (a signal)
  std::string out;
  std::string err;
  double seconds = 0.0;  // by run_command_line
};

inline std::string read_all(const std::filesystem::path& file) {
  std::ifstream in(file);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// The folders own_folder made in this process, for RemoveOwnFolders.
inline std::set<std::filesystem::path>& own_folders() {
  static std::set<std::filesystem::path> made;
  return made;
}

/// A folder of this test process's own under the temporary folder.
inline std::filesystem::path own_folder(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / (name + "_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  own_folders().insert(dir);
  return dir;
}

/// Runs `cli args...` in `cwd` with `env` (NAME=VALUE) added; no shell between.
inline CliResult run_command(const std::string& cli, const std::vector<std::string>& args,
                             const std::filesystem::path& cwd, const std::vector<std::string>& env = {}) {
  const auto files = own_folder("hetstencil_cli_output");
  const auto out_file = files / "out", err_file = files / "err";
  // Named here, not in the child: a folder named after the child's pid would outlive the test.
  const auto cache = own_folder("hetstencil_cli_cache");
  std::vector<std::string> argv_text{cli};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t child = fork();
  if (child == 0) {
    const int out = open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0 || err < 0 || dup2(out, STDOUT_FILENO) < 0 || dup2(err, STDERR_FILENO) < 0 || chdir(cwd.c_str()) != 0) {
      _exit(125);
    }
    setenv("XDG_CACHE_HOME", cache.c_str(), 1);
    for (const auto& e : env) putenv(const_cast<char*>(e.c_str()));
    execv(cli.c_str(), argv.data());
    _exit(126);
  }
  CliResult r;
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child) return r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_all(out_file);
  r.err = read_all(err_file);
  return r;
}

/// Runs the command line `cli args` through the shell, as a user types it
/// (quotes, redirections), with the profile cache `cache`.
inline CliResult run_command_line(const std::string& cli, const std::string& args,
                                  const std::filesystem::path& cache) {
  const auto err_file = own_folder("hetstencil_cli_output") / "line_err";
  const std::string command = "XDG_CACHE_HOME=" + cache.string() + " " + cli + " " + args + " 2>" + err_file.string();
  CliResult r;
  const auto start = std::chrono::steady_clock::now();
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) r.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = read_all(err_file);
  std::filesystem::remove(err_file);
  return r;
}

/// Removes the folders own_folder made, once every test has run.
class RemoveOwnFolders : public ::testing::Environment {
 public:
  void TearDown() override {
    std::error_code ignored;
    for (const auto& dir : own_folders()) std::filesystem::remove_all(dir, ignored);
    own_folders().clear();
  }
};

/// Registered once for every test program that includes this header.
inline const auto* const remove_own_folders = ::testing::AddGlobalTestEnvironment(new RemoveOwnFolders);

}  // namespace hetstencil::test
