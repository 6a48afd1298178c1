#include "hetstencil/runtime.hpp"

#include <algorithm>
#include <mutex>
#include <tuple>

#include <spdlog/fmt/fmt.h>

#include "core/log.hpp"
#include "devices/backend.hpp"
#include "devices/transport/transport.hpp"
#include "hetstencil/error.hpp"
#include "model/predict.hpp"
#include "partition/policy.hpp"
#include "runtime/executor.hpp"
#include "runtime/machine_profile.hpp"
#include "runtime/processes.hpp"

namespace hetstencil {

struct Runtime::Impl {
  Topology topology;
  std::vector<std::unique_ptr<Device>> devices;
  // Every process's devices; with one process, this one's.
  std::vector<DeviceInfo> infos;
  int spins = 0;
  // A solve over several processes: who they are, which holds each device,
  // this one's devices, and every process's profile as the last plan() had it.
  std::unique_ptr<Processes> processes;
  GpuTransport gpu_transport = GpuTransport::Auto;
  std::vector<int> owner;
  std::vector<DeviceInfo> mine;
  std::optional<Profile> spread_profile;
  // The links between neighbouring processes, measured by the first plan
  // over them for messages of this many bytes.
  std::size_t links_bytes = 0;
  std::vector<ProcessLink> links;

  // The links between neighbouring processes, in words: "r0->r1 31 us + 1.2 GB/s, ...".
  std::string links_text() const {
    std::string text;
    for (std::size_t r = 0; r < links.size(); ++r) {
      for (const auto& [from, to, c] : {std::tuple{r, r + 1, links[r].down}, std::tuple{r + 1, r, links[r].up}}) {
        text += (text.empty() ? "" : ", ") + ("r" + std::to_string(from) + "->r" + std::to_string(to)) + " " +
                fmt::format("{:.1f} us + bytes at {:.2f} GB/s", c.latency_s * 1e6, c.bytes_per_s / 1e9);
      }
    }
    return text;
  }

  // The plan over every process's devices: the model's where every process's
  // profile covers its devices and it gives each process rows, else even.
  Plan spread_plan(const Problem& problem, const VariantChoice& variant) {
    spread_profile = gather_profiles(*processes, profile->profile());
    // Ghost rows a side of a round; measured again for a problem of other rows.
    const std::size_t ghost_bytes = row_bytes(problem.nx, problem.precision) * static_cast<std::size_t>(halo_depth(variant));
    if (ghost_bytes != links_bytes) {
      links = measure_process_links(*processes, ghost_bytes);
      links_bytes = ghost_bytes;
      if (processes->rank() == 0 && !profile->path().empty()) keep_process_links(profile->path(), links, ghost_bytes);
    }
    add_process_links(*spread_profile, links, infos, owner);
    const std::string over = std::to_string(processes->size()) + " processes";
    std::string why = "no model of every process's devices for this problem; hetstencil calibrate on each node "
                      "makes one";
    if (covers(*spread_profile, infos, problem.precision, problem.nx, variant)) {
      Topology described;  // GPU memory bounds are each process's: left to its own check before the solve
      described.this_machine = false;
      Plan plan = model_plan(*spread_profile, infos, described, problem, variant);
      std::vector<bool> has_rows(static_cast<std::size_t>(processes->size()), false);
      for (const Assignment& a : plan.parts) has_rows[static_cast<std::size_t>(owner[a.device])] = true;
      const auto idle = std::find(has_rows.begin(), has_rows.end(), false);
      if (idle == has_rows.end()) {
        plan.origin = "planned over " + over + " from each one's profile and the links between them measured now (" +
                      links_text() + ")";
        return plan;
      }
      why = "the model leaves rank " + std::to_string(idle - has_rows.begin()) + " out, and every process takes part";
    }
    Plan plan = hetstencil::even_plan(infos, problem);
    plan.variant = variant;
    plan.origin = "even over " + over + " (" + why + "; links between them measured now: " + links_text() + ")";
    plan.prediction = predict_plan(*spread_profile, infos, plan, problem);
    return plan;
  }
  // The devices (their threads and slabs) serve one solve at a time.
  std::mutex solving;
  std::unique_ptr<ProfileKeeper> profile;
  // The profile serves one plan, prediction or lesson at a time.
  std::mutex modelling;
  // The constant stencils solved so far, each said to diverge or not once
  // (say_if_divergent): solved under `solving`.
  std::vector<Stencil> growth_checked;

  // A constant stencil whose sweeps grow an error mode diverges whatever the
  // split and the devices: said once a Runtime, before its first solve.
  void say_if_divergent(const Stencil& stencil) {
    if (stencil.variable) return;
    if (std::find(growth_checked.begin(), growth_checked.end(), stencil) != growth_checked.end()) return;
    growth_checked.push_back(stencil);
    const double growth = jacobi_growth(stencil);
    if (!sweeps_diverge(growth)) return;
    log::warn("{}: its Jacobi sweeps diverge: each multiplies the error's fastest-growing mode by up to {:.4f} (the "
              "largest |sum of w_k e^(i theta.o_k)| / |d|), so the iterate grows without bound and, in enough "
              "sweeps, overflows",
              stencil.name, growth);
  }
};

std::vector<DeviceInfo> devices_of(const Topology& topology, const RuntimeOptions& options) {
  std::vector<DeviceInfo> out;
  for (const auto& spec : map_devices(topology, DeviceMapOptions{options.cpu_devices, options.threads_per_device,
                                                                 options.devices, true, {}})) {
    out.push_back(spec.info);
  }
  return out;
}

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

// A stencil without a model: every device (each has a kernel for any stencil)
// an equal share of the split axis's units.
Plan stencil_even_plan(const std::vector<DeviceInfo>& devices, const Problem& problem) {
  Plan plan = hetstencil::even_plan(devices, problem);
  plan.origin = "even over the devices with a kernel for the stencil '" + problem.stencil.name + "'";
  return plan;
}

// Whether `named` has curves measured for the problem's stencil at its own
// width for every device of `plan` (the devices with a kernel for it).
bool measured_stencil(const Profile& named, const std::vector<DeviceInfo>& devices, const Plan& plan,
                      const Problem& problem) {
  const std::string key = stencil_rate_key(problem);
  return std::all_of(plan.parts.begin(), plan.parts.end(), [&](const Assignment& a) {
    const auto it = named.devices.find(devices[a.device].name);
    return it != named.devices.end() && it->second.rates.count(key) > 0;
  });
}

// The model's plan of a stencil other than poisson5 over the devices of `even`,
// or `even` with the model's prediction where it has no curve of one of them,
// measured or estimated.
Plan stencil_model_plan(const std::optional<Profile>& named, const std::vector<DeviceInfo>& devices,
                        const Topology& topology, const Problem& problem, Plan even, const std::string& path) {
  if (!named) {
    even.origin += path.empty() ? " (a described machine has no model)" : " (no profile of this machine)";
    return even;
  }
  const StencilModel model = model_for_stencil(*named, problem);
  std::vector<DeviceInfo> able;
  for (const Assignment& a : even.parts) able.push_back(devices[a.device]);
  if (!covers(model.profile, able, model.units.precision, model.units.nx)) {
    even.origin += " (no curves of it or of a stencil to estimate it from; hetstencil calibrate makes them)";
    even.prediction = predict_plan(model.profile, devices, even, model.units);
    return even;
  }
  Plan plan = model_plan(model.profile, able, topology, model.units, even.variant);
  // Its parts index `able`, not every device.
  for (Assignment& part : plan.parts) part.device = even.parts[part.device].device;
  plan.left_out.insert(plan.left_out.begin(), even.left_out.begin(), even.left_out.end());
  plan.origin = "planned from " + path + (model.estimated.empty() ? "" : " (" + model.estimated + ")");
  return plan;
}

}  // namespace

Runtime::Runtime(RuntimeOptions options) : impl_(std::make_unique<Impl>()) {
  check_gpu_transport(options.gpu_transport);
  impl_->gpu_transport = options.gpu_transport;
  if (options.communicator) impl_->processes = join_processes(*options.communicator);
  const auto make = [&] {
    impl_->topology = load_topology(options.topology);
    DeviceMapOptions mapping{options.cpu_devices, options.threads_per_device, options.devices, true, {}};
    if (impl_->processes && options.rank_devices == RankDevices::Local) {
      mapping.only = local_device(impl_->topology, options, impl_->processes->local_rank());
    }
    MachineDevices machine = make_devices(impl_->topology, mapping);
    impl_->spins = machine.spins;
    impl_->devices = std::move(machine.devices);
    for (const auto& d : impl_->devices) {
      impl_->mine.push_back(d->info());
      log::debug("{}: {}", d->info().name, d->info().description);
    }
    impl_->profile = std::make_unique<ProfileKeeper>(impl_->topology, std::move(machine.specs), options.profile);
  };
  if (!impl_->processes) {
    make();
    impl_->infos = impl_->mine;
    return;
  }
  // A process that cannot make its devices ends the constructor on every process.
  agree(*impl_->processes, make);
  impl_->infos = gather_devices(*impl_->processes, impl_->mine, impl_->owner);
}

Runtime::~Runtime() = default;
Runtime::Runtime(Runtime&&) noexcept = default;
Runtime& Runtime::operator=(Runtime&&) noexcept = default;

const std::vector<DeviceInfo>& Runtime::devices() const { return impl_->infos; }
const Topology& Runtime::topology() const { return impl_->topology; }
int Runtime::rank() const { return impl_->processes ? impl_->processes->rank() : 0; }
int Runtime::processes() const { return impl_->processes ? impl_->processes->size() : 1; }

Plan Runtime::even_plan(const Problem& problem) const {
  if (!is_poisson5(problem.stencil)) return stencil_even_plan(impl_->infos, problem);
  return hetstencil::even_plan(impl_->infos, problem);
}

Plan Runtime::plan(const Problem& problem, const PlanOptions& options) {
  problem.validate();
  const bool poisson5 = is_poisson5(problem.stencil);
  Plan even;
  if (!poisson5) {
    even = stencil_even_plan(impl_->infos, problem);
    even.variant = options.variant;
    if (processes() > 1) {
      even.origin += " (the model plans one process's devices)";
      return even;
    }
  }
  const std::lock_guard<std::mutex> lock(impl_->modelling);
  ProfileKeeper& keeper = *impl_->profile;
  // This process's devices: over several processes, each measures its own.
  const auto covered = [&] {
    if (!keeper.profile()) return false;
    return poisson5 ? covers(*keeper.profile(), impl_->mine, problem.precision, problem.nx, options.variant)
                    : measured_stencil(*keeper.profile(), impl_->infos, even, problem);
  };
  const auto calibrate = [&] {
    if (!options.calibrate || keeper.path().empty() || covered()) return;
    if (reporting_for == impl_.get()) {
      HETSTENCIL_THROW(InvalidArgument, "Runtime::plan would calibrate from the progress callback of a solve on the "
                                        "same Runtime, which waits for that solve forever; plan after it returns");
    }
    // Not for grids this host cannot hold: the solve would refuse them after the calibration.
    check_host_grids(problem);
    // Measured alone: a solve beside it would slow both and skew the figures.
    const std::lock_guard<std::mutex> alone(impl_->solving);
    keeper.calibrate(problem, options.budget_s, options.variant, options.notify);
  };
  if (processes() > 1) {
    agree(*impl_->processes, calibrate);
    return impl_->spread_plan(problem, options.variant);
  }
  calibrate();
  if (!poisson5) {
    return stencil_model_plan(keeper.profile(), impl_->infos, impl_->topology, problem, std::move(even), keeper.path());
  }
  if (covered()) {
    Plan plan = model_plan(*keeper.profile(), impl_->infos, impl_->topology, problem, options.variant);
    plan.origin = "planned from " + keeper.path();
    if (const std::string caution = caution_of(*plan.prediction); !caution.empty()) plan.origin += " (" + caution + ")";
    return plan;
  }
  Plan plan = even_plan(problem);
  plan.variant = options.variant;
  plan.origin = keeper.path().empty()
                    ? "even (a described machine has no model)"
                    : "even (no model of this machine for this problem; hetstencil calibrate makes one)";
  if (keeper.profile()) plan.prediction = predict_plan(*keeper.profile(), impl_->infos, plan, problem);
  return plan;
}

std::optional<Prediction> Runtime::predict(const Problem& problem, const Plan& plan) {
  const std::lock_guard<std::mutex> lock(impl_->modelling);
  const auto& profile = processes() > 1 ? impl_->spread_profile : impl_->profile->profile();
  if (!profile) return std::nullopt;
  const StencilModel model = model_for_stencil(*profile, problem);
  return predict_plan(model.profile, impl_->infos, plan, model.units);
}

int Runtime::learn(const Report& report, const VariantChoice& variant) {
  if (processes() > 1) return 0;
  const std::lock_guard<std::mutex> lock(impl_->modelling);
  return impl_->profile->learn(report, variant);
}

const std::string& Runtime::profile_path() const { return impl_->profile->path(); }

std::string Runtime::profile_not_saved() const {
  const std::lock_guard<std::mutex> lock(impl_->modelling);
  return impl_->profile->not_saved();
}

namespace {

// The report of a solve of `plan`: where its split came from, and the plan's
// prediction as the run went.
Result finished(Result result, const Problem& problem, const Plan& plan) {
  // The executor's word on the links between processes, if any, follows.
  const std::string links = result.report.split;
  result.report.split = plan.origin.empty() ? "as given" : plan.origin;
  if (!links.empty()) result.report.split += "; " + links;
  result.report.poisson5 = is_poisson5(problem.stencil);
  result.report.left_out = plan.left_out;
  if (plan.prediction) {
    // As the run went: a tolerance may have stopped it early.
    Prediction& p = result.report.predicted.emplace(*plan.prediction);
    p.iterations = result.report.iterations;
    p.checks = residual_checks(problem.stop, p.iterations);
    p.total_s = run_total_s(p);
  }
  return result;
}

}  // namespace

Result Runtime::solve(const Problem& problem) { return solve(problem, plan(problem)); }

Result Runtime::solve(const Problem& problem, const Plan& plan) { return solve(problem, plan, nullptr); }

Result Runtime::solve(const Problem& problem, const Plan& plan, const ProgressCallback& progress, double every_s) {
  const void* self = impl_.get();
  if (reporting_for == self) {
    HETSTENCIL_THROW(InvalidArgument, "Runtime::solve called from the progress callback of a solve on the same "
                                      "Runtime, which would wait for that solve forever; solve after it returns "
                                      "or on another Runtime");
  }
  TuningOf tuning;
  {
    const std::lock_guard<std::mutex> modelling(impl_->modelling);
    tuning = impl_->profile->tuning_for(problem);
  }
  const std::lock_guard<std::mutex> lock(impl_->solving);
  impl_->say_if_divergent(problem.stencil);
  ProgressCallback watched;
  if (progress) {
    watched = [self, &progress](const Progress& p) {
      const Reporting reporting(self);
      progress(p);
    };
  }
  std::vector<Device*> devices;
  if (!impl_->processes) {
    for (auto& d : impl_->devices) devices.push_back(d.get());
    return finished(execute(problem, plan, devices, impl_->spins, ProgressWatch{watched, every_s}, nullptr, tuning),
                    problem, plan);
  }
  // Every process's devices by index, ours in place and null for the others'.
  Spread spread{impl_->processes.get(), impl_->owner, {}, impl_->gpu_transport};
  std::size_t mine = 0;
  for (std::size_t k = 0; k < impl_->infos.size(); ++k) {
    spread.names.push_back(impl_->infos[k].name);
    devices.push_back(impl_->owner[k] == rank() ? impl_->devices[mine++].get() : nullptr);
  }
  const Plan shared = rank0_plan(*impl_->processes, plan);
  return finished(execute(problem, shared, devices, impl_->spins, ProgressWatch{watched, every_s}, &spread, tuning),
                  problem, shared);
}

}  // namespace hetstencil
