// Spin-then-block synchronization for device threads.
//
// Waiting threads spin a bounded number of times (a neighbour is usually
// microseconds behind), then sleep on a condition variable so that an
// oversubscribed machine (several devices sharing two cores in CI) still makes
// progress. Every wait also watches an abort flag: when any thread of a solve
// fails, all others leave their waits with Aborted instead of hanging.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace hetstencil {

/// Whether e is an Aborted: a consequence of another thread's failure.
bool is_aborted(const std::exception_ptr& e);

/// Of two failures, the one to report: a real error wins over an Aborted it caused.
inline bool replaces(const std::exception_ptr& candidate, const std::exception_ptr& current) {
  return candidate && (!current || (is_aborted(current) && !is_aborted(candidate)));
}

/// Starts a thread running `body`; where the system gives no thread, throws
/// SystemError naming `who` and pthread_create's error.
std::thread start_thread(const std::string& who, std::function<void()> body);

/// Runs task(k) for k = 0..n-1, each on a thread of its own, and rethrows the
/// first real failure (not an Aborted that it caused elsewhere). on_failure runs
/// at once when a task throws, or when a thread cannot be started (then the
/// threads started are joined and a SystemError names who(k), "task k of n"
/// without it), so that the others can stop. Returns the seconds from the
/// first start to the last end.
double run_on_threads(std::size_t n, const std::function<void(std::size_t)>& task,
                      const std::function<void()>& on_failure = {},
                      const std::function<std::string(std::size_t)>& who = {});

/// How long a waiter spins before it sleeps: long where every thread has a core
/// of its own, short where threads outnumber cores.
int spin_limit_for(int threads, int cores);

/// A monotonic counter that threads can wait on ("iterate t is published").
class Counter {
 public:
  explicit Counter(int spins = 0) : spins_(spins) {}
  std::int64_t value() const { return value_.load(std::memory_order_acquire); }
  /// Stores v (>= the current value) and wakes the sleepers.
  void advance_to(std::int64_t v);
  /// Returns once value() >= v; throws Aborted once *abort is set.
  void wait_at_least(std::int64_t v, const std::atomic<bool>& abort);

 private:
  std::atomic<std::int64_t> value_{0};
  std::atomic<int> sleepers_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
  int spins_;
};

/// A reusable barrier for a number of threads.
class Barrier {
 public:
  explicit Barrier(int threads, int spins = 0) : threads_(threads), generation_(spins) {}
  /// Returns when all threads arrived; throws Aborted once *abort is set.
  void wait(const std::atomic<bool>& abort);
  /// The threads that meet at it from now on; only while none waits. Also
  /// forgets arrivals left by threads that an abort took out of their wait.
  void resize(int threads) {
    threads_ = threads;
    arrived_.store(0, std::memory_order_relaxed);
  }

 private:
  int threads_;
  std::atomic<int> arrived_{0};
  Counter generation_;
};

}  // namespace hetstencil
