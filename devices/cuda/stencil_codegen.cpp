#include "devices/cuda/stencil_codegen.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "devices/cuda/codegen_parts.hpp"
#include "devices/cuda/staged_codegen.hpp"
#include "hetstencil/error.hpp"

namespace hetstencil::cuda {
namespace {

using codegen::Cell;
using codegen::line_reach;
using codegen::open_kernel;
using codegen::Source;
using codegen::source_of;
using codegen::Term;
using codegen::terms_of;
using codegen::update_cells;

// A value a thread reads in a unit: `dx` cells along the line from the first
// cell of its group `column` (a group is `vector` cells side by side, groups
// 32 x vector cells apart), `row` lines from its first line (3-D; always 0 in
// 2-D, where a unit is one row).
struct Position {
  int column = 0;
  int dx = 0;
  int row = 0;
  bool operator<(const Position& o) const {
    return std::tie(column, dx, row) < std::tie(o.column, o.dx, o.row);
  }
};

// What one load brings into a thread's registers: an aligned vector of a line
// (groups of more than one cell: a group's own cells, dx 0, or with
// SweepShape::halo a vector beside them, dx a multiple of the group), or one value.
struct Load {
  int column = 0;
  int row = 0;
  int dx = 0;
  bool operator<(const Load& o) const { return std::tie(column, row, dx) < std::tie(o.column, o.row, o.dx); }
};

// The slots (march offsets + radius) at which a position is read: its value
// is loaded when it first comes into reach (its highest slot), one step ahead
// so that the load is in flight while the step before it computes, and then
// passed down from slot to slot, one unit a step, until its last use.
struct Reach {
  int lowest = 0;
  int highest = 0;
};

std::string var(int slot, const Position& p) {
  return fmt::format("v{}_{}_{}_{}", slot, p.column, p.dx + 8, p.row + 8);
}
std::string ahead(const Position& p) { return fmt::format("n{}_{}_{}", p.column, p.dx + 8, p.row + 8); }

// Asks L2 for the thread's own lines (`lines`: their offsets from the unit's
// first value) shape.ahead units beyond `next`, the unit the next step loads;
// a block's last steps ask for none of the units past those it reads.
void prefetch_ahead(Source& s, const SweepShape& shape, int next, const std::vector<std::string>& lines) {
  if (shape.ahead == 0) return;
  s.line(fmt::format("    if (z + {} < ze) {{", shape.ahead + 1));
  for (const std::string& line : lines) s.line(fmt::format("      prefetch_l2(p + ({} * U + {}));", next + shape.ahead, line));
  s.line("    }");
}

// The entry point up to its opening brace, and the slab's sizes as constants
// where `fixed` gives them (the parameters that carry them are then unread).
void open_entry(Source& s, const SweepShape& shape, const SweepLayout* fixed) {
  s.line(fmt::format("extern \"C\" __global__ void __launch_bounds__({}) {}(", 32 * shape.warps, kSweepEntry));
  s.line("    const T* __restrict__ in, T* __restrict__ out, const T* __restrict__ sf, i64 spike,");
  if (!fixed) {
    s.line("    i64 unit_begin, i64 unit_end, i64 units_per_block, i64 nx, i64 lines, i64 cols, i64 unit_values, i64 depth) {");
    return;
  }
  s.line("    i64 unit_begin, i64 unit_end, i64 units_per_block, i64, i64, i64, i64, i64) {");
  s.line(fmt::format("  const i64 nx = {}, lines = {}, cols = {}, unit_values = {}, depth = {};", fixed->nx, fixed->lines,
                     fixed->cols, fixed->unit_values, fixed->depth));
}

// Every value a thread reads stays in its registers from its first use to
// its last, passed from unit to unit as the march moves on. A group's own
// cells of a line come as one vector load, the values beside them one by one
// (from L1: the neighbouring lanes loaded them) or, with SweepShape::halo, as
// vectors too.
std::string register_sweep(const Stencil& stencil, Precision precision, const SweepShape& shape,
                           const SweepLayout* layout) {
  const bool three_d = stencil.dimension == 3;
  const int radius = stencil.radius();
  const int along = line_reach(stencil);
  const int lines = three_d ? shape.lines : 1;
  const int columns = shape.columns;
  const int vector = shape.vector;
  const int group_stride = 32 * vector;  // cells from a group of a thread to its next
  const std::vector<Term> terms = terms_of(stencil);
  std::vector<Cell> cells;
  for (int k = 0; k < columns; ++k) {
    for (int c = 0; c < lines; ++c) {
      for (int i = 0; i < vector; ++i) cells.push_back({k, i, c});
    }
  }
  // Vectors of `vector` values beside a group's own cells that one aligned
  // load brings in instead of one load a value: those that lie within the
  // stencil's reach along the line (the slab keeps a ring that deep before a
  // line and room for it after its last group: StencilSlab) and of which the
  // thread reads two or more.
  // The first value of the aligned vector that holds the value dx along the line.
  auto group_of = [&](int dx) { return codegen::floor_div(dx, vector) * vector; };
  std::set<Load> halo_groups;
  if (shape.halo && vector > 1) {
    std::map<Load, int> read;
    std::set<Position> positions;
    for (const Cell& cell : cells) {
      for (const Term& t : terms) positions.insert(Position{cell.k, cell.i + t.dx, cell.c + t.row});
    }
    for (const Position& p : positions) {
      const int base = group_of(p.dx);
      if (base != 0 && base >= -along && base <= along) ++read[Load{p.column, p.row, base}];
    }
    for (const auto& [l, n] : read) {
      if (n >= 2) halo_groups.insert(l);
    }
  }
  auto whole = [&](const Load& l) { return vector > 1 && (l.dx == 0 || halo_groups.count(l) > 0); };
  auto load_of = [&](const Position& p) {
    if (vector > 1 && p.dx >= 0 && p.dx < vector) return Load{p.column, p.row, 0};
    const Load group{p.column, p.row, group_of(p.dx)};
    return halo_groups.count(group) > 0 ? group : Load{p.column, p.row, p.dx};
  };
  std::map<Load, Reach> reach;
  for (const Cell& cell : cells) {
    for (const Term& t : terms) {
      const int slot = t.march + radius;
      auto [it, fresh] = reach.try_emplace(load_of(Position{cell.k, cell.i + t.dx, cell.c + t.row}), Reach{slot, slot});
      if (!fresh) {
        it->second.lowest = std::min(it->second.lowest, slot);
        it->second.highest = std::max(it->second.highest, slot);
      }
    }
  }
  // The positions a load fills.
  auto filled = [&](const Load& l) {
    std::vector<Position> out;
    if (!whole(l)) return std::vector<Position>{{l.column, l.dx, l.row}};
    for (int i = 0; i < vector; ++i) out.push_back({l.column, l.dx + i, l.row});
    return out;
  };
  auto address = [&](int march, const Load& l) {
    return fmt::format("p + ({} * U + {} * C + {} + x{})", march, l.row, l.dx, l.column);
  };
  // Declares `names` (a load's positions) and loads them from unit `march`,
  // or sets them to zero where `when` is false.
  auto emit_load = [&](const std::string& indent, const Load& l, int march, const std::vector<std::string>& names,
                       const std::string& when) {
    if (!whole(l)) {
      const std::string loaded = fmt::format("__ldg({})", address(march, l));
      return fmt::format("{}T {} = {};", indent, names[0], when.empty() ? loaded : when + " ? " + loaded + " : (T)0");
    }
    std::string declared, refs;
    for (std::size_t i = 0; i < names.size(); ++i) {
      declared += fmt::format("{}{}{}", i == 0 ? "" : ", ", names[i], when.empty() ? "" : " = 0");
      refs += ", " + names[i];
    }
    const std::string call = fmt::format("cells_load({}{});", address(march, l), refs);
    return fmt::format("{}T {};\n{}{}", indent, declared, indent, when.empty() ? call : "if (" + when + ") " + call);
  };

  Source s;
  open_kernel(s, stencil, precision, shape, "registers", vector);
  open_entry(s, shape, three_d ? layout : nullptr);
  if (three_d) {
    s.line(fmt::format("  const i64 first = (i64)blockIdx.x * {} + threadIdx.x * {};", group_stride * columns, vector));
    s.line(fmt::format("  i64 y = ((i64)blockIdx.y * {} + threadIdx.y) * {};", shape.warps, lines));
    s.line("  if (y >= lines) return;");
    // The last group of lines overlaps the one before it rather than reading
    // past the plane: its cells are computed twice, with the same bits.
    s.line(fmt::format("  if (y + {} > lines) y = lines - {};", lines, lines));
    s.line("  const i64 zb = unit_begin + (i64)blockIdx.z * units_per_block;");
  } else {
    s.line(fmt::format("  const i64 first = ((i64)blockIdx.x * {} + threadIdx.y) * {} + threadIdx.x * {};", shape.warps,
                       group_stride * columns, vector));
    s.line(fmt::format("  if (first - (i64)threadIdx.x * {} >= nx) return;", vector));
    s.line("  const i64 zb = unit_begin + (i64)blockIdx.y * units_per_block;");
  }
  s.line("  if (zb >= unit_end) return;");
  s.line("  const i64 ze = zb + units_per_block < unit_end ? zb + units_per_block : unit_end;");
  // A group past the line's end reads the line's last group, so that the
  // warp's loads stay in step, and stores nothing; a group the end cuts
  // stores its cells before it. The slab's lines have room for the values
  // beside a last group (StencilSlab).
  for (int k = 0; k < columns; ++k) {
    s.line(fmt::format("  const bool keep{0} = first + {1} < nx;", k, group_stride * k));
    s.line(fmt::format("  const i64 x{0} = keep{0} ? first + {1} : (nx - 1) / {2} * {2};", k, group_stride * k, vector));
  }
  s.line(fmt::format("  i64 at = zb * unit_values + {}depth;", three_d ? "(depth + y) * cols + " : ""));
  s.line("  const T* p = in + at;");
  s.line("  const i64 U = unit_values, C = cols;");
  auto names_at = [&](int slot, const Load& l) {
    std::vector<std::string> out;
    for (const Position& p : filled(l)) out.push_back(var(slot, p));
    return out;
  };
  for (const auto& [l, r] : reach) {
    for (int slot = r.lowest; slot <= r.highest; ++slot) s.line(emit_load("  ", l, slot - radius, names_at(slot, l), ""));
  }
  s.line("  for (i64 z = zb;;) {");
  s.line("    const bool more = z + 1 < ze;");
  std::vector<std::string> own_lines;
  for (int k = 0; k < columns; ++k) {
    for (int c = 0; c < lines; ++c) own_lines.push_back(fmt::format("{} * C + x{}", c, k));
  }
  int farthest = 0;
  for (const Term& t : terms) farthest = std::max(farthest, t.march);
  prefetch_ahead(s, shape, farthest + 1, own_lines);
  for (const auto& [l, r] : reach) {
    std::vector<std::string> names;
    for (const Position& p : filled(l)) names.push_back(ahead(p));
    s.line(emit_load("    ", l, r.highest - radius + 1, names, "more"));
  }
  for (int k = 0; k < columns; ++k) {
    for (int c = 0; c < lines; ++c) {
      s.line(fmt::format("    const i64 cell{0}_{1} = at + {1} * C + x{0};", k, c));
      if (vector == 1) continue;
      // The source of a group's cells: a vector of s*f, or 1 at the spike.
      std::string f, refs;
      for (int i = 0; i < vector; ++i) {
        f += fmt::format("{}f{}_{}_{} = 0", i == 0 ? "" : ", ", k, i, c);
        refs += fmt::format(", f{}_{}_{}", k, i, c);
      }
      s.line(fmt::format("    T {};", f));
      s.line(fmt::format("    if (sf) {{ cells_load(sf + cell{0}_{1}{2}); }} else {{", k, c, refs));
      s.line(fmt::format("      const i64 d = spike - cell{0}_{1};", k, c));
      for (int i = 0; i < vector; ++i) s.line(fmt::format("      f{0}_{1}_{2} = d == {1} ? (T)1 : (T)0;", k, i, c));
      s.line("    }");
    }
  }
  update_cells(
      s, terms, precision, cells,
      [&](const Cell& cell, const Term& t) {
        return var(t.march + radius, Position{cell.k, cell.i + t.dx, cell.c + t.row});
      },
      [&](const Cell& cell) {
        if (vector > 1) return fmt::format("f{}_{}_{}", cell.k, cell.i, cell.c);
        return source_of(fmt::format("cell{}_{}", cell.k, cell.c));
      });
  for (int k = 0; k < columns; ++k) {
    for (int c = 0; c < lines; ++c) {
      const std::string at = fmt::format("cell{}_{}", k, c);
      if (vector == 1) {
        s.line(fmt::format("    if (keep{}) out[{}] = o{};", k, at, Cell{k, 0, c}.name()));
        continue;
      }
      std::string outs;
      for (int i = 0; i < vector; ++i) outs += ", o" + Cell{k, i, c}.name();
      s.line(fmt::format("    if (keep{0}) {{", k));
      s.line(fmt::format("      if (x{} + {} <= nx) {{", k, vector));
      s.line(fmt::format("        cells_store(out + {}{});", at, outs));
      s.line("      } else {");
      s.line(fmt::format("        out[{}] = o{};", at, Cell{k, 0, c}.name()));
      for (int i = 1; i < vector; ++i) s.line(fmt::format("        if (x{0} + {1} < nx) out[{2} + {1}] = o{3};", k, i, at, Cell{k, i, c}.name()));
      s.line("      }");
      s.line("    }");
    }
  }
  s.line("    if (!more) break;");
  s.line("    ++z;");
  s.line("    at += U;");
  s.line("    p += U;");
  for (const auto& [l, r] : reach) {
    for (const Position& pos : filled(l)) {
      for (int slot = r.lowest; slot < r.highest; ++slot) s.line(fmt::format("    {} = {};", var(slot, pos), var(slot + 1, pos)));
      s.line(fmt::format("    {} = {};", var(r.highest, pos), ahead(pos)));
    }
  }
  s.line("  }");
  s.line("}");
  return s.text();
}

// What a block may declare of shared memory without asking for more at launch.
constexpr std::size_t kStaticSharedBytes = 48 * 1024;

// How the tiled kernel lays a block's tile of a unit out in shared memory: the
// tile (32 x columns cells of warps x lines lines in 3-D; 32 x columns x warps
// cells of a row in 2-D), its ring (the radius around it), and the ring of
// units it keeps there.
struct Tile {
  int tile_x = 0;
  int tile_y = 0;
  int pitch = 0;      // values from a row of the tile to the next, ring included
  int ring_y = 0;     // rows above and below the tile (none in 2-D, where a unit is one line)
  int tile_rows = 0;
  // The units (march offsets) read through shared memory, [low, high], and
  // those a thread keeps in registers, [own_low, own_high]: its own column's,
  // and the newest shared one, which it writes to the tile.
  bool tiled = false;
  int low = 0;
  int high = 0;
  int own_low = 0;
  int own_high = 0;
  // One slot more than the units a step reads, so that a step writes the
  // next unit while slower threads still read the oldest: one barrier a step.
  int slots = 0;

  static bool in_column(const Term& t) { return t.row == 0 && t.dx == 0; }

  Tile(const Stencil& stencil, const SweepShape& shape) {
    const bool three_d = stencil.dimension == 3;
    const int radius = stencil.radius();
    tile_x = 32 * shape.columns * (three_d ? 1 : shape.warps);
    tile_y = three_d ? shape.warps * shape.lines : 1;
    pitch = tile_x + 2 * radius;
    ring_y = three_d ? radius : 0;
    tile_rows = tile_y + 2 * ring_y;
    std::set<int> shared_units, own_units;
    for (const Term& t : terms_of(stencil)) (in_column(t) ? own_units : shared_units).insert(t.march);
    tiled = !shared_units.empty();
    low = tiled ? *shared_units.begin() : 0;
    high = tiled ? *shared_units.rbegin() : 0;
    if (tiled) own_units.insert(high);
    own_low = *own_units.begin();
    own_high = *own_units.rbegin();
    slots = tiled ? high - low + 2 : 0;
  }

  std::size_t bytes(Precision precision) const {
    const std::size_t value_bytes = precision == Precision::Float ? sizeof(float) : sizeof(double);
    return static_cast<std::size_t>(slots) * tile_rows * pitch * value_bytes;
  }
};

// A block's tile of a unit and the halo its cells read there go through
// shared memory, one unit a step; the values of a thread's own cells in the
// units before and after (the points straight along the split axis) stay in
// its registers. A neighbour along the line or across lines is then loaded
// once by the block, not once by each thread that reads it: what large radii
// and 27 points need.
std::string shared_sweep(const Stencil& stencil, Precision precision, const SweepShape& shape) {
  const bool three_d = stencil.dimension == 3;
  const int radius = stencil.radius();
  const int lines = three_d ? shape.lines : 1;
  const int columns = shape.columns;
  const std::vector<Term> terms = terms_of(stencil);
  const Tile layout(stencil, shape);
  const int tile_x = layout.tile_x, tile_y = layout.tile_y, pitch = layout.pitch, ring_y = layout.ring_y;
  const bool tiled = layout.tiled;
  const int low = layout.low, high = layout.high, own_low = layout.own_low, own_high = layout.own_high;
  const int slots = layout.slots, tile_rows = layout.tile_rows;
  const auto in_column = Tile::in_column;

  // The halo of a tile: the cells outside it that its cells read in a unit,
  // shared among the block's threads.
  std::vector<std::pair<int, int>> halo;
  for (int hy = -ring_y; hy < tile_y + ring_y; ++hy) {
    for (int hx = -radius; hx < tile_x + radius; ++hx) {
      if (hx >= 0 && hx < tile_x && hy >= 0 && hy < tile_y) continue;
      const bool read = std::any_of(terms.begin(), terms.end(), [&](const Term& t) {
        const int x = hx - t.dx, y = hy - t.row;
        return !in_column(t) && x >= 0 && x < tile_x && y >= 0 && y < tile_y;
      });
      if (read) halo.emplace_back(hx, hy);
    }
  }
  const int threads = 32 * shape.warps;
  const int per_thread = static_cast<int>((halo.size() + threads - 1) / threads);

  Source s;
  open_kernel(s, stencil, precision, shape, "shared memory", 1);
  if (!halo.empty()) {
    std::string xs, ys;
    for (const auto& [x, y] : halo) {
      xs += fmt::format("{},", x);
      ys += fmt::format("{},", y);
    }
    s.line(fmt::format("__constant__ short halo_x[{}] = {{{}}};", halo.size(), xs));
    s.line(fmt::format("__constant__ short halo_y[{}] = {{{}}};", halo.size(), ys));
  }
  // Sizes as constants made the tiled kernels slower on an H100 (star4 float
  // 1.84 -> 1.94 of a copy's time), so they stay parameters here.
  open_entry(s, shape, nullptr);
  if (tiled) s.line(fmt::format("  __shared__ T tile[{}][{}];", slots, tile_rows * pitch));
  s.line(fmt::format("  const i64 x0 = (i64)blockIdx.x * {};", tile_x));
  s.line(three_d ? fmt::format("  const i64 y0 = (i64)blockIdx.y * {};", tile_y) : "  const i64 y0 = 0;");
  s.line(fmt::format("  const i64 zb = unit_begin + (i64)blockIdx.{} * units_per_block;", three_d ? "z" : "y"));
  s.line("  if (zb >= unit_end) return;");
  s.line("  const i64 ze = zb + units_per_block < unit_end ? zb + units_per_block : unit_end;");
  s.line("  const i64 U = unit_values, C = cols;");
  // Reads stop at the ring's last cell (line): a tile that hangs over the
  // slab's edge computes cells it does not store, from values no stored cell reads.
  s.line("  const i64 x_end = nx - 1 + depth, y_end = lines - 1 + depth;");
  s.line(three_d ? "  i64 at = zb * U + (depth + y0) * C + depth + x0;" : "  i64 at = zb * U + depth + x0;");
  s.line("  const T* p = in + at;");
  for (int k = 0; k < columns; ++k) {
    s.line(fmt::format("  const int lx{0} = {1}{2} + threadIdx.x;", k, 32 * k,
                       three_d ? "" : fmt::format(" + threadIdx.y * {}", 32 * columns)));
    s.line(fmt::format("  const bool keepx{0} = x0 + lx{0} < nx;", k));
    s.line(fmt::format("  const i64 gx{0} = (x0 + lx{0} < x_end ? x0 + lx{0} : x_end) - x0;", k));
  }
  for (int c = 0; c < lines; ++c) {
    s.line(three_d ? fmt::format("  const int ly{0} = threadIdx.y * {1} + {0};", c, lines) : fmt::format("  const int ly{} = 0;", c));
    s.line(three_d ? fmt::format("  const bool keepy{0} = y0 + ly{0} < lines;", c) : fmt::format("  const bool keepy{} = true;", c));
    s.line(three_d ? fmt::format("  const i64 gy{0} = (y0 + ly{0} < y_end ? y0 + ly{0} : y_end) - y0;", c)
                   : fmt::format("  const i64 gy{} = 0;", c));
  }
  for (int k = 0; k < columns; ++k) {
    for (int c = 0; c < lines; ++c) {
      s.line(fmt::format("  const i64 g{0}_{1} = gy{1} * C + gx{0};", k, c));
      s.line(fmt::format("  const int t{0}_{1} = (ly{1} + {2}) * {3} + lx{0} + {4};", k, c, ring_y, pitch, radius));
    }
  }
  auto own = [](int k, int c, int unit) { return fmt::format("q{}_{}_{}", k, c, unit + 8); };
  for (int k = 0; k < columns; ++k) {
    for (int c = 0; c < lines; ++c) {
      for (int m = own_low; m <= own_high; ++m) s.line(fmt::format("  T {} = __ldg(p + ({} * U + g{}_{}));", own(k, c, m), m, k, c));
    }
  }
  if (per_thread > 0) {
    s.line("  const int thread = threadIdx.y * 32 + threadIdx.x;");
    for (int h = 0; h < per_thread; ++h) {
      s.line(fmt::format("  const int i{0} = thread + {1};", h, h * threads));
      s.line(fmt::format("  const bool has{0} = i{0} < {1};", h, halo.size()));
      s.line(fmt::format("  const int hx{0} = has{0} ? halo_x[i{0}] : 0, hy{0} = has{0} ? halo_y[i{0}] : 0;", h));
      s.line(fmt::format("  const i64 e{0} = ((y0 + hy{0} < y_end ? y0 + hy{0} : y_end) - y0) * C + "
                         "(x0 + hx{0} < x_end ? x0 + hx{0} : x_end) - x0;", h));
      s.line(fmt::format("  const int th{0} = (hy{0} + {1}) * {2} + hx{0} + {3};", h, ring_y, pitch, radius));
      s.line(fmt::format("  T h{0} = has{0} ? __ldg(p + ({1} * U + e{0})) : (T)0;", h, high));
    }
  }
  // The units below the newest one that the first step reads.
  for (int m = low; m < high; ++m) {
    for (int k = 0; k < columns; ++k) {
      for (int c = 0; c < lines; ++c) s.line(fmt::format("  tile[{}][t{}_{}] = __ldg(p + ({} * U + g{}_{}));", m - low, k, c, m, k, c));
    }
    for (int h = 0; h < per_thread; ++h) s.line(fmt::format("  if (has{0}) tile[{1}][th{0}] = __ldg(p + ({2} * U + e{0}));", h, m - low, m));
  }
  s.line("  int slot = 0;");
  s.line("  for (i64 z = zb;;) {");
  s.line("    const bool more = z + 1 < ze;");
  std::vector<std::string> own_lines;
  for (int k = 0; k < columns; ++k) {
    for (int c = 0; c < lines; ++c) own_lines.push_back(fmt::format("g{}_{}", k, c));
  }
  prefetch_ahead(s, shape, own_high + 1, own_lines);
  for (int k = 0; k < columns; ++k) {
    for (int c = 0; c < lines; ++c) s.line(fmt::format("    const T n{0}_{1} = more ? __ldg(p + ({2} * U + g{0}_{1})) : (T)0;", k, c, own_high + 1));
  }
  for (int h = 0; h < per_thread; ++h) s.line(fmt::format("    const T nh{0} = more && has{0} ? __ldg(p + ({1} * U + e{0})) : (T)0;", h, high + 1));
  // The slot of unit z + m: (slot + m - low) mod slots.
  auto slot_of = [](int m) { return fmt::format("slot{}", m + 8); };
  if (tiled) {
    for (int m = low; m <= high; ++m) {
      s.line(fmt::format("    const int {0} = slot + {1} < {2} ? slot + {1} : slot + {1} - {2};", slot_of(m), m - low, slots));
    }
    for (int k = 0; k < columns; ++k) {
      for (int c = 0; c < lines; ++c) s.line(fmt::format("    tile[{}][t{}_{}] = {};", slot_of(high), k, c, own(k, c, high)));
    }
    for (int h = 0; h < per_thread; ++h) s.line(fmt::format("    if (has{0}) tile[{1}][th{0}] = h{0};", h, slot_of(high)));
    s.line("    __syncthreads();");
  }
  std::vector<Cell> cells;
  for (int k = 0; k < columns; ++k) {
    for (int c = 0; c < lines; ++c) {
      cells.push_back({k, 0, c});
      s.line(fmt::format("    const i64 cell{0}_{1} = at + g{0}_{1};", k, c));
    }
  }
  update_cells(
      s, terms, precision, cells,
      [&](const Cell& cell, const Term& t) {
        return in_column(t) ? own(cell.k, cell.c, t.march)
                            : fmt::format("tile[{}][t{}_{} + {}]", slot_of(t.march), cell.k, cell.c, t.row * pitch + t.dx);
      },
      [](const Cell& cell) { return source_of(fmt::format("cell{}_{}", cell.k, cell.c)); });
  for (const Cell& cell : cells) {
    s.line(fmt::format("    if (keepx{0} && keepy{1}) out[cell{0}_{1}] = o{2};", cell.k, cell.c, cell.name()));
  }
  s.line("    if (!more) break;");
  s.line("    ++z;");
  s.line("    at += U;");
  s.line("    p += U;");
  if (tiled) s.line(fmt::format("    slot = slot + 1 < {0} ? slot + 1 : 0;", slots));
  for (int k = 0; k < columns; ++k) {
    for (int c = 0; c < lines; ++c) {
      for (int m = own_low; m < own_high; ++m) s.line(fmt::format("    {} = {};", own(k, c, m), own(k, c, m + 1)));
      s.line(fmt::format("    {} = n{}_{};", own(k, c, own_high), k, c));
    }
  }
  for (int h = 0; h < per_thread; ++h) s.line(fmt::format("    h{0} = nh{0};", h));
  s.line("  }");
  s.line("}");
  return s.text();
}

}  // namespace

std::vector<int> halo_vector_cells(const Stencil& stencil) {
  std::vector<int> out;
  for (int cells : {2, kMostVectorCells}) {
    if (cells <= line_reach(stencil)) out.push_back(cells);
  }
  return out;
}

bool tiled_in_shared(const Stencil& stencil, Precision precision, const SweepShape& shape) {
  return shape.shared && Tile(stencil, shape).bytes(precision) <= kStaticSharedBytes;
}

bool staged_in_shared(const Stencil& stencil, Precision precision, const SweepShape& shape) {
  return stencil.dimension == 3 && shape.staged && !tiled_in_shared(stencil, precision, shape);
}

SweepShape SweepShape::default_for(const Stencil& stencil, Precision precision, bool stages) {
  SweepShape s;
  if (stencil.dimension == 3) {
    s.warps = 4;
    s.columns = 1;
    s.lines = 4;
    s.units = 32;
    // On an H100 at this shape, 512^3, with the lines aligned and the sizes
    // constant: star4 in double sweeps in 1.07 ms tiled against 1.32 from
    // registers (196 of them a thread), in float 0.68 against 0.65; star2_3d
    // (radius 2) 0.93 against 0.86 in double, 0.54 against 0.52 in float;
    // radius 1 is as fast or faster from registers.
    s.shared = stencil.radius() >= 3 && precision == Precision::Double;
    // From registers, marches of 8 planes with 2 planes asked of L2 ahead:
    // on an H200, 512^3, against 32 planes and none, box27 0.94 / 0.92 of the
    // time (float / double), star4 float 0.93, star2_3d 0.91 / 0.93, poisson7
    // double 0.93. A stencil of poisson7's six points or fewer in float (a
    // kernel whose few values leave an SM many warps to hide the memory's
    // latency with) marches 4 planes with none ahead: poisson7 float took
    // 0.99-1.02 of that time over 8 planes, 1.01-1.03 also ahead, and over 4
    // planes 0.94 of the time over 8 (1.08 of a copy's; double there 1.02).
    // The tiled kernel sweeps fastest over 32 planes (on the same GPU star4
    // double takes 1.04 of that time over 16, 1.29-1.38 ahead).
    if (!s.shared) {
      const bool few = stencil.points.size() <= 6 && precision == Precision::Float;
      s.units = few ? 4 : 8;
      s.ahead = few ? 0 : 2;
    }
  } else {
    s.warps = 2;
    // On an H200 at 16384^2, against 16 rows: box9 0.94 / 0.92 of the time
    // (float / double), cross9 0.97 / 0.91. From radius 2, one column over 8
    // rows: cross9 0.90 / 0.94 of the time at 2 columns over 4 (1.12 / 1.10 of
    // a copy's), where box9 takes 1.02 / 1.06 of it.
    const bool far = stencil.radius() >= 2;
    s.columns = far ? 1 : 2;
    s.lines = 1;
    s.units = far ? 8 : 4;
  }
  // Groups of 16 bytes (a float4, a double2), half that from radius 2 in 3-D,
  // where a thread's lines already keep many values in registers: what swept
  // fastest on an H100 (docs/stencils.md, "How GPUs run a stencil"), larger groups
  // there spilling registers.
  const int widest = precision == Precision::Float ? 4 : 2;
  s.vector = s.shared ? 1 : stencil.dimension == 3 && stencil.radius() >= 2 ? widest / 2 : widest;
  // Staged from radius 3: on an H200 (512^3, against the shapes above), star4
  // swept in 1.34 of a copy's time against 1.67 in float (registers), 1.27
  // against 1.84 in double (tiled). From radius 1 and 2 the register kernel
  // is as fast or faster: poisson7 float 1.15 against 1.17 staged, box27 float
  // 1.23 against 1.76, star2_3d 1.20-1.22 against 1.28 in double (in float
  // staged 1.26 against 1.29-1.31). Four lines a thread make a block's tile 16
  // lines tall, for boxes of 24 at radius 4 (one of 16 for 8 at 2 lines:
  // star4 1.49-1.50 / 1.37-1.39); 8 warps of 4 lines leave an SM
  // one block (1.39-1.41 / 1.92-2.05). A march of 128 planes reads the planes
  // before and after it for fewer planes than one of 64 (float 1.34 against
  // 1.38). docs/stencils.md, "The staged sweep".
  if (stages && stencil.dimension == 3 && stencil.radius() >= 3) {
    s.staged = true;
    s.shared = false;
    s.warps = 4;
    s.lines = 4;
    s.units = 128;
    s.ahead = 0;
    s.vector = widest;
  }
  return s;
}

std::string sweep_kernel_source(const Stencil& stencil, Precision precision, const SweepShape& shape,
                                const SweepLayout* layout) {
  if (shape.vector < 1 || shape.vector > kMostVectorCells || kMostVectorCells % shape.vector != 0) {
    HETSTENCIL_THROW(InvalidArgument, "a group of " + std::to_string(shape.vector) +
                                          " cells: the generated sweep takes 1, 2 or " + std::to_string(kMostVectorCells));
  }
  if (tiled_in_shared(stencil, precision, shape)) return shared_sweep(stencil, precision, shape);
  if (staged_in_shared(stencil, precision, shape)) return staged_sweep_source(stencil, precision, shape, layout);
  return register_sweep(stencil, precision, shape, layout);
}

}  // namespace hetstencil::cuda
