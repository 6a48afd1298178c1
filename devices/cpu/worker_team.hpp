// A team of persistent pthreads, each bound to its own core, that run one body
// together (the workers of a CPU socket device).
#pragma once

#include <atomic>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "devices/sync.hpp"

namespace hetstencil {

class WorkerTeam {
 public:
  /// One worker per entry of `cpus`, bound to those OS processor indices (an
  /// empty entry leaves the worker unbound). `spins` as in Counter. Throws
  /// SystemError, naming the team and the system's error, where a worker
  /// cannot be started (the workers started are stopped first).
  WorkerTeam(std::string name, std::vector<std::vector<int>> cpus, int spins);
  ~WorkerTeam();
  WorkerTeam(const WorkerTeam&) = delete;
  WorkerTeam& operator=(const WorkerTeam&) = delete;

  int size() const { return static_cast<int>(threads_.size()); }
  /// The workers the runs use: the first `workers` of the team run the body
  /// and meet at its barrier; the others sleep. A worker that spins at a
  /// barrier holds its core: on a virtual machine whose team fills every
  /// vCPU the hypervisor then stops some of them, and the whole team waits
  /// for each (docs/model.md). 1..size(); refused during a run.
  void use(int workers);

  /// Runs body(worker) on every worker and returns when all are done. If a worker
  /// throws, `abort` is set so that every waiting thread of the solve leaves its
  /// wait, and the first exception that is not Aborted is rethrown here.
  void run(const std::function<void(int)>& body, std::atomic<bool>& abort);
  /// The same with an abort flag of the team's own.
  void run(const std::function<void(int)>& body);

  /// The barrier between the workers of the running body.
  void sync() { barrier_.wait(*abort_); }

 private:
  void worker_main(int worker, std::vector<int> cpus);
  /// Ends and joins the workers.
  void stop();

  std::string name_;
  std::vector<std::thread> threads_;
  Barrier barrier_;
  std::mutex mutex_;
  std::condition_variable job_ready_;
  std::condition_variable job_done_;
  const std::function<void(int)>* body_ = nullptr;
  std::atomic<bool>* abort_ = nullptr;
  std::atomic<bool> own_abort_{false};
  std::uint64_t generation_ = 0;
  int finished_ = 0;
  int used_ = 0;
  bool running_ = false;
  bool stopping_ = false;
  std::exception_ptr error_;
};

}  // namespace hetstencil
