#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <vector>

#include "hetstencil/error.hpp"

namespace hetstencil {
namespace {

std::string directory_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// ---- Temporary files a signal removes -------------------------------------
// A signal handler may only touch lock-free atomics and call async-signal-safe
// functions (unlink, sigaction, raise): the paths live in fixed slots, armed
// once written whole.

constexpr int kFree = 0, kFilling = 1, kArmed = 2;
constexpr std::size_t kSlots = 16;
constexpr std::size_t kPathBytes = 4096;

struct Slot {
  std::atomic<int> state{kFree};
  char path[kPathBytes] = {};
};
std::array<Slot, kSlots> g_slots;
static_assert(std::atomic<int>::is_always_lock_free, "a signal handler reads the slots");

constexpr std::array<int, 3> kSignals{SIGINT, SIGTERM, SIGHUP};
std::array<struct sigaction, kSignals.size()> g_previous{};

extern "C" void remove_temporaries(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  for (Slot& s : g_slots) {
    if (s.state.load() == kArmed) unlink(s.path);
  }
  for (std::size_t k = 0; k < kSignals.size(); ++k) {
    if (kSignals[k] != sig) continue;
    const struct sigaction& previous = g_previous[k];
    if (previous.sa_flags & SA_SIGINFO) {
      previous.sa_sigaction(sig, info, context);
    } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
      previous.sa_handler(sig);
    } else {
      // The default action, once this handler returns and unblocks the signal.
      sigaction(sig, &previous, nullptr);
      raise(sig);
    }
  }
  errno = saved_errno;
}

// Installed at the first file written, after whatever the program installed
// itself, which it then calls in turn. A signal the program ignores stays ignored.
void install_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (std::size_t k = 0; k < kSignals.size(); ++k) {
      if (sigaction(kSignals[k], nullptr, &g_previous[k]) != 0) continue;
      if (!(g_previous[k].sa_flags & SA_SIGINFO) && g_previous[k].sa_handler == SIG_IGN) continue;
      struct sigaction ours {};
      ours.sa_sigaction = remove_temporaries;
      ours.sa_flags = SA_SIGINFO | SA_RESTART;
      sigemptyset(&ours.sa_mask);
      sigaction(kSignals[k], &ours, nullptr);
    }
  });
}

// A slot holding `path`, or -1 when all are taken (the file is then only
// removed by the destructor).
int arm(const std::string& path) {
  if (path.size() >= kPathBytes) return -1;
  install_handlers();
  for (std::size_t k = 0; k < kSlots; ++k) {
    int expected = kFree;
    if (!g_slots[k].state.compare_exchange_strong(expected, kFilling)) continue;
    std::memcpy(g_slots[k].path, path.c_str(), path.size() + 1);
    g_slots[k].state.store(kArmed);
    return static_cast<int>(k);
  }
  return -1;
}

void disarm(int slot) {
  if (slot >= 0) g_slots[static_cast<std::size_t>(slot)].state.store(kFree);
}

// ---- The target ------------------------------------------------------------

[[noreturn]] void refuse(const std::string& path, const std::string& target, const std::string& why) {
  HETSTENCIL_THROW(InvalidArgument, "cannot write '" + path + "'" +
                                        (target == path ? std::string() : " (a link to '" + target + "')") + ": " + why);
}

// `path` with every symlink at its end followed: the file a write replaces.
std::string follow_links(const std::string& path) {
  constexpr int kMostLinks = 40;  // as the kernel's ELOOP
  std::string target = path;
  for (int hops = 0; hops < kMostLinks; ++hops) {
    struct stat st {};
    if (lstat(target.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return target;
    std::vector<char> buffer(kPathBytes);
    const ssize_t n = readlink(target.c_str(), buffer.data(), buffer.size());
    if (n < 0 || static_cast<std::size_t>(n) >= buffer.size()) refuse(path, target, "its link cannot be read");
    const std::string link(buffer.data(), static_cast<std::size_t>(n));
    target = link.front() == '/' ? link : directory_of(target) + "/" + link;
  }
  refuse(path, target, "too many levels of symbolic links");
}

// A name beside `target` that no one else uses (mkstemp's would be 0600).
std::string temporary_name(const std::string& target, unsigned attempt) {
  static std::atomic<unsigned> counter{0};
  struct timespec now {};
  clock_gettime(CLOCK_REALTIME, &now);
  const unsigned long mix = static_cast<unsigned long>(now.tv_nsec) ^ (static_cast<unsigned long>(getpid()) << 20) ^
                            (counter.fetch_add(1) * 2654435761UL) ^ attempt;
  static const char digits[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string suffix;
  for (unsigned long v = mix, k = 0; k < 8; ++k, v /= 36) suffix.push_back(digits[v % 36]);
  return target + ".tmp-" + suffix;
}

}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  if (path_.empty()) HETSTENCIL_THROW(InvalidArgument, "the output path is empty");
  target_ = follow_links(path_);
  struct stat st {};
  const bool exists = stat(target_.c_str(), &st) == 0;
  if (!exists && errno != ENOENT) refuse(path_, target_, std::strerror(errno));
  if (exists) {
    // Checked by path, never opened: opening a FIFO blocks, and a device
    // node must never be replaced by a file.
    if (S_ISDIR(st.st_mode)) refuse(path_, target_, "it is a directory");
    if (!S_ISREG(st.st_mode)) refuse(path_, target_, "it is not a regular file (a device, FIFO or socket)");
    // Root may write anything: the mode bits still say what the owner meant.
    if ((st.st_mode & 0222) == 0) refuse(path_, target_, "the file is read-only");
    if (access(target_.c_str(), W_OK) != 0) refuse(path_, target_, std::strerror(errno));
  }
  for (unsigned attempt = 0; fd_ < 0; ++attempt) {
    temp_ = temporary_name(target_, attempt);
    // Armed before it exists: a signal as it is created still removes it.
    slot_ = arm(temp_);
    fd_ = open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);  // less the umask
    if (fd_ < 0) {
      const int error = errno;
      disarm(slot_);
      slot_ = -1;
      if (error != EEXIST || attempt == 100) {
        temp_.clear();
        HETSTENCIL_THROW(InvalidArgument, "cannot write '" + path_ + "' in '" + directory_of(target_) +
                                              "': " + std::strerror(error));
      }
    }
  }
  if (exists) {
    // The replacement keeps the old file's mode and, where allowed, its owner.
    if (fchmod(fd_, st.st_mode & 07777) != 0) {
      HETSTENCIL_THROW(SystemError, "cannot give '" + temp_ + "' the mode of '" + path_ + "': " + std::strerror(errno));
    }
    if (st.st_uid != geteuid() || st.st_gid != getegid()) (void)!fchown(fd_, st.st_uid, st.st_gid);
  }
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) close(fd_);
  if (!temp_.empty()) unlink(temp_.c_str());
  disarm(slot_);
}

void AtomicFile::write(const void* data, std::size_t bytes) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::write(fd_, p, bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) HETSTENCIL_THROW(SystemError, "writing '" + path_ + "' failed: " + std::strerror(errno));
    p += n;
    bytes -= static_cast<std::size_t>(n);
  }
}

void AtomicFile::commit() {
  if (fsync(fd_) != 0) HETSTENCIL_THROW(SystemError, "writing '" + path_ + "' failed: " + std::strerror(errno));
  const int rc = close(fd_);
  fd_ = -1;
  if (rc != 0) HETSTENCIL_THROW(SystemError, "writing '" + path_ + "' failed: " + std::strerror(errno));
  if (rename(temp_.c_str(), target_.c_str()) != 0) {
    HETSTENCIL_THROW(SystemError, "cannot move the finished file to '" + target_ + "': " + std::strerror(errno));
  }
  temp_.clear();
  disarm(slot_);
  slot_ = -1;
}

}  // namespace hetstencil
