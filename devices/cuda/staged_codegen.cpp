#include "devices/cuda/staged_codegen.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "devices/cuda/codegen_parts.hpp"
#include "hetstencil/error.hpp"

namespace hetstencil::cuda {
namespace {

using codegen::Cell;
using codegen::Source;
using codegen::Term;

// A term read from the thread's own column of cells (dx = dy = 0). The
// column's planes below the ring's lowest stay in registers, passed from plane
// to plane; the others are read from the ring like any term.
bool in_column(const Term& t) { return t.row == 0 && t.dx == 0; }

// The planes of the column's terms, [low, high] (none: low > high).
std::pair<int, int> column_planes(const std::vector<Term>& terms) {
  bool any = false;
  int low = 1, high = 0;
  for (const Term& t : terms) {
    if (!in_column(t)) continue;
    low = any ? std::min(low, t.march) : t.march;
    high = any ? std::max(high, t.march) : t.march;
    any = true;
  }
  return {low, high};
}

// What a step reads of the ring: a group of `vector` cells `group` groups
// along the line from the thread's own, `row` lines from its first line, in
// the plane `march` away.
struct RingRead {
  int march = 0;
  int row = 0;
  int group = 0;
  bool operator<(const RingRead& o) const { return std::tie(march, row, group) < std::tie(o.march, o.row, o.group); }
};

// The device functions of the ring: its shared addresses, its barriers (one
// a slot that a copy completes, one that the updating warps arrive at when
// they are done with it) and the copy of a box.
const char* kRingFunctions = R"(struct __align__(64) TensorMap { unsigned long long words[16]; };
__device__ __forceinline__ unsigned shared_at(const void* p) {
  unsigned long long a;
  asm("cvta.to.shared.u64 %0, %1;" : "=l"(a) : "l"(p));
  return (unsigned)a;
}
__device__ __forceinline__ void barrier_init(unsigned long long* b, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(shared_at(b)), "r"(count) : "memory");
}
__device__ __forceinline__ void barrier_expect(unsigned long long* b, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(shared_at(b)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void barrier_arrive(unsigned long long* b) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(shared_at(b)) : "memory");
}
__device__ __forceinline__ void barrier_wait(unsigned long long* b, int parity) {
  asm volatile("{\n .reg .pred done;\n wait_again:\n mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n @!done bra wait_again;\n}"
               :: "r"(shared_at(b)), "r"(parity) : "memory");
}
__device__ __forceinline__ void copy_box(void* to, const TensorMap* map, int x, int y, int z, unsigned long long* b) {
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
               :: "r"(shared_at(to)), "l"(map), "r"(x), "r"(y), "r"(z), "r"(shared_at(b)) : "memory");
}
)";

}  // namespace

StagedRing StagedRing::of(const Stencil& stencil, Precision precision, const SweepShape& shape) {
  const std::vector<Term> terms = codegen::terms_of(stencil);
  StagedRing r;
  r.tile_x = 32 * shape.vector;
  r.tile_y = shape.warps * shape.lines;
  // Whole groups beside the tile, and a box that starts on 16 bytes.
  const int step = std::max(codegen::per_16_bytes(precision), shape.vector);
  r.lead_x = (codegen::line_reach(stencil) + step - 1) / step * step;
  for (const Term& t : terms) {
    if (!in_column(t)) r.lead_y = std::max(r.lead_y, std::abs(t.row));
  }
  r.box_x = r.tile_x + 2 * r.lead_x;
  r.box_y = r.tile_y + 2 * r.lead_y;
  // The ring holds every plane from the lowest to the highest of those the
  // terms beside the column read and the column's highest: the column's planes
  // from the ring's lowest up are read from it, which leaves registers for
  // more lines a thread.
  const auto [column_low, column_high] = column_planes(terms);
  std::set<int> planes;
  if (column_low <= column_high) planes.insert(column_high);
  for (const Term& t : terms) {
    if (!in_column(t)) planes.insert(t.march);
  }
  r.low = *planes.begin();
  r.high = *planes.rbegin();
  r.slots = r.high - r.low + 1 + kStagedAhead;
  r.threads = 32 * (shape.warps + 1);
  r.box_bytes = static_cast<std::size_t>(r.box_x) * r.box_y * value_bytes(precision);
  r.slot_bytes = (r.box_bytes + 127) / 128 * 128;
  r.bytes = r.slots * r.slot_bytes + 2 * r.slots * sizeof(unsigned long long);
  return r;
}

std::string staged_sweep_source(const Stencil& stencil, Precision precision, const SweepShape& shape,
                                const SweepLayout* layout) {
  if (stencil.dimension != 3) {
    HETSTENCIL_THROW(InvalidArgument, "the staged sweep is of 3-D stencils; '" + stencil.name + "' is 2-D");
  }
  const std::vector<Term> terms = codegen::terms_of(stencil);
  const StagedRing ring = StagedRing::of(stencil, precision, shape);
  const auto [column_low, column_high] = column_planes(terms);
  const int vector = shape.vector;
  const int lines = shape.lines;
  const char* type = codegen::type_of(precision);
  const int per_load = std::min(vector, codegen::per_16_bytes(precision));
  const std::string vector_type = per_load > 1 ? fmt::format("{}{}", type, per_load) : type;
  const char* fields = "xyzw";
  // A thread's cells: group 0 (one a thread), cell i, line c.
  std::vector<Cell> cells;
  for (int c = 0; c < lines; ++c) {
    for (int i = 0; i < vector; ++i) cells.push_back({0, i, c});
  }
  // Where a term's value of a cell comes from: the column's registers (the
  // thread's own group of one of its lines, in a plane below the ring's), or a
  // group read from the ring.
  const int kept_high = ring.low - 1;  // the column's highest plane in registers
  const bool kept = column_low <= column_high && column_low <= kept_high;
  const auto group_of = [&](int dx) { return codegen::floor_div(dx, vector); };
  const auto from_column = [&](int march, int row, int group) {
    return kept && group == 0 && row >= 0 && row < lines && march >= column_low && march <= kept_high;
  };
  const auto column_var = [](int march, int c, int i) { return fmt::format("q{}_{}_{}", march + 8, c, i); };
  const auto ring_var = [](const RingRead& r, int i) {
    return fmt::format("r{}_{}_{}_{}", r.march + 8, r.row + 8, r.group + 8, i);
  };
  std::set<RingRead> reads;
  for (const Cell& cell : cells) {
    for (const Term& t : terms) {
      const int row = cell.c + t.row, group = group_of(cell.i + t.dx);
      if (!from_column(t.march, row, group)) reads.insert({t.march, row, group});
    }
  }
  // The ring's lowest plane of the thread's own groups joins the registers at
  // the step's end, read or not by a term.
  if (kept) {
    for (int c = 0; c < lines; ++c) reads.insert({ring.low, c, 0});
  }

  Source s;
  codegen::open_kernel(s, stencil, precision, shape, "staged in shared memory", vector);
  s.add(kRingFunctions);
  // Two blocks an SM at least, and at most 128 registers a thread where that
  // leaves room for more, as many as an sm_90 SM's 228 KB of shared memory
  // holds rings: on an H200 (512^3, float, 8 warps of 2 lines of groups of 4,
  // each plane's lines copied one by one) star4 swept in 2.37 of a copy's
  // time with one block an SM (116 registers), 1.59 with two (96).
  const int by_shared = std::max<int>(1, static_cast<int>(228 * 1024 / ring.bytes));
  const int min_blocks = std::min(std::max(2, 65536 / (ring.threads * 128)), by_shared);
  s.line(fmt::format("extern \"C\" __global__ void __launch_bounds__({}, {}) {}(", ring.threads, min_blocks, kSweepEntry));
  s.line("    const T* __restrict__ in, T* __restrict__ out, const T* __restrict__ sf, i64 spike,");
  if (layout) {
    s.line("    i64 unit_begin, i64 unit_end, i64 units_per_block, i64, i64, i64, i64, i64, const __grid_constant__ TensorMap planes) {");
    s.line(fmt::format("  const i64 nx = {}, lines = {}, cols = {}, unit_values = {}, depth = {};", layout->nx, layout->lines,
                       layout->cols, layout->unit_values, layout->depth));
  } else {
    s.line("    i64 unit_begin, i64 unit_end, i64 units_per_block, i64 nx, i64 lines, i64 cols, i64 unit_values, i64 depth,");
    s.line("    const __grid_constant__ TensorMap planes) {");
  }
  s.line("  extern __shared__ __align__(128) unsigned char staged[];");
  s.line("  T* ring = reinterpret_cast<T*>(staged);");
  s.line(fmt::format("  unsigned long long* full = reinterpret_cast<unsigned long long*>(staged + {});", ring.slots * ring.slot_bytes));
  s.line(fmt::format("  unsigned long long* empty = full + {};", ring.slots));
  s.line("  const int lane = threadIdx.x, warp = threadIdx.y;");
  s.line(fmt::format("  const i64 x0 = (i64)blockIdx.x * {}, y0 = (i64)blockIdx.y * {};", ring.tile_x, ring.tile_y));
  s.line("  const i64 zb = unit_begin + (i64)blockIdx.z * units_per_block;");
  s.line("  if (zb >= unit_end) return;");
  s.line("  const int steps = (int)((zb + units_per_block < unit_end ? zb + units_per_block : unit_end) - zb);");
  s.line(fmt::format("  if (warp == 0 && lane < {}) {{", ring.slots));
  s.line("    barrier_init(&full[lane], 1);");
  s.line(fmt::format("    barrier_init(&empty[lane], {});", shape.warps));
  s.line("  }");
  s.line("  asm volatile(\"fence.mbarrier_init.release.cluster;\" ::: \"memory\");");
  s.line("  __syncthreads();");
  // The copying warp: plane zb + low + q into slot q mod slots, once the
  // updating warps are done with the plane slots before it.
  const std::size_t slot_values = ring.slot_bytes / value_bytes(precision);
  s.line(fmt::format("  if (warp == {}) {{", shape.warps));
  s.line("    if (lane == 0) {");
  s.line(fmt::format("      for (int q = 0; q < steps + {}; ++q) {{", ring.high - ring.low));
  s.line(fmt::format("        const int slot = q % {};", ring.slots));
  s.line(fmt::format("        if (q >= {0}) barrier_wait(&empty[slot], (q / {0} - 1) & 1);", ring.slots));
  s.line(fmt::format("        barrier_expect(&full[slot], {});", ring.box_bytes));
  s.line(fmt::format("        copy_box(ring + slot * {}, &planes, (int)x0, (int)(depth + y0 - {}), (int)(zb + {} + q), &full[slot]);",
                     slot_values, ring.lead_y, ring.low));
  s.line("      }");
  s.line("    }");
  s.line("    return;");
  s.line("  }");
  // The updating warps. A group past the line's end, or a line past the
  // plane's, loads its first registers from the last one before it (global
  // memory), reads what the ring holds there (zeros past the slab), and
  // stores nothing.
  s.line(fmt::format("  const int ly = warp * {};", lines));
  s.line(fmt::format("  const i64 x = x0 + lane * {};", vector));
  s.line("  const bool keep = x < nx;");
  s.line(fmt::format("  const i64 xl = keep ? x : (nx - 1) / {0} * {0};", vector));
  for (int c = 0; c < lines; ++c) {
    s.line(fmt::format("  const bool keep{0} = keep && y0 + ly + {0} < lines;", c));
    s.line(fmt::format("  const i64 at{0} = (depth + (y0 + ly + {0} < lines + depth ? y0 + ly + {0} : lines + depth - 1)) * cols + depth + xl;", c));
  }
  s.line(fmt::format("  const T* tile = ring + (ly + {}) * {} + {} + lane * {};", ring.lead_y, ring.box_x, ring.lead_x, vector));
  const auto load_group = [&](const std::string& indent, const std::string& from, const std::vector<std::string>& names,
                              bool global) {
    std::string text = indent + "T " + names[0];
    for (std::size_t i = 1; i < names.size(); ++i) text += ", " + names[i];
    text += ";\n";
    if (vector == 1) return text + fmt::format("{}{} = {};", indent, names[0], global ? "__ldg(" + from + ")" : "*(" + from + ")");
    if (global) {
      std::string refs;
      for (const std::string& n : names) refs += ", " + n;
      return text + fmt::format("{}cells_load({}{});", indent, from, refs);
    }
    for (int v = 0; v < vector / per_load; ++v) {
      text += fmt::format("{0}{{ const {1} w = reinterpret_cast<const {1}*>({2})[{3}];", indent, vector_type, from, v);
      for (int f = 0; f < per_load; ++f) text += fmt::format(" {} = w.{};", names[v * per_load + f], fields[f]);
      text += " }\n";
    }
    text.pop_back();
    return text;
  };
  const auto column_names = [&](int march, int c) {
    std::vector<std::string> names;
    for (int i = 0; i < vector; ++i) names.push_back(column_var(march, c, i));
    return names;
  };
  // The column's planes in registers, for the first step.
  if (kept) {
    for (int m = column_low; m <= kept_high; ++m) {
      for (int c = 0; c < lines; ++c) {
        s.line(load_group("  ", fmt::format("in + (zb + {}) * unit_values + at{}", m, c), column_names(m, c), true));
      }
    }
  }
  s.line(fmt::format("  for (int q = 0; q < {}; ++q) barrier_wait(&full[q], 0);", ring.high - ring.low));
  s.line("  for (int k = 0; k < steps; ++k) {");
  s.line(fmt::format("    const int newest = k + {};", ring.high - ring.low));
  s.line(fmt::format("    barrier_wait(&full[newest % {}], (newest / {}) & 1);", ring.slots, ring.slots));
  s.line("    const i64 z = zb + k;");
  const auto slot_of = [&](int march) { return fmt::format("((k + {}) % {}) * {}", march - ring.low, ring.slots, slot_values); };
  for (const RingRead& r : reads) {
    std::vector<std::string> names;
    for (int i = 0; i < vector; ++i) names.push_back(ring_var(r, i));
    s.line(load_group("    ", fmt::format("tile + {} + {}", slot_of(r.march), r.row * ring.box_x + r.group * vector), names, false));
  }
  for (int c = 0; c < lines; ++c) s.line(fmt::format("    const i64 cell{0} = z * unit_values + at{0};", c));
  codegen::update_cells(
      s, terms, precision, cells,
      [&](const Cell& cell, const Term& t) {
        const int row = cell.c + t.row, along = cell.i + t.dx, group = group_of(along), i = along - group * vector;
        if (from_column(t.march, row, group)) return column_var(t.march, row, i);
        return ring_var(RingRead{t.march, row, group}, i);
      },
      // A cell's source is read where its sum ends, one value at a time: read
      // as a group's vector at the step's start, the sources of star4 at 4
      // warps of 2 lines, its column's planes all in registers, took 145
      // registers a thread in float, against 127.
      [&](const Cell& cell) { return codegen::source_of(fmt::format("cell{} + {}", cell.c, cell.i)); });
  // The ring's oldest plane is read: its slot may take the next copy.
  s.line("    __syncwarp();");
  s.line(fmt::format("    if (lane == 0) barrier_arrive(&empty[k % {}]);", ring.slots));
  for (int c = 0; c < lines; ++c) {
    std::string outs;
    for (int i = 0; i < vector; ++i) outs += ", o" + Cell{0, i, c}.name();
    s.line(fmt::format("    if (keep{}) {{", c));
    if (vector == 1) {
      s.line(fmt::format("      out[cell{0}] = o{1};", c, Cell{0, 0, c}.name()));
    } else {
      s.line(fmt::format("      if (x + {} <= nx) {{", vector));
      s.line(fmt::format("        cells_store(out + cell{}{});", c, outs));
      s.line("      } else {");
      s.line(fmt::format("        out[cell{}] = o{};", c, Cell{0, 0, c}.name()));
      for (int i = 1; i < vector; ++i) s.line(fmt::format("        if (x + {0} < nx) out[cell{1} + {0}] = o{2};", i, c, Cell{0, i, c}.name()));
      s.line("      }");
    }
    s.line("    }");
  }
  if (kept) {
    for (int c = 0; c < lines; ++c) {
      for (int i = 0; i < vector; ++i) {
        for (int m = column_low; m < kept_high; ++m) s.line(fmt::format("    {} = {};", column_var(m, c, i), column_var(m + 1, c, i)));
        s.line(fmt::format("    {} = {};", column_var(kept_high, c, i), ring_var(RingRead{ring.low, c, 0}, i)));
      }
    }
  }
  s.line("  }");
  s.line("}");
  return s.text();
}

}  // namespace hetstencil::cuda
