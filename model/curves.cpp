#include "model/curves.hpp"

#include <algorithm>
#include <cmath>

#include "hetstencil/error.hpp"

namespace hetstencil {
namespace {

void make_monotone(std::vector<RateCurve::Point>& points) {
  std::sort(points.begin(), points.end(), [](const auto& a, const auto& b) { return a.rows < b.rows; });
  // Equal row counts: keep one point, their mean.
  std::vector<RateCurve::Point> merged;
  for (const auto& p : points) {
    if (!merged.empty() && merged.back().rows == p.rows) {
      merged.back().seconds = 0.5 * (merged.back().seconds + p.seconds);
    } else {
      merged.push_back(p);
    }
  }
  for (std::size_t k = 1; k < merged.size(); ++k) merged[k].seconds = std::max(merged[k].seconds, merged[k - 1].seconds);
  points = std::move(merged);
}

}  // namespace

RateCurve::RateCurve(std::vector<Point> points) : points_(std::move(points)) {
  for (const auto& p : points_) {
    if (p.rows < 1 || !(p.seconds >= 0.0) || !std::isfinite(p.seconds)) {
      HETSTENCIL_THROW(InvalidArgument, "a rate curve needs rows >= 1 and finite times >= 0");
    }
  }
  make_monotone(points_);
}

double RateCurve::seconds(std::int64_t rows) const {
  if (points_.empty()) HETSTENCIL_THROW(InvalidArgument, "the rate curve has no points");
  if (rows <= 0) return 0.0;
  const auto r = static_cast<double>(rows);
  const Point& first = points_.front();
  if (points_.size() == 1) return first.seconds * r / static_cast<double>(first.rows);
  if (rows <= first.rows) {
    const Point& second = points_[1];
    const double slope = (second.seconds - first.seconds) / static_cast<double>(second.rows - first.rows);
    const double intercept = std::clamp(first.seconds - slope * static_cast<double>(first.rows), 0.0, first.seconds);
    return intercept + (first.seconds - intercept) * r / static_cast<double>(first.rows);
  }
  for (std::size_t k = 1; k < points_.size(); ++k) {
    const Point& a = points_[k - 1];
    const Point& b = points_[k];
    const bool cache_edge =
        b.seconds * static_cast<double>(a.rows) >= kCacheStep * a.seconds * static_cast<double>(b.rows);
    if (cache_edge && (rows <= b.rows || k + 1 == points_.size())) return b.seconds * r / static_cast<double>(b.rows);
    if (rows <= b.rows || k + 1 == points_.size()) {
      const double slope = (b.seconds - a.seconds) / static_cast<double>(b.rows - a.rows);
      return a.seconds + slope * (r - static_cast<double>(a.rows));
    }
  }
  return points_.back().seconds;  // not reached
}

double RateCurve::slowest_row_s(std::int64_t rows) const {
  double slowest = 0.0;
  for (const Point& p : points_) {
    if (p.rows >= rows) slowest = std::max(slowest, p.seconds / static_cast<double>(p.rows));
  }
  return slowest;
}

RateCurve RateCurve::scaled(double factor) const {
  RateCurve c = *this;
  for (auto& p : c.points_) p.seconds *= factor;
  return c;
}

void RateCurve::update(std::int64_t rows, double seconds, double weight) {
  if (rows < 1 || !(seconds >= 0.0) || !std::isfinite(seconds)) return;
  Point* nearest = nullptr;
  for (auto& p : points_) {
    if (std::abs(static_cast<double>(p.rows - rows)) <= 0.25 * static_cast<double>(rows) &&
        (!nearest || std::abs(p.rows - rows) < std::abs(nearest->rows - rows))) {
      nearest = &p;
    }
  }
  if (nearest) {
    // Scale to the point's row count before blending (time ~ rows nearby).
    const double at_point = seconds * static_cast<double>(nearest->rows) / static_cast<double>(rows);
    nearest->seconds = (1.0 - weight) * nearest->seconds + weight * at_point;
  } else {
    points_.push_back({rows, seconds});
  }
  make_monotone(points_);
}

TransferCurve TransferCurve::fit(const std::vector<std::pair<double, double>>& samples) {
  if (samples.empty()) HETSTENCIL_THROW(InvalidArgument, "no transfer samples to fit");
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& [x, y] : samples) {
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  const double n = static_cast<double>(samples.size());
  const double denominator = n * sxx - sx * sx;
  TransferCurve c;
  double slope = denominator > 0 ? (n * sxy - sx * sy) / denominator : 0.0;
  double intercept = (sy - slope * sx) / n;
  if (intercept < 0.0 || slope <= 0.0) {  // refit through the origin
    intercept = 0.0;
    slope = sxx > 0 ? sxy / sxx : 0.0;
  }
  c.latency_s = intercept;
  c.bytes_per_s = slope > 0 ? 1.0 / slope : 0.0;
  return c;
}

}  // namespace hetstencil
