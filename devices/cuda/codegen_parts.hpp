// The pieces every generated sweep is written with (stencil_codegen.cpp's
// register and tiled kernels, staged_codegen.cpp's staged one): the source
// text, the points as a kernel walks the slab, the quotient by the diagonal,
// vectors of cells, and a step's update of a thread's cells in the
// description's order. Internal to the CUDA backend.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "devices/cuda/stencil_codegen.hpp"
#include "hetstencil/problem.hpp"
#include "hetstencil/stencil.hpp"

namespace hetstencil::cuda::codegen {

/// A kernel's source, line by line.
class Source {
 public:
  void line(const std::string& text) {
    text_ += text;
    text_ += '\n';
  }
  void add(const std::string& text) { text_ += text; }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

/// A point as the kernel walks the slab: its offset along the split axis (the
/// march), and within a unit.
struct Term {
  int march = 0;
  int row = 0;
  int dx = 0;
  double weight = 0;
};

/// The points as the kernel walks the slab: along the split axis (the march),
/// and within a unit (2-D: a row, all at row 0), in the description's order.
std::vector<Term> terms_of(const Stencil& stencil);

/// The farthest a point reaches along the line, either side.
int line_reach(const Stencil& stencil);

/// a / b rounded down (b > 0): the group of `b` cells that holds the cell
/// `a` cells along the line from a group's first.
int floor_div(int a, int b);

/// The values of `precision` in the widest vector a thread loads: 16 bytes.
int per_16_bytes(Precision precision);

/// "float" or "double".
const char* type_of(Precision precision);

/// `value` as an exact literal of `type` (a hexadecimal float).
std::string literal(double value, const char* type);

/// The source term of the cell at index `cell`: s*f from the grid `sf`, or 1
/// at the spike.
std::string source_of(const std::string& cell);

/// The types, the quotient by the diagonal (device functions quotient(a,
/// slow) and quotient_slow(a)), and, for groups of `vector` cells,
/// cells_load(q, c0, ...) and cells_store(q, c0, ...), which move them as
/// aligned vectors of at most 16 bytes; `how` names the kernel in its first
/// line.
void open_kernel(Source& s, const Stencil& stencil, Precision precision, const SweepShape& shape, const char* how,
                 int vector);

/// A cell a thread updates in a step: cell i of its group k (column) on line c.
struct Cell {
  int k = 0;
  int i = 0;
  int c = 0;
  std::string name() const;
};

/// One step's update of a thread's cells: the terms in the description's
/// order, each read by `value`, plus the source (`source`), divided by the
/// diagonal (all of them by quotient_slow where a quotient fell outside its
/// range), into o<name>; the caller stores them.
void update_cells(Source& s, const std::vector<Term>& terms, Precision precision, const std::vector<Cell>& cells,
                  const std::function<std::string(const Cell&, const Term& t)>& value,
                  const std::function<std::string(const Cell&)>& source);

}  // namespace hetstencil::cuda::codegen
