#include "devices/sync.hpp"

#include <chrono>
#include <string>
#include <system_error>
#include <utility>
#include <thread>
#include <vector>

#include "hetstencil/error.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HETSTENCIL_CPU_RELAX() _mm_pause()
#else
#define HETSTENCIL_CPU_RELAX() std::this_thread::yield()
#endif

namespace hetstencil {

bool is_aborted(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const Aborted&) {
    return true;
  } catch (...) {
    return false;
  }
}

std::thread start_thread(const std::string& who, std::function<void()> body) {
  try {
    return std::thread(std::move(body));
  } catch (const std::system_error& e) {
    HETSTENCIL_THROW(SystemError, who + ": cannot start a thread: " + e.code().message() + " (pthread_create error " +
                                      std::to_string(e.code().value()) +
                                      "); fewer threads (--threads) or a higher limit on processes (ulimit -u) help");
  }
}

double run_on_threads(std::size_t n, const std::function<void(std::size_t)>& task,
                      const std::function<void()>& on_failure, const std::function<std::string(std::size_t)>& who) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::exception_ptr> errors(n);
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (std::size_t k = 0; k < n; ++k) {
    try {
      threads.push_back(start_thread(who ? who(k) : "task " + std::to_string(k) + " of " + std::to_string(n), [&, k] {
        try {
          task(k);
        } catch (...) {
          errors[k] = std::current_exception();
          if (on_failure) on_failure();
        }
      }));
    } catch (...) {
      // The tasks started may wait for this one: they are told to stop first.
      if (on_failure) on_failure();
      for (auto& t : threads) t.join();
      throw;
    }
  }
  for (auto& t : threads) t.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::exception_ptr first;
  for (const auto& e : errors) {
    if (replaces(e, first)) first = e;
  }
  if (first) std::rethrow_exception(first);
  return seconds;
}

int spin_limit_for(int threads, int cores) { return threads <= cores ? 20000 : 50; }

void Counter::advance_to(std::int64_t v) {
  value_.store(v, std::memory_order_seq_cst);
  // A sleeper increments sleepers_ before it tests value_ under the mutex, so
  // either it sees v, or we see it here and wake it (both are seq_cst).
  if (sleepers_.load(std::memory_order_seq_cst) > 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    wake_.notify_all();
  }
}

void Counter::wait_at_least(std::int64_t v, const std::atomic<bool>& abort) {
  for (int i = 0; i < spins_; ++i) {
    if (value_.load(std::memory_order_acquire) >= v) return;
    HETSTENCIL_CPU_RELAX();
  }
  std::unique_lock<std::mutex> lock(mutex_);
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
  // The timeout only bounds how late an abort is noticed; progress wakes us at once.
  while (value_.load(std::memory_order_seq_cst) < v && !abort.load(std::memory_order_acquire)) {
    wake_.wait_for(lock, std::chrono::milliseconds(2));
  }
  sleepers_.fetch_sub(1, std::memory_order_seq_cst);
  if (value_.load(std::memory_order_acquire) < v) {
    HETSTENCIL_THROW(Aborted, "stopped: another thread of this solve failed");
  }
}

void Barrier::wait(const std::atomic<bool>& abort) {
  const std::int64_t generation = generation_.value();
  if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == threads_) {
    arrived_.store(0, std::memory_order_relaxed);
    generation_.advance_to(generation + 1);
    return;
  }
  generation_.wait_at_least(generation + 1, abort);
}

}  // namespace hetstencil
