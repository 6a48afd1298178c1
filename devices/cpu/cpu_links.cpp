#include "devices/cpu/cpu_links.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "devices/affinity.hpp"
#include "devices/cpu/numa_buffer.hpp"
#include "devices/sync.hpp"

namespace hetstencil {

std::vector<std::pair<double, double>> cpu_link_samples(const CpuEnd& from, const CpuEnd& to,
                                                        const std::vector<double>& sizes, int repetitions) {
  using Clock = std::chrono::steady_clock;
  const auto bytes = static_cast<std::size_t>(*std::max_element(sizes.begin(), sizes.end()));
  NumaBuffer source(bytes, from.numa_node, from.name), target(bytes, to.numa_node, to.name);
  std::memset(source.data(), 1, bytes);
  std::memset(target.data(), 0, bytes);
  const int rounds = 50 * repetitions;
  std::vector<std::pair<double, double>> samples;
  std::atomic<bool> abort{false};
  for (double b : sizes) {
    Counter published(20000), pulled(20000);
    double seconds = 0.0;
    std::thread receiver([&] {
      bind_current_thread(to.name, to.cpus);
      for (int k = 1; k <= rounds; ++k) {
        published.wait_at_least(k, abort);
        std::memcpy(target.data(), source.data(), static_cast<std::size_t>(b));
        pulled.advance_to(k);
      }
    });
    std::thread sender([&] {
      bind_current_thread(from.name, from.cpus);
      const Clock::time_point begin = Clock::now();
      for (int k = 1; k <= rounds; ++k) {
        published.advance_to(k);
        pulled.wait_at_least(k, abort);
      }
      seconds = std::chrono::duration<double>(Clock::now() - begin).count() / (2.0 * rounds);
    });
    sender.join();
    receiver.join();
    samples.push_back({b, seconds});
  }
  return samples;
}

}  // namespace hetstencil
