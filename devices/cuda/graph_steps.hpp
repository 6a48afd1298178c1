// The iterations of a slab without neighbours, between two checks, and its
// checks, launched as CUDA graphs: nothing of the host stands between their
// sweeps, where a small grid's iteration is otherwise mostly launches and
// waits. One graph per step count, first buffer and check buffers, captured on
// its first use.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "devices/cuda/cuda_check.hpp"
#include "devices/cuda/cuda_resources.hpp"

namespace hetstencil::cuda {

class GraphSteps {
 public:
  /// Ready for a slab's buffers: the graphs of the last ones are dropped.
  void reset(const std::string& context) {
    graphs_.clear();
    start_ = Event(context, true);
    done_ = Event(context, true);
  }
  void clear() { graphs_.clear(); }

  /// Steps [t, t + steps) on `stream`, from buffer `buffer` of `buffers`
  /// taken in turn, as one graph (`queue_step(s)` queues step s's launches
  /// when it is captured), waited for. `last`: the solve's last steps, whose
  /// graph, unless captured already, would serve once; they run as graphs of
  /// one step instead. On an H200, capturing, instantiating and first
  /// launching a graph of 57 sweeps took 0.2 ms beyond its later launches,
  /// while a graph of one sweep launched 57 times took 0.06 ms longer than
  /// the graph of 57. Returns the GPU seconds they took.
  template <class QueueStep>
  double run(std::int64_t t, std::int64_t steps, int buffer, int buffers, bool last, cudaStream_t stream,
             const std::string& context, QueueStep&& queue_step) {
    const Key whole{steps, buffer, -1};
    if (!last || steps == 1 || graphs_.count(whole) != 0) {
      const Graph& graph = captured(whole, stream, context, [&] {
        for (std::int64_t s = t; s < t + steps; ++s) queue_step(s);
      });
      return timed(stream, context, [&] { graph.launch(stream, context); });
    }
    std::vector<const Graph*> one_step;
    for (std::int64_t s = t; s < t + std::min<std::int64_t>(steps, buffers); ++s) {
      one_step.push_back(&captured({1, static_cast<int>((buffer + (s - t)) % buffers), -1}, stream, context,
                                   [&] { queue_step(s); }));
    }
    return timed(stream, context, [&] {
      for (std::int64_t k = 0; k < steps; ++k) one_step[static_cast<std::size_t>(k % buffers)]->launch(stream, context);
    });
  }

  /// A check of the iterate in buffer `buffer` into the check buffers `check`
  /// (`queue()` queues its launches and copies), `steps` (0 or 1) the sweeps
  /// it makes on the way, as one graph on `stream`, waited for. Returns the
  /// GPU seconds it took.
  template <class Queue>
  double run_check(std::int64_t steps, int buffer, int check, cudaStream_t stream, const std::string& context,
                   Queue&& queue) {
    const Graph& graph = captured({steps, buffer, check}, stream, context, queue);
    return timed(stream, context, [&] { graph.launch(stream, context); });
  }

 private:
  using Key = std::tuple<std::int64_t, int, int>;  // steps, first buffer, check buffers (-1: none)

  template <class Queue>
  const Graph& captured(const Key& key, cudaStream_t stream, const std::string& context, Queue&& queue) {
    auto graph = graphs_.find(key);
    if (graph == graphs_.end()) graph = graphs_.emplace(key, Graph(stream, context, queue)).first;
    return graph->second;
  }

  // What `launch()` queues on `stream`, waited for: its GPU seconds.
  template <class Launch>
  double timed(cudaStream_t stream, const std::string& context, Launch&& launch) {
    HETSTENCIL_CUDA_CHECK(cudaEventRecord(start_, stream), context);
    launch();
    HETSTENCIL_CUDA_CHECK(cudaEventRecord(done_, stream), context);
    HETSTENCIL_CUDA_CHECK(cudaEventSynchronize(done_), context);
    float ms = 0.0f;
    HETSTENCIL_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, done_), context);
    return 1e-3 * static_cast<double>(ms);
  }

  std::map<Key, Graph> graphs_;
  Event start_;
  Event done_;
};

}  // namespace hetstencil::cuda
