// The robustness suite's harness: runs the hetstencil command line (or a piece
// of the library, in a child process) with hostile inputs, each case in a folder
// and cache of its own, and checks what must hold whatever the message:
//
//   - no crash: not ended by a signal it was not sent, no sanitizer report;
//   - no hang: it ends within the case's time limit (else it is killed);
//   - exit 0, 1, 2 or 3 (or 128+N for the signal N it was sent); on 1 or 2,
//     "hetstencil: error:" on stderr, and never a library's raw wording;
//   - no data lost: checked by each case (links stay links, read-only files and
//     devices stay as they were, no temporary file is left behind).
//
// Every case is counted under its class; the suite ends with a table of
// classes, cases, crashes, hangs and data lost (RobustnessSummary).
#pragma once

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tests/test_support.hpp"

namespace hetstencil::robustness {

namespace fs = std::filesystem;

struct Outcome {
  int exit_code = -1;  ///< the exit status, or 128+N when ended by signal N
  int signal = 0;      ///< the signal that ended it (0: it exited)
  bool hung = false;   ///< killed at the time limit
  double seconds = 0.0;
  std::string out;
  std::string err;
};

struct RunOptions {
  int timeout_s = 60;
  std::vector<std::string> env;             ///< extra NAME=VALUE
  std::optional<rlim_t> address_space;      ///< RLIMIT_AS in bytes (ulimit -v)
  std::optional<rlim_t> processes;          ///< RLIMIT_NPROC (ulimit -u); needs unprivileged
  bool unprivileged = false;                ///< run as uid/gid 65534 (setpriv), where permissions apply
  int send_signal = 0;                      ///< sent once `signal_when` says so
  std::function<bool(double seconds)> signal_when;
};

/// A case's own folder (removed at the end unless the case failed) with
/// cwd/, cache/ (its XDG_CACHE_HOME) and tmp/ (its TMPDIR) under it.
class Sandbox {
 public:
  Sandbox();
  ~Sandbox();
  Sandbox(const Sandbox&) = delete;
  Sandbox& operator=(const Sandbox&) = delete;
  const fs::path& root() const { return root_; }
  fs::path path(const std::string& name) const { return root_ / name; }
  fs::path cache() const { return root_ / "cache"; }
  /// Writes `text` to `name` under the folder; returns its path.
  fs::path write(const std::string& name, const std::string& text) const;
  /// Hands the folder to uid/gid 65534 (for RunOptions::unprivileged).
  void give_to_nobody() const;

 private:
  fs::path root_;
};

/// Runs the hetstencil command line with `args` in `box` (cwd, cache, TMPDIR).
Outcome run_cli(const Sandbox& box, const std::vector<std::string>& args, const RunOptions& options = {});
/// Starts it and returns its pid; finish() waits for it (for runs at once).
struct Started {
  int pid = -1;
  std::string out_file, err_file;
  double started = 0.0;
  int timeout_s = 60;
};
Started start_cli(const Sandbox& box, const std::vector<std::string>& args, const RunOptions& options = {});
Outcome finish(const Started& s, const RunOptions& options = {});

/// Runs `body` in a child process with the time limit: 0 when it returns, 2 when
/// it throws hetstencil::InvalidArgument, 1 for another hetstencil::Error, 4 for
/// any other exception (named on stderr: a library's raw error reached the user).
Outcome run_library(const std::function<void()>& body, int timeout_s = 60);

/// What a failing run must still honour. Refused: exit 2. Fails: exit 1 or 2.
enum class Expect { Any, Success, Fails, Refused };

/// Checks the invariants above for one case of `cls` (and `expect`), counts it,
/// and reports a breach as a test failure naming `what`.
void check(const std::string& cls, const std::string& what, const Outcome& o, Expect expect = Expect::Any,
           int signal_sent = 0);
/// Runs the command line in `box`, checks it (check()), and that it left no
/// temporary file in the box and did not echo an argument of over 100
/// characters (a path aside) whole.
Outcome cli_case(const Sandbox& box, const std::string& cls, const std::vector<std::string>& args,
                 Expect expect = Expect::Any, const RunOptions& options = {});
/// A case's own data-loss check: counts a loss under `cls` when !kept.
void check_kept(const std::string& cls, const std::string& what, bool kept, const std::string& detail);

/// Files whose names contain ".tmp" anywhere under `dir`.
std::vector<fs::path> temporary_files(const fs::path& dir);
std::string read_file(const fs::path& p);
/// Whether `p` is a whole .npy file of (ny+2) x (nx+2) values of `value_bytes`.
bool complete_npy(const fs::path& p, std::int64_t nx, std::int64_t ny, int value_bytes);
/// Whether `p` is a whole PNG (signature to IEND).
bool complete_png(const fs::path& p);
/// Whether `p` is non-empty text whose last line ends.
bool complete_text(const fs::path& p);
/// Whether some regular file under `dir` holds exactly `content`.
bool some_file_holds(const fs::path& dir, const std::string& content);

/// Why cases that need root (another uid, device nodes) cannot run here; empty when they can.
std::string why_not_root();
/// The CLI built with a sanitizer that reserves terabytes of address space (ulimit -v cannot apply).
using testing_support::sanitized;

}  // namespace hetstencil::robustness
