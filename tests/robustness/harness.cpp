#include "tests/robustness/harness.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "hetstencil/error.hpp"

namespace hetstencil::robustness {
namespace {

constexpr uid_t kNobody = 65534;

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Tally {
  int cases = 0;
  int crashes = 0;
  int hangs = 0;
  int lost = 0;
};

std::mutex tally_mutex;
std::map<std::string, Tally>& tallies() {
  static std::map<std::string, Tally> t;
  return t;
}

class RobustnessSummary : public ::testing::Environment {
 public:
  void TearDown() override {
    const std::lock_guard<std::mutex> lock(tally_mutex);
    Tally total;
    std::printf("\nrobustness summary\n%-14s %6s %8s %6s %10s\n", "class", "cases", "crashes", "hangs", "data lost");
    for (const auto& [cls, t] : tallies()) {
      std::printf("%-14s %6d %8d %6d %10d\n", cls.c_str(), t.cases, t.crashes, t.hangs, t.lost);
      total.cases += t.cases;
      total.crashes += t.crashes;
      total.hangs += t.hangs;
      total.lost += t.lost;
    }
    std::printf("%-14s %6d %8d %6d %10d\n", "total", total.cases, total.crashes, total.hangs, total.lost);
    std::fflush(stdout);
  }
};
const auto* const summary = ::testing::AddGlobalTestEnvironment(new RobustnessSummary);

// What only a library's own error text says: the user must never see it.
const char* const kRawWordings[] = {"terminate called", "what():", "stoll", "stoi", "stod", "bad_variant_access",
                                    "basic_filebuf", "Could not convert", "bad_alloc", "json.exception", "std::"};
const char* const kSanitizerReports[] = {"ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                                         "WARNING: ThreadSanitizer"};

// Waits for `pid` (its own process group), sending the case's signal when due
// and killing the group at the time limit.
Outcome wait_for(int pid, double started, int timeout_s, const RunOptions& options) {
  Outcome o;
  bool sent = false;
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) {
      ADD_FAILURE() << "waitpid: " << std::strerror(errno);
      return o;
    }
    const double elapsed = now_s() - started;
    if (options.send_signal != 0 && !sent && (!options.signal_when || options.signal_when(elapsed))) {
      kill(pid, options.send_signal);
      sent = true;
    }
    if (elapsed > timeout_s) {
      o.hung = true;
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  kill(-pid, SIGKILL);  // whatever it started and left behind (plot scripts)
  o.seconds = now_s() - started;
  if (WIFSIGNALED(status)) {
    o.signal = WTERMSIG(status);
    o.exit_code = 128 + o.signal;
  } else {
    o.exit_code = WEXITSTATUS(status);
  }
  return o;
}

void redirect(int fd, const std::string& file, int flags) {
  const int f = open(file.c_str(), flags, 0644);
  if (f < 0 || dup2(f, fd) < 0) _exit(126);
  close(f);
}

}  // namespace

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

Sandbox::Sandbox() {
  std::string pattern = (fs::temp_directory_path() / "hetstencil_robust_XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp: " + std::string(std::strerror(errno)));
  root_ = pattern;
  fs::permissions(root_, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                             fs::perms::others_read | fs::perms::others_exec);
  for (const char* sub : {"cwd", "cache", "tmp"}) fs::create_directory(root_ / sub);
}

Sandbox::~Sandbox() {
  if (::testing::Test::HasFailure()) {
    std::fprintf(stderr, "robustness: the failed case's files are kept in %s\n", root_.c_str());
    return;
  }
  std::error_code ec;
  fs::remove_all(root_, ec);
}

fs::path Sandbox::write(const std::string& name, const std::string& text) const {
  const fs::path p = root_ / name;
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

void Sandbox::give_to_nobody() const {
  if (lchown(root_.c_str(), kNobody, kNobody) != 0) ADD_FAILURE() << "lchown " << root_ << ": " << std::strerror(errno);
  for (const auto& e : fs::recursive_directory_iterator(root_)) {
    if (lchown(e.path().c_str(), kNobody, kNobody) != 0) ADD_FAILURE() << "lchown " << e.path() << ": " << std::strerror(errno);
  }
}

Started start_cli(const Sandbox& box, const std::vector<std::string>& args, const RunOptions& options) {
  Started s;
  s.out_file = (box.root() / "stdout").string();
  s.err_file = (box.root() / "stderr").string();
  s.timeout_s = options.timeout_s;
  static int runs = 0;  // runs at once each get their own output files
  const std::string n = std::to_string(++runs);
  s.out_file += n;
  s.err_file += n;
  std::vector<std::string> argv;
  if (options.unprivileged) argv = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
  argv.push_back(HETSTENCIL_CLI);
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> c_argv;
  for (auto& a : argv) c_argv.push_back(a.data());
  c_argv.push_back(nullptr);
  const std::string cwd = (box.root() / "cwd").string();
  const std::string cache = box.cache().string();
  const std::string tmp = (box.root() / "tmp").string();

  s.started = now_s();
  s.pid = fork();
  if (s.pid < 0) {
    ADD_FAILURE() << "fork: " << std::strerror(errno);
    return s;
  }
  if (s.pid == 0) {
    setpgid(0, 0);
    redirect(STDIN_FILENO, "/dev/null", O_RDONLY);
    redirect(STDOUT_FILENO, s.out_file, O_WRONLY | O_CREAT | O_TRUNC);
    redirect(STDERR_FILENO, s.err_file, O_WRONLY | O_CREAT | O_TRUNC);
    if (chdir(cwd.c_str()) != 0) _exit(126);
    setenv("XDG_CACHE_HOME", cache.c_str(), 1);
    setenv("TMPDIR", tmp.c_str(), 1);
    for (const auto& e : options.env) putenv(const_cast<char*>(e.c_str()));
    if (options.address_space) {
      const rlimit l{*options.address_space, *options.address_space};
      if (setrlimit(RLIMIT_AS, &l) != 0) _exit(126);
    }
    if (options.processes) {
      const rlimit l{*options.processes, *options.processes};
      if (setrlimit(RLIMIT_NPROC, &l) != 0) _exit(126);
    }
    execvp(c_argv[0], c_argv.data());
    _exit(127);
  }
  setpgid(s.pid, s.pid);
  return s;
}

Outcome finish(const Started& s, const RunOptions& options) {
  if (s.pid < 0) return {};
  Outcome o = wait_for(s.pid, s.started, s.timeout_s, options);
  o.out = read_file(s.out_file);
  o.err = read_file(s.err_file);
  fs::remove(s.out_file);
  fs::remove(s.err_file);
  return o;
}

Outcome run_cli(const Sandbox& box, const std::vector<std::string>& args, const RunOptions& options) {
  return finish(start_cli(box, args, options), options);
}

Outcome run_library(const std::function<void()>& body, int timeout_s) {
  char err_name[] = "/tmp/hetstencil_robust_err_XXXXXX";
  const int err_fd = mkstemp(err_name);
  if (err_fd < 0) {
    ADD_FAILURE() << "mkstemp: " << std::strerror(errno);
    return {};
  }
  std::fflush(nullptr);
  const double started = now_s();
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    dup2(err_fd, STDERR_FILENO);
    int code = 0;
    try {
      body();
    } catch (const InvalidArgument& e) {
      std::fprintf(stderr, "hetstencil: error: %s\n", e.what());
      code = 2;
    } catch (const Error& e) {
      std::fprintf(stderr, "hetstencil: error: %s\n", e.what());
      code = 1;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "a foreign exception reached the caller (%s): %s\n", typeid(e).name(), e.what());
      code = 4;
    }
    std::fflush(nullptr);
    _exit(code);
  }
  close(err_fd);
  if (pid < 0) {
    ADD_FAILURE() << "fork: " << std::strerror(errno);
    return {};
  }
  setpgid(pid, pid);
  RunOptions none;
  Outcome o = wait_for(pid, started, timeout_s, none);
  o.err = read_file(err_name);
  fs::remove(err_name);
  return o;
}

void check(const std::string& cls, const std::string& what, const Outcome& o, Expect expect, int signal_sent) {
  bool crashed = o.signal != 0 && o.signal != signal_sent && !o.hung;
  for (const char* report : kSanitizerReports) {
    if (o.err.find(report) != std::string::npos) crashed = true;
  }
  {
    const std::lock_guard<std::mutex> lock(tally_mutex);
    Tally& t = tallies()[cls];
    ++t.cases;
    t.crashes += crashed;
    t.hangs += o.hung;
  }
  const std::string context = "[" + cls + "] " + what + "\nexit " + std::to_string(o.exit_code) + " after " +
                              std::to_string(o.seconds) + " s\nstderr: " + o.err.substr(0, 2000);
  EXPECT_FALSE(o.hung) << "HANG " << context;
  EXPECT_FALSE(crashed) << "CRASH " << context;
  if (o.hung || crashed) return;
  const int code = o.exit_code;
  const bool allowed = (code >= 0 && code <= 3) || (signal_sent != 0 && code == 128 + signal_sent);
  EXPECT_TRUE(allowed) << "exit code outside 0-3 " << context;
  if (code == 1 || code == 2) {
    EXPECT_NE(o.err.find("hetstencil: error:"), std::string::npos) << "failed without saying so " << context;
  }
  for (const char* raw : kRawWordings) {
    EXPECT_EQ(o.err.find(raw), std::string::npos) << "a library's raw wording '" << raw << "' " << context;
    EXPECT_EQ(o.out.find(raw), std::string::npos) << "a library's raw wording '" << raw << "' on stdout " << context;
  }
  switch (expect) {
    case Expect::Any: break;
    case Expect::Success: EXPECT_TRUE(code == 0 || code == 3) << "expected to succeed " << context; break;
    case Expect::Fails: EXPECT_TRUE(code == 1 || code == 2) << "expected a clear failure " << context; break;
    case Expect::Refused: EXPECT_EQ(code, 2) << "expected to be refused as a usage error " << context; break;
  }
}

void check_kept(const std::string& cls, const std::string& what, bool kept, const std::string& detail) {
  if (!kept) {
    const std::lock_guard<std::mutex> lock(tally_mutex);
    ++tallies()[cls].lost;
  }
  EXPECT_TRUE(kept) << "DATA LOST [" << cls << "] " << what << ": " << detail;
}

Outcome cli_case(const Sandbox& box, const std::string& cls, const std::vector<std::string>& args, Expect expect,
                 const RunOptions& options) {
  std::string what = "hetstencil";
  for (const auto& a : args) what += " '" + (a.size() > 60 ? a.substr(0, 60) + "...(" + std::to_string(a.size()) + " chars)" : a) + "'";
  const Outcome o = run_cli(box, args, options);
  check(cls, what, o, expect, options.send_signal);
  const auto left = temporary_files(box.root());
  check_kept(cls, what, left.empty(), left.empty() ? "" : "a temporary file was left: " + left.front().string());
  for (const auto& a : args) {
    // A path is named in messages as it is; a long value is cut.
    if (a.size() > 100 && a.find('/') == std::string::npos) {
      EXPECT_EQ(o.err.find(a), std::string::npos) << "a " << a.size() << "-character argument echoed whole: " << what;
    }
  }
  return o;
}

std::vector<fs::path> temporary_files(const fs::path& dir) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (it->path().filename().string().find(".tmp") != std::string::npos) found.push_back(it->path());
  }
  return found;
}

bool complete_npy(const fs::path& p, std::int64_t nx, std::int64_t ny, int value_bytes) {
  const std::string s = read_file(p);
  if (s.size() < 12 || s.compare(0, 6, "\x93NUMPY") != 0) return false;
  const auto byte = [&](std::size_t i) { return static_cast<std::size_t>(static_cast<unsigned char>(s[i])); };
  const std::size_t header = s[6] == 1 ? 10 + (byte(8) | byte(9) << 8)
                                       : 12 + (byte(8) | byte(9) << 8 | byte(10) << 16 | byte(11) << 24);
  return s.size() == header + static_cast<std::size_t>((nx + 2) * (ny + 2) * value_bytes);
}

bool complete_png(const fs::path& p) {
  const std::string s = read_file(p);
  return s.size() > 20 && s.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0 && s.find("IEND", s.size() - 12) != std::string::npos;
}

bool complete_text(const fs::path& p) {
  const std::string s = read_file(p);
  return !s.empty() && s.back() == '\n';
}

bool some_file_holds(const fs::path& dir, const std::string& content) {
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (it->is_regular_file() && !it->is_symlink() && fs::file_size(it->path(), ec) == content.size() &&
        read_file(it->path()) == content) {
      return true;
    }
  }
  return false;
}

std::string why_not_root() {
  static const std::string why = [] {
    if (geteuid() != 0) return std::string("needs root (to run as uid 65534 and make device nodes)");
    const std::string probe = "setpriv --reuid=65534 --regid=65534 --clear-groups test -x " + std::string(HETSTENCIL_CLI) +
                              " >/dev/null 2>&1";
    if (std::system(probe.c_str()) != 0) {
      return "uid 65534 cannot run " + std::string(HETSTENCIL_CLI) + " (setpriv missing, or a folder on the way is closed)";
    }
    return std::string();
  }();
  return why;
}

}  // namespace hetstencil::robustness
