// How a GPU slab without neighbours walks its iterations: graphs of steps up
// to each check, each check a graph of its own (graph_steps.hpp runs them). A
// plain function of the stop rule: tested without a GPU.
#pragma once

#include <algorithm>
#include <cstdint>

#include "hetstencil/problem.hpp"

namespace hetstencil::cuda {

/// Steps a graph makes at most: launches cost a few microseconds each, so 64
/// make a small grid's loop cost the GPU's time, and the solve still hears of
/// its progress every 64 iterations.
constexpr std::int64_t kMostGraphSteps = 64;

/// Steps from iterate t that one graph may make: up to the next check.
inline std::int64_t graph_steps_from(const StopRule& stop, std::int64_t t) {
  return std::min(stop.next_check(t), t + kMostGraphSteps) - t;
}

/// The iterations of a slab without neighbours, from iterate 0: each check
/// (`check(t, step)` returns whether the solve stops at iterate t; `step`: it
/// sweeps t into t + 1 on the way, as every check but the one after the last
/// iteration does), the steps between in stretches of up to kMostGraphSteps
/// (`sweep(t, steps, last)`, `last`: the solve's last steps), and `post(t)`
/// told of each iterate t reached. Returns the iterate the solve keeps.
template <class Check, class Sweep, class Post>
std::int64_t iterate_alone(const StopRule& stop, Check&& check, Sweep&& sweep, Post&& post) {
  for (std::int64_t t = 0;; ++t) {
    if (t >= stop.max_iterations) {
      check(t, false);
      return t;
    }
    if (stop.checks_at(t)) {
      // A stop here keeps iterate t; the check's sweep made t + 1 in vain.
      if (check(t, true)) return t;
      post(t + 1);
      continue;
    }
    const std::int64_t steps = graph_steps_from(stop, t);
    sweep(t, steps, t + steps == stop.max_iterations);
    post(t + steps);
    t += steps - 1;
  }
}

}  // namespace hetstencil::cuda
