// Progress of a long solve on a terminal: one line on stderr, rewritten in place.
#pragma once

#include <memory>

#include "hetstencil/runtime.hpp"

namespace hetstencil::cli {

class ProgressLine {
 public:
  /// Shows progress only when `wanted` and stderr is a terminal (never in JSON
  /// mode or into a file), and only once a solve has run for a second.
  explicit ProgressLine(bool wanted);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  /// For Runtime::solve; empty when progress is not shown.
  ProgressCallback callback();
  /// Clears the line once the solve has returned.
  void finish();

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace hetstencil::cli
