#include "devices/cpu/worker_team.hpp"

#include <pthread.h>

#include "devices/affinity.hpp"
#include "hetstencil/error.hpp"

namespace hetstencil {

WorkerTeam::WorkerTeam(std::string name, std::vector<std::vector<int>> cpus, int spins)
    : name_(std::move(name)),
      barrier_(static_cast<int>(cpus.size()), spins),
      abort_(&own_abort_),
      used_(static_cast<int>(cpus.size())) {
  if (cpus.empty()) HETSTENCIL_THROW(InvalidArgument, name_ + ": a worker team needs at least one worker");
  threads_.reserve(cpus.size());
  for (std::size_t w = 0; w < cpus.size(); ++w) {
    try {
      threads_.push_back(start_thread(name_ + " worker " + std::to_string(w) + " of " + std::to_string(cpus.size()),
                                      [this, w, worker_cpus = cpus[w]] { worker_main(static_cast<int>(w), worker_cpus); }));
    } catch (...) {
      stop();  // the workers started wait for a job that never comes
      throw;
    }
  }
}

WorkerTeam::~WorkerTeam() { stop(); }

void WorkerTeam::use(int workers) {
  if (workers < 1 || workers > size()) {
    HETSTENCIL_THROW(InvalidArgument, name_ + ": a team of " + std::to_string(size()) + " workers cannot use " +
                                          std::to_string(workers));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (running_) HETSTENCIL_THROW(InvalidArgument, name_ + ": a team's workers change only between runs");
  used_ = workers;
}

void WorkerTeam::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  job_ready_.notify_all();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

void WorkerTeam::worker_main(int worker, std::vector<int> cpus) {
  const std::string who = name_ + "-w" + std::to_string(worker);
  pthread_setname_np(pthread_self(), who.substr(0, 15).c_str());
  bind_current_thread(who, cpus);
  std::uint64_t seen = 0;
  for (;;) {
    const std::function<void(int)>* body = nullptr;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      job_ready_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
      if (worker >= used_) continue;
      body = body_;
    }
    std::exception_ptr error;
    try {
      (*body)(worker);
    } catch (...) {
      error = std::current_exception();
      abort_->store(true);
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (replaces(error, error_)) error_ = error;
    if (++finished_ == used_) job_done_.notify_all();
  }
}

void WorkerTeam::run(const std::function<void(int)>& body, std::atomic<bool>& abort) {
  std::unique_lock<std::mutex> lock(mutex_);
  body_ = &body;
  abort_ = &abort;
  finished_ = 0;
  error_ = nullptr;
  // No worker waits at the barrier between runs: it is sized, and cleared of
  // arrivals an aborted run left, here.
  barrier_.resize(used_);
  running_ = true;
  ++generation_;
  job_ready_.notify_all();
  job_done_.wait(lock, [&] { return finished_ == used_; });
  running_ = false;
  abort_ = &own_abort_;
  if (error_) std::rethrow_exception(error_);
}

void WorkerTeam::run(const std::function<void(int)>& body) {
  own_abort_.store(false);
  run(body, own_abort_);
}

}  // namespace hetstencil
