#include "hetstencil/runtime.hpp"

#include <mutex>

#include <spdlog/spdlog.h>

#include "devices/backend.hpp"
#include "hetstencil/error.hpp"
#include "core/even_split.hpp"
#include "runtime/executor.hpp"

namespace hetstencil {

struct Runtime::Impl {
  Topology topology;
  std::vector<std::unique_ptr<Device>> devices;
  std::vector<DeviceInfo> infos;
  int spins = 0;
  // The devices (their threads and slabs) serve one solve at a time.
  std::mutex solving;
};

namespace {

// The Runtime whose progress callback this thread is running, if any: a solve
// it starts on that Runtime would wait forever for the one that called it.
thread_local const void* reporting_for = nullptr;

class Reporting {
 public:
  explicit Reporting(const void* runtime) : outer_(reporting_for) { reporting_for = runtime; }
  ~Reporting() { reporting_for = outer_; }
  Reporting(const Reporting&) = delete;
  Reporting& operator=(const Reporting&) = delete;

 private:
  const void* outer_;
};

}  // namespace

Runtime::Runtime(RuntimeOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->topology = load_topology(options.topology);
  MachineDevices machine = make_devices(impl_->topology, DeviceMapOptions{options.cpu_devices, options.threads_per_device,
                                                                           options.devices, true});
  impl_->spins = machine.spins;
  impl_->devices = std::move(machine.devices);
  for (const auto& d : impl_->devices) {
    impl_->infos.push_back(d->info());
    spdlog::debug("{}: {}", d->info().name, d->info().description);
  }
}

Runtime::~Runtime() = default;
Runtime::Runtime(Runtime&&) noexcept = default;
Runtime& Runtime::operator=(Runtime&&) noexcept = default;

const std::vector<DeviceInfo>& Runtime::devices() const { return impl_->infos; }
const Topology& Runtime::topology() const { return impl_->topology; }

Plan Runtime::even_plan(const Problem& problem) const {
  problem.validate();
  const auto n = static_cast<std::int64_t>(impl_->devices.size());
  if (n > problem.ny) {
    HETSTENCIL_THROW(InvalidArgument, "more devices (" + std::to_string(n) + ") than rows (" +
                                          std::to_string(problem.ny) + "): use fewer devices or a taller grid");
  }
  Plan plan;
  for (std::int64_t k = 0; k < n; ++k) {
    const Block b = even_block(problem.ny, n, k);
    plan.parts.push_back(Assignment{static_cast<std::size_t>(k), b.begin + 1, b.size()});
  }
  return plan;
}

Result Runtime::solve(const Problem& problem) { return solve(problem, even_plan(problem)); }

Result Runtime::solve(const Problem& problem, const Plan& plan) { return solve(problem, plan, nullptr); }

Result Runtime::solve(const Problem& problem, const Plan& plan, const ProgressCallback& progress, double every_s) {
  const void* self = impl_.get();
  if (reporting_for == self) {
    HETSTENCIL_THROW(InvalidArgument, "Runtime::solve called from the progress callback of a solve on the same "
                                      "Runtime, which would wait for that solve forever; solve after it returns "
                                      "or on another Runtime");
  }
  const std::lock_guard<std::mutex> lock(impl_->solving);
  ProgressCallback watched;
  if (progress) {
    watched = [self, &progress](const Progress& p) {
      const Reporting reporting(self);
      progress(p);
    };
  }
  std::vector<Device*> devices;
  for (auto& d : impl_->devices) devices.push_back(d.get());
  return execute(problem, plan, devices, impl_->spins, ProgressWatch{watched, every_s});
}

}  // namespace hetstencil
