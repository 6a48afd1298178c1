#include "tools/hetstencil/progress_line.hpp"

#include <unistd.h>

#include <cstdio>

#include <spdlog/fmt/fmt.h>

namespace hetstencil::cli {

struct ProgressLine::State {
  bool shown = false;  // something is on the line
};

ProgressLine::ProgressLine(bool wanted) {
  if (wanted && isatty(STDERR_FILENO)) state_ = std::make_shared<State>();
}

ProgressLine::~ProgressLine() { finish(); }

ProgressCallback ProgressLine::callback() {
  if (!state_) return nullptr;
  return [state = state_](const Progress& p) {
    if (p.elapsed_s < 1.0 || p.iteration <= 0) return;
    const double per_iteration = p.elapsed_s / static_cast<double>(p.iteration);
    const double remaining = per_iteration * static_cast<double>(p.max_iterations - p.iteration);
    std::string line = fmt::format("iteration {}/{} ({:.0f}%), {:.1f} s elapsed, {} {:.1f} s left", p.iteration,
                                   p.max_iterations, 100.0 * static_cast<double>(p.iteration) /
                                                         static_cast<double>(std::max<std::int64_t>(p.max_iterations, 1)),
                                   p.elapsed_s, p.initial_residual.l2 > 0.0 ? "at most" : "about", remaining);
    if (p.checked) {
      line += fmt::format(", residual {:.3e}", p.residual.l2);
      if (p.initial_residual.l2 > 0.0) line += fmt::format(" ({:.2e} of the initial)", p.residual.l2 / p.initial_residual.l2);
    }
    // \r and clear-to-end-of-line: the next update overwrites this one.
    fmt::print(stderr, "\r{}\033[K", line);
    std::fflush(stderr);
    state->shown = true;
  };
}

void ProgressLine::finish() {
  if (state_ && state_->shown) {
    fmt::print(stderr, "\r\033[K");
    std::fflush(stderr);
    state_->shown = false;
  }
}

}  // namespace hetstencil::cli
