#include "devices/affinity.hpp"

#include <pthread.h>
#include <sched.h>

#include <cstring>

#include "core/log.hpp"

namespace hetstencil {

void bind_current_thread(const std::string& who, const std::vector<int>& cpus) {
  if (cpus.empty()) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cpus) {
    if (cpu >= 0 && cpu < CPU_SETSIZE) CPU_SET(cpu, &set);
  }
  const int rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  if (rc != 0) {
    log::warn("{}: cannot bind to CPU {}: {}; running unbound", who, cpus.front(), std::strerror(rc));
  }
}

}  // namespace hetstencil
