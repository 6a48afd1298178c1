#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "hetstencil/statistics.hpp"

namespace hetstencil {

double host_canary_bytes_per_s() {
  constexpr std::size_t kBytes = std::size_t{16} << 20;
  static std::vector<char> from(kBytes, 1), to(kBytes, 0);
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t part = kBytes / threads;
  std::vector<double> seconds;
  for (int rep = 0; rep < 3; ++rep) {
    const auto begin = std::chrono::steady_clock::now();
    std::vector<std::thread> team;
    for (unsigned t = 0; t < threads; ++t) {
      team.emplace_back([&, t] { std::memcpy(to.data() + t * part, from.data() + t * part, part); });
    }
    for (auto& th : team) th.join();
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
  }
  return 2.0 * static_cast<double>(part * threads) / median(seconds);
}

}  // namespace hetstencil
