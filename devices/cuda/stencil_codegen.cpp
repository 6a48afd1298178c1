#include "devices/cuda/stencil_codegen.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <type_traits>
#include <vector>

#include "core/quotient.hpp"

namespace hetstencil::cuda {
namespace {

// A value a thread reads in a unit: that of its cell `column` (cells of a
// thread are 32 apart along x), dx further along the line, `row` lines from its
// first line (3-D; always 0 in 2-D, where a unit is one row).
struct Position {
  int column = 0;
  int dx = 0;
  int row = 0;
  bool operator<(const Position& o) const {
    return std::tie(column, dx, row) < std::tie(o.column, o.dx, o.row);
  }
};

// A point as the kernel walks the slab: its offset along the split axis (the
// march), and within a unit.
struct Term {
  int march = 0;
  int row = 0;
  int dx = 0;
  double weight = 0;
};

// The slots (march offsets + radius) at which a position is read: its value
// is loaded when it first comes into reach (its highest slot), one step ahead
// so that the load is in flight while the step before it computes, and then
// passed down from slot to slot, one unit a step, until its last use.
struct Reach {
  int lowest = 0;
  int highest = 0;
};

std::string literal(double value, const char* type) { return fmt::format("(({}){:a})", type, value); }

std::string var(int slot, const Position& p) {
  return fmt::format("v{}_{}_{}_{}", slot, p.column, p.dx + 8, p.row + 8);
}
std::string ahead(const Position& p) { return fmt::format("n{}_{}_{}", p.column, p.dx + 8, p.row + 8); }

// A device function quotient(a, slow): RN(a / diagonal) with the operations
// of core/quotient.hpp's Quotient, its constants made for this diagonal in T,
// where `a` is zero or in the multiplications' range; else it sets `slow`, and
// the caller divides (once a step for all its cells, a branch rarely taken).
template <class T>
std::string quotient_source(double diagonal) {
  const Quotient<T> q = Quotient<T>::by(static_cast<T>(diagonal));
  const bool single = std::is_same_v<T, float>;
  const char* type = single ? "float" : "double";
  const char* fma = single ? "fmaf" : "fma";
  return fmt::format(
      "__device__ __forceinline__ T quotient(T a, bool& slow) {{\n"
      "  const T q = a * {0};\n"
      "  const T r = {2}(-{1}, q, a);\n"
      "  const T m = {3}(a);\n"
      "  const bool inside = m >= {4} && m <= {5};\n"
      "  slow = slow || (!inside && a != (T)0);\n"
      "  return inside ? {2}(r, {0}, q) : q;\n"
      "}}\n",
      literal(q.reciprocal, type), literal(q.divisor, type), fma, single ? "fabsf" : "fabs", literal(q.low, type),
      literal(q.high, type));
}

}  // namespace

SweepShape SweepShape::default_for(int dimension) {
  SweepShape s;
  if (dimension == 3) {
    s.warps = 4;
    s.columns = 1;
    s.lines = 4;
    s.units = 32;
  } else {
    s.warps = 2;
    s.columns = 2;
    s.lines = 1;
    s.units = 16;
  }
  return s;
}

std::string sweep_kernel_source(const Stencil& stencil, Precision precision, const SweepShape& shape) {
  const bool three_d = stencil.dimension == 3;
  const int radius = stencil.radius();
  const int lines = three_d ? shape.lines : 1;
  const int columns = shape.columns;
  const char* type = precision == Precision::Float ? "float" : "double";

  std::vector<Term> terms;
  for (const StencilPoint& p : stencil.points) {
    terms.push_back(three_d ? Term{p.dz, p.dy, p.dx, p.weight} : Term{p.dy, 0, p.dx, p.weight});
  }
  std::map<Position, Reach> reach;
  for (int k = 0; k < columns; ++k) {
    for (int c = 0; c < lines; ++c) {
      for (const Term& t : terms) {
        const int slot = t.march + radius;
        auto [it, fresh] = reach.try_emplace(Position{k, t.dx, c + t.row}, Reach{slot, slot});
        if (!fresh) {
          it->second.lowest = std::min(it->second.lowest, slot);
          it->second.highest = std::max(it->second.highest, slot);
        }
      }
    }
  }

  std::string s;
  auto line = [&s](const std::string& text) {
    s += text;
    s += '\n';
  };
  line(fmt::format("// hetstencil: the sweep of the stencil '{}' in {}: {} warps, {} columns and {} lines a thread",
                   stencil.name, type, shape.warps, columns, lines));
  line(fmt::format("typedef {} T;", type));
  line("typedef long long i64;");
  s += precision == Precision::Float ? quotient_source<float>(stencil.diagonal) : quotient_source<double>(stencil.diagonal);
  line(fmt::format("extern \"C\" __global__ void __launch_bounds__({}) {}(", 32 * shape.warps, kSweepEntry));
  line("    const T* __restrict__ in, T* __restrict__ out, const T* __restrict__ sf, i64 spike,");
  line("    i64 unit_begin, i64 unit_end, i64 units_per_block, i64 nx, i64 lines, i64 cols, i64 unit_values, i64 depth) {");
  if (three_d) {
    line(fmt::format("  const i64 first = (i64)blockIdx.x * {} + threadIdx.x;", 32 * columns));
    line(fmt::format("  i64 y = ((i64)blockIdx.y * {} + threadIdx.y) * {};", shape.warps, lines));
    line("  if (y >= lines) return;");
    // The last group of lines overlaps the one before it rather than reading
    // past the plane: its cells are computed twice, with the same bits.
    line(fmt::format("  if (y + {} > lines) y = lines - {};", lines, lines));
    line("  const i64 zb = unit_begin + (i64)blockIdx.z * units_per_block;");
  } else {
    line(fmt::format("  const i64 first = ((i64)blockIdx.x * {} + threadIdx.y) * {} + threadIdx.x;", shape.warps, 32 * columns));
    line("  if (first - (i64)threadIdx.x >= nx) return;");
    line("  const i64 zb = unit_begin + (i64)blockIdx.y * units_per_block;");
  }
  line("  if (zb >= unit_end) return;");
  line("  const i64 ze = zb + units_per_block < unit_end ? zb + units_per_block : unit_end;");
  // A cell past the line's end reads the line's last cell, so that the warp's
  // loads stay in step, and stores nothing.
  for (int k = 0; k < columns; ++k) {
    line(fmt::format("  const bool keep{0} = first + {1} < nx;", k, 32 * k));
    line(fmt::format("  const i64 x{0} = keep{0} ? first + {1} : nx - 1;", k, 32 * k));
  }
  line(fmt::format("  i64 at = zb * unit_values + {}depth;", three_d ? "(depth + y) * cols + " : ""));
  line("  const T* p = in + at;");
  line("  const i64 U = unit_values, C = cols;");
  auto load = [&](int march, const Position& pos) {
    return fmt::format("__ldg(p + ({} * U + {} * C + {} + x{}))", march, pos.row, pos.dx, pos.column);
  };
  for (const auto& [pos, r] : reach) {
    for (int slot = r.lowest; slot <= r.highest; ++slot) {
      line(fmt::format("  T {} = {};", var(slot, pos), load(slot - radius, pos)));
    }
  }
  line("  for (i64 z = zb;;) {");
  line("    const bool more = z + 1 < ze;");
  for (const auto& [pos, r] : reach) {
    line(fmt::format("    const T {} = more ? {} : (T)0;", ahead(pos), load(r.highest - radius + 1, pos)));
  }
  line("    bool slow = false;");
  for (int k = 0; k < columns; ++k) {
    for (int c = 0; c < lines; ++c) {
      const std::string sum = fmt::format("s{}_{}", k, c);
      for (std::size_t i = 0; i < terms.size(); ++i) {
        const Term& t = terms[i];
        const std::string product =
            literal(t.weight, type) + " * " + var(t.march + radius, Position{k, t.dx, c + t.row});
        line(i == 0 ? fmt::format("    T {} = {};", sum, product) : fmt::format("    {0} = {0} + {1};", sum, product));
      }
      line(fmt::format("    const i64 cell{0}_{1} = at + {1} * C + x{0};", k, c));
      line(fmt::format("    const T a{0}_{1} = {2} + (sf ? __ldg(sf + cell{0}_{1}) : (cell{0}_{1} == spike ? (T)1 : (T)0));", k, c, sum));
      line(fmt::format("    T o{0}_{1} = quotient(a{0}_{1}, slow);", k, c));
    }
  }
  line("    if (slow) {");
  for (int k = 0; k < columns; ++k) {
    for (int c = 0; c < lines; ++c) line(fmt::format("      o{0}_{1} = a{0}_{1} / {2};", k, c, literal(stencil.diagonal, type)));
  }
  line("    }");
  for (int k = 0; k < columns; ++k) {
    for (int c = 0; c < lines; ++c) line(fmt::format("    if (keep{0}) out[cell{0}_{1}] = o{0}_{1};", k, c));
  }
  line("    if (!more) break;");
  line("    ++z;");
  line("    at += U;");
  line("    p += U;");
  for (const auto& [pos, r] : reach) {
    for (int slot = r.lowest; slot < r.highest; ++slot) line(fmt::format("    {} = {};", var(slot, pos), var(slot + 1, pos)));
    line(fmt::format("    {} = {};", var(r.highest, pos), ahead(pos)));
  }
  line("  }");
  line("}");
  return s;
}

}  // namespace hetstencil::cuda
