#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>

#include <sys/resource.h>
#include <unistd.h>

#include <spdlog/fmt/fmt.h>

#include "hetstencil/statistics.hpp"

namespace hetstencil {
namespace {

double clock_ticks() { return static_cast<double>(sysconf(_SC_CLK_TCK)); }

bool others_crowd(const HostLoad::Figures& f) { return f.others > HostLoad::kCrowdingCores && f.others > f.idle; }
bool steal_crowds(const HostLoad::Figures& f) { return f.stolen > HostLoad::kCrowdingCores; }

}  // namespace

bool HostLoad::Figures::crowded() const { return steal_crowds(*this) || others_crowd(*this); }

std::string HostLoad::Figures::describe() const {
  if (others < 0.0 || !crowded()) return "";
  std::string said;
  if (others_crowd(*this)) {
    said = fmt::format("other processes took {:.1f} cores while it ran ({:.1f} left idle)", others, idle);
  }
  if (steal_crowds(*this)) {
    // A thread of a team that the hypervisor stops holds up every other at
    // the team's next barrier, for as long as the hypervisor keeps it.
    said += fmt::format("{}the hypervisor took {:.1f} cores' worth of the machine's CPUs while they had work (where "
                        "a CPU device's workers fill its cores, fewer threads leave it room)",
                        said.empty() ? "" : "; ", stolen);
  }
  return said;
}

HostLoad::HostLoad() : start_(read()) {}

HostLoad::Reading HostLoad::read() {
  Reading r;
  r.wall = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  std::ifstream stat("/proc/stat");
  std::string cpu;
  double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  if (!(stat >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal) || cpu != "cpu") return r;
  rusage self{};
  if (getrusage(RUSAGE_SELF, &self) != 0) return r;
  const auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec);
  };
  const double tick = clock_ticks();
  r.host = (user + nice + system + irq + softirq) / tick;
  r.idle = (idle + iowait) / tick;
  r.steal = steal / tick;
  r.ours = seconds(self.ru_utime) + seconds(self.ru_stime);
  r.valid = true;
  return r;
}

HostLoad::Figures HostLoad::since_start() const {
  const Reading now = read();
  Figures f;
  const double wall = now.wall - start_.wall;
  if (!start_.valid || !now.valid || !(wall > 0.0)) return f;
  // Beyond the clock ticks' granularity.
  const double taken = (now.host - start_.host) - (now.ours - start_.ours);
  f.others = std::max(0.0, taken - 2.0 / clock_ticks()) / wall;
  f.idle = (now.idle - start_.idle) / wall;
  f.stolen = std::max(0.0, now.steal - start_.steal - 2.0 / clock_ticks()) / wall;
  return f;
}

}  // namespace hetstencil
