#include "devices/cuda/codegen_parts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <type_traits>

#include "core/quotient.hpp"

namespace hetstencil::cuda::codegen {
namespace {

// The device functions of core/quotient.hpp's Quotient, its constants made
// for this diagonal in T: quotient(a, slow), RN(a / diagonal) where `a` is
// zero or in the multiplications' range, which otherwise sets `slow`, and the
// caller takes all its cells' quotients by quotient_slow(a) (Quotient::slow;
// once a step, a branch rarely taken).
template <class T>
std::string quotient_source(double diagonal) {
  const Quotient<T> q = Quotient<T>::by(static_cast<T>(diagonal));
  const bool single = std::is_same_v<T, float>;
  const char* type = single ? "float" : "double";
  const char* fma = single ? "fmaf" : "fma";
  const std::string slow =
      single ? fmt::format("  const double w = a;\n"
                           "  const double q = w * {0};\n"
                           "  const double r = fma(-{1}, q, w);\n"
                           "  return (float)(w == 0.0 || fabs(w) > {2} ? q : fma(r, {0}, q));\n",
                           literal(q.wide_reciprocal, "double"), literal(static_cast<double>(q.divisor), "double"),
                           literal(std::numeric_limits<float>::max(), "double"))
             : fmt::format("  return a / {};\n", literal(q.divisor, type));
  return fmt::format(
      "__device__ __forceinline__ T quotient(T a, bool& slow) {{\n"
      "  const T q = a * {0};\n"
      "  const T r = {2}(-{1}, q, a);\n"
      "  const T m = {3}(a);\n"
      "  const bool inside = m >= {4} && m <= {5};\n"
      "  slow = slow || (!inside && a != (T)0);\n"
      "  return inside ? {2}(r, {0}, q) : q;\n"
      "}}\n"
      "__device__ __forceinline__ T quotient_slow(T a) {{\n{6}}}\n",
      literal(q.reciprocal, type), literal(q.divisor, type), fma, single ? "fabsf" : "fabs", literal(q.low, type),
      literal(q.high, type), slow);
}

// The device functions that load and store a group of `vector` values of T
// as aligned vectors of at most 16 bytes: cells_load(q, c0, ...), and
// cells_store(q, c0, ...).
std::string vector_source(Precision precision, int vector) {
  const bool single = precision == Precision::Float;
  // The vectors of 16 bytes or less a group is made of, and their fields.
  const int per_vector = std::min(vector, per_16_bytes(precision));
  const std::string type = fmt::format("{}{}", single ? "float" : "double", per_vector);
  const char* fields = "xyzw";
  std::string values, refs, load, store;
  for (int i = 0; i < vector; ++i) {
    values += fmt::format("{}T c{}", i == 0 ? "" : ", ", i);
    refs += fmt::format("{}T& c{}", i == 0 ? "" : ", ", i);
  }
  for (int v = 0; v < vector / per_vector; ++v) {
    load += fmt::format("  const {0} w{1} = __ldg(reinterpret_cast<const {0}*>(q) + {1});\n", type, v);
    std::string made;
    for (int f = 0; f < per_vector; ++f) {
      load += fmt::format("  c{} = w{}.{};\n", v * per_vector + f, v, fields[f]);
      made += fmt::format("{}c{}", f == 0 ? "" : ", ", v * per_vector + f);
    }
    store += fmt::format("  reinterpret_cast<{0}*>(q)[{1}] = make_{0}({2});\n", type, v, made);
  }
  return fmt::format("__device__ __forceinline__ void cells_load(const T* q, {}) {{\n{}}}\n"
                     "__device__ __forceinline__ void cells_store(T* q, {}) {{\n{}}}\n",
                     refs, load, values, store);
}

}  // namespace

std::vector<Term> terms_of(const Stencil& stencil) {
  std::vector<Term> terms;
  for (const StencilPoint& p : stencil.points) {
    terms.push_back(stencil.dimension == 3 ? Term{p.dz, p.dy, p.dx, p.weight} : Term{p.dy, 0, p.dx, p.weight});
  }
  return terms;
}

int line_reach(const Stencil& stencil) {
  int reach = 0;
  for (const StencilPoint& p : stencil.points) reach = std::max(reach, std::abs(p.dx));
  return reach;
}

int per_16_bytes(Precision precision) { return static_cast<int>(16 / value_bytes(precision)); }

int floor_div(int a, int b) { return a >= 0 ? a / b : -((b - 1 - a) / b); }

const char* type_of(Precision precision) { return precision == Precision::Float ? "float" : "double"; }

std::string literal(double value, const char* type) { return fmt::format("(({}){:a})", type, value); }

std::string source_of(const std::string& cell) {
  return fmt::format("(sf ? __ldg(sf + {0}) : ({0} == spike ? (T)1 : (T)0))", cell);
}

void open_kernel(Source& s, const Stencil& stencil, Precision precision, const SweepShape& shape, const char* how,
                 int vector) {
  const int lines = stencil.dimension == 3 ? shape.lines : 1;
  s.line(fmt::format("// hetstencil: the sweep of the stencil '{}' in {} ({}): {} warps, {} columns of {} cells and {} lines a thread",
                     stencil.name, type_of(precision), how, shape.warps, shape.columns, vector, lines));
  s.line(fmt::format("typedef {} T;", type_of(precision)));
  s.line("typedef long long i64;");
  s.add(precision == Precision::Float ? quotient_source<float>(stencil.diagonal) : quotient_source<double>(stencil.diagonal));
  if (vector > 1) s.add(vector_source(precision, vector));
  if (shape.ahead > 0) s.line("__device__ __forceinline__ void prefetch_l2(const T* q) { asm volatile(\"prefetch.global.L2 [%0];\" :: \"l\"(q)); }");
}

std::string Cell::name() const { return fmt::format("{}_{}_{}", k, i, c); }

void update_cells(Source& s, const std::vector<Term>& terms, Precision precision, const std::vector<Cell>& cells,
                  const std::function<std::string(const Cell&, const Term& t)>& value,
                  const std::function<std::string(const Cell&)>& source) {
  const char* type = type_of(precision);
  const char* fma = precision == Precision::Float ? "fmaf" : "fma";  // add_term (core/stencil_update.hpp)
  s.line("    bool slow = false;");
  for (const Cell& cell : cells) {
    const std::string sum = "s" + cell.name();
    for (std::size_t i = 0; i < terms.size(); ++i) {
      const std::string weight = literal(terms[i].weight, type);
      s.line(i == 0 ? fmt::format("    T {} = {} * {};", sum, weight, value(cell, terms[i]))
                    : fmt::format("    {0} = {1}({2}, {3}, {0});", sum, fma, weight, value(cell, terms[i])));
    }
    s.line(fmt::format("    const T a{0} = {1} + {2};", cell.name(), sum, source(cell)));
    s.line(fmt::format("    T o{0} = quotient(a{0}, slow);", cell.name()));
  }
  s.line("    if (slow) {");
  for (const Cell& cell : cells) s.line(fmt::format("      o{0} = quotient_slow(a{0});", cell.name()));
  s.line("    }");
}

}  // namespace hetstencil::cuda::codegen
