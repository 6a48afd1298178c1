// Small helpers shared by the tests.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>

#include "hetstencil/reference.hpp"
#include "hetstencil/runtime.hpp"

namespace hetstencil::testing_support {

// Built with AddressSanitizer or ThreadSanitizer, whose shadow memory needs
// more address space than any limit a test sets.
inline bool sanitized() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
  return true;
#endif
#endif
  return false;
}

// Under a tight limit of threads or address space the NVIDIA driver cannot
// start (seen on an H100 host: its own thread start aborts the process, its
// address reservation fails) before hetstencil does anything; tests of those
// limits run where no driver is loaded: CI and every machine without a GPU.
inline std::string why_limits_cannot_be_tested() {
  return access("/dev/nvidiactl", F_OK) == 0
             ? "the NVIDIA driver needs more threads and address space to start than this test allows"
             : "";
}

/// This machine's cores cut into `devices` CPU devices of `threads` workers
/// each, and no GPU.
inline RuntimeOptions cpu_devices(int devices, int threads) {
  RuntimeOptions o;
  o.cpu_devices = devices;
  o.threads_per_device = threads;
  o.devices = "cpu";
  return o;
}

/// The problem the exactness suites run on every device combination: a boundary
/// of 0.5 and the spike, 40 iterations, or a tolerance checked every 7 (so
/// that some solves stop early and some run to the 400 cap).
inline Problem exactness_problem(std::int64_t nx, std::int64_t ny, Precision precision, bool tolerance) {
  Problem p;
  p.nx = nx;
  p.ny = ny;
  p.precision = precision;
  p.boundary = Boundary::constant(0.5);
  if (tolerance) {
    p.stop.tolerance = 0.3;
    p.stop.check_every = 7;
    p.stop.max_iterations = 400;
  } else {
    p.stop.max_iterations = 40;
  }
  return p;
}

/// A random blocked solve over `devices` devices: an exactness problem of up to
/// `most_nx` columns and `devices * depth` rows plus up to `extra_rows`, run for
/// up to `most_iterations` (checks every 1..9 with a tolerance), a grid source
/// one trial in three; each device at least `depth` rows and a random part of
/// the rest, in a random order. `trial` picks precision and stop rule.
struct BlockedTrial {
  Problem problem;
  Plan plan;
  std::string description;  ///< for SCOPED_TRACE
};

inline BlockedTrial random_blocked_trial(std::mt19937& rng, int trial, int depth, std::int64_t devices,
                                         std::int64_t most_nx, std::int64_t extra_rows, std::int64_t most_iterations) {
  const auto draw = [&](std::int64_t n) { return static_cast<std::int64_t>(rng() % static_cast<unsigned>(n)); };
  BlockedTrial t;
  Problem& p = t.problem;
  p = exactness_problem(1 + draw(most_nx), devices * depth + draw(extra_rows),
                        trial % 2 ? Precision::Float : Precision::Double, trial % 4 >= 2);
  if (p.stop.uses_tolerance()) p.stop.check_every = 1 + draw(9);
  p.stop.max_iterations = 1 + draw(most_iterations);
  if (trial % 3 == 0) {
    std::vector<double> f(static_cast<std::size_t>(p.nx * p.ny));
    for (auto& v : f) v = std::uniform_real_distribution<double>(-50, 50)(rng);
    p.source = Source::from_grid(f);
  }
  std::vector<std::int64_t> rows(static_cast<std::size_t>(devices), depth);
  for (std::int64_t left = p.ny - devices * depth; left > 0; --left) ++rows[static_cast<std::size_t>(draw(devices))];
  std::vector<std::size_t> order(static_cast<std::size_t>(devices));
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::shuffle(order.begin(), order.end(), rng);
  t.plan = Plan({}, {Variant::Blocked, depth});
  std::int64_t first = 1;
  t.description = "trial " + std::to_string(trial) + ": K " + std::to_string(depth) + ", " + std::to_string(p.nx) +
                  " x " + std::to_string(p.ny) + ", rows";
  for (std::size_t k = 0; k < order.size(); ++k) {
    t.plan.parts.push_back({order[k], first, rows[k]});
    first += rows[k];
    t.description += (k ? "/" : " ") + std::to_string(rows[k]);
  }
  t.description += ", " + std::to_string(p.stop.max_iterations) + " iterations, checks every " +
                   (p.stop.uses_tolerance() ? std::to_string(p.stop.check_every) : std::string("-"));
  return t;
}

/// Same values bit for bit (the first difference is named), same iterations,
/// same convergence, same residual bits.
template <class T>
void expect_same_bits(const Result& got, const Result& want) {
  const auto& a = got.grid<T>().values();
  const auto& b = want.grid<T>().values();
  ASSERT_EQ(a.size(), b.size());
  std::size_t first_diff = a.size();
  for (std::size_t k = 0; k < a.size() && first_diff == a.size(); ++k) {
    if (std::memcmp(&a[k], &b[k], sizeof(T)) != 0) first_diff = k;
  }
  EXPECT_EQ(first_diff, a.size()) << "first differing value at flat index " << first_diff << ": "
                                  << (first_diff < a.size() ? a[first_diff] : T(0)) << " vs "
                                  << (first_diff < a.size() ? b[first_diff] : T(0));
  EXPECT_EQ(got.report.iterations, want.report.iterations);
  EXPECT_EQ(got.report.converged, want.report.converged);
  EXPECT_EQ(std::memcmp(&got.report.residual, &want.report.residual, sizeof(Residual)), 0)
      << got.report.residual.l2 << " vs " << want.report.residual.l2;
}

// A problem of stencil `s` on a grid of the given sizes (nz: planes, 3-D
// stencils only): with an even `variety` the spike and a constant boundary,
// otherwise a source and a boundary from functions; `iterations` of them, or
// with a tolerance stop checked every 7 (at most 300).
inline Problem stencil_problem(const Stencil& s, Precision precision, std::int64_t nx, std::int64_t ny,
                               std::int64_t nz, bool tolerance, int variety, std::int64_t iterations) {
  Problem p;
  p.stencil = s;
  p.precision = precision;
  p.nx = nx;
  p.ny = ny;
  p.nz = s.dimension == 3 ? nz : 0;
  if (variety % 2 == 0) {
    p.boundary = Boundary::constant(0.5);
  } else if (s.dimension == 3) {
    p.source = Source::from_function_3d([](double x, double y, double z) { return std::exp(x) * std::cos(3 * y) - z; });
  } else {
    p.source = Source::from_function([](double x, double y) { return std::exp(x) * std::cos(3 * y); });
    p.boundary = Boundary::from_function([](double x, double y) { return x * x - y; });
  }
  if (tolerance) {
    p.stop.max_iterations = 300;
    p.stop.tolerance = 0.3;
    p.stop.check_every = 7;
  } else {
    p.stop.max_iterations = iterations;
  }
  return p;
}

// `p` with its boundary and source 10 to 100 times the least normal number of
// its precision, 40 iterations: its values run through zeros of both signs and
// subnormals, where a quotient by the diagonal takes the division's slow ways.
inline Problem through_subnormals(Problem p) {
  const double tiny = p.precision == Precision::Float ? 1e-37 : 1e-305;
  p.boundary = Boundary::constant(-tiny);
  p.source = p.stencil.dimension == 3
                 ? Source::from_function_3d([tiny](double x, double y, double z) { return tiny * (x - y + z); })
                 : Source::from_function([tiny](double x, double y) { return tiny * (x - y); });
  p.stop.max_iterations = 40;
  return p;
}

// Offsets anywhere within radius 4, random weights, a dominant diagonal (the
// tolerance stop is met); `points` above 32 takes the kernel's large table.
inline Stencil random_stencil(int dimension, unsigned seed, std::size_t points) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> offset(-kMaxStencilRadius, kMaxStencilRadius);
  std::uniform_real_distribution<double> weight(-1.0, 1.0);
  Stencil s;
  s.name = "random" + std::to_string(seed);
  s.dimension = dimension;
  while (s.points.size() < points) {
    StencilPoint q{offset(rng), offset(rng), dimension == 3 ? offset(rng) : 0, weight(rng)};
    bool fresh = !(q.dx == 0 && q.dy == 0 && q.dz == 0);
    for (const StencilPoint& o : s.points) fresh = fresh && !(o.dx == q.dx && o.dy == q.dy && o.dz == q.dz);
    if (fresh) s.points.push_back(q);
  }
  s.diagonal = static_cast<double>(points) + weight(rng);
  s.source_scale = {0.5 + weight(rng), seed % 2 == 0};
  return s;
}

inline void expect_same_bits(const Result& got, const Result& want) {
  if (std::holds_alternative<Grid<float>>(want.solution)) {
    expect_same_bits<float>(got, want);
  } else {
    expect_same_bits<double>(got, want);
  }
}

// Uneven: each device but the last takes the radius x depth of units plus its
// index (the first device the fewest), the last the rest; blocked when depth > 1.
inline Plan uneven_plan(const Problem& p, std::size_t devices, int depth = 1) {
  const std::int64_t least = p.stencil.radius() * depth;
  Plan plan;
  std::int64_t first = 1;
  for (std::size_t k = 0; k < devices; ++k) {
    const std::int64_t count = k + 1 == devices ? p.units() - first + 1 : least + static_cast<std::int64_t>(k);
    plan.parts.push_back({k, first, count});
    first += count;
  }
  if (depth > 1) plan.variant = VariantChoice{Variant::Blocked, depth};
  return plan;
}

// The runtime's solve of `p` over `plan` gives the reference's bits, iterations and residual.
inline void expect_reference(Runtime& runtime, const Problem& p, const Plan& plan) {
  const Result reference = solve_reference(p);
  const Result solved = runtime.solve(p, plan);
  expect_same_bits(solved, reference);
  EXPECT_EQ(solved.report.iterations, reference.report.iterations);
  EXPECT_EQ(solved.report.residual.l2, reference.report.residual.l2);
  EXPECT_EQ(solved.report.residual.max, reference.report.residual.max);
}

/// A folder of the test's own under /tmp (`prefix` names it), removed with everything in it
/// when the Scratch goes.
class Scratch {
 public:
  explicit Scratch(const std::string& prefix) {
    std::string name = "/tmp/" + prefix + "_XXXXXX";
    if (mkdtemp(name.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + name);
    path_ = name;
  }
  ~Scratch() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace hetstencil::testing_support
