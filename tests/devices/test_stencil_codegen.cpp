// The sweep generated for a description: its source compiles with NVRTC for
// every built-in and random descriptions, in both precisions and several
// shapes (no GPU needed); on a GPU, each shape's sweep gives every cell the
// bits of StencilTerms::update, and a compiled kernel is kept on disk, a
// damaged one compiled again.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "core/stencil_terms.hpp"
#include "devices/cuda/cuda_info.hpp"
#include "devices/cuda/cuda_resources.hpp"
#include "devices/cuda/runtime_kernel.hpp"
#include "devices/cuda/staged_codegen.hpp"
#include "devices/cuda/stencil_codegen.hpp"
#include "devices/cuda/stencil_kernels.cuh"
#include "devices/cuda/stencil_tuning.hpp"
#include "hetstencil/error.hpp"
#include "tests/test_support.hpp"

namespace hetstencil {
namespace {

namespace fs = std::filesystem;
using cuda::SweepShape;

// A 3-D stencil of the points `offsets` {dx, dy, dz}, weights 1 to n.
Stencil of_points(const std::string& name, const std::vector<std::array<int, 3>>& offsets) {
  Stencil s;
  s.name = name;
  s.dimension = 3;
  s.diagonal = 64.0;
  double w = 1.0;
  for (const auto& o : offsets) s.points.push_back({o[0], o[1], o[2], w++});
  s.validate();
  return s;
}

std::vector<Stencil> stencils() {
  std::vector<Stencil> out;
  for (const std::string& name : builtin_stencil_names()) out.push_back(Stencil::builtin(name));
  out.push_back(testing_support::random_stencil(2, 31, 17));
  out.push_back(testing_support::random_stencil(3, 32, 40));
  // Radius 3 reaching one cell along the line (a staged box in double starts
  // before the ring), points along the split axis alone, and none there.
  out.push_back(of_points("reach1", {{1, 0, 0}, {0, 3, 0}, {0, 0, -3}, {-1, 0, 0}, {0, -2, 1}}));
  out.push_back(of_points("column", {{0, 0, -2}, {0, 0, 1}, {0, 0, 3}}));
  out.push_back(of_points("aside", {{1, 0, 0}, {0, -2, 0}, {-1, 1, 1}, {2, 0, -1}}));
  return out;
}

// A 3-D stencil whose points reach `along` cells along the line and `across`
// lines and planes.
Stencil reaching(int along, int across) {
  Stencil s;
  s.name = "reach";
  s.dimension = 3;
  s.diagonal = 10.0;
  for (int a : {-1, 1}) {
    s.points.push_back({a * along, 0, 0, 1.0});
    s.points.push_back({0, a * across, 0, 1.0});
    s.points.push_back({0, 0, a * across, 1.0});
  }
  s.validate();
  return s;
}

// Each kernel at the stencil's default shape and others: groups of 1, 2 and 4
// cells a lane (the tiled kernel takes one), units asked of L2 ahead, and
// staged (3-D) blocks of one line to more than the plane has.
std::vector<SweepShape> shapes(const Stencil& s) {
  SweepShape registers = SweepShape::default_for(s, Precision::Double), shared = registers;
  registers.shared = false;
  registers.staged = false;
  shared.shared = true;
  return {registers,
          SweepShape{4, 1, 2, 64, false, 4, 0, false, true},
          SweepShape{1, 1, 1, 3, false, 1, 0, false, true},
          SweepShape{2, 1, 4, 5, false, 2, 0, false, true},
          SweepShape{8, 1, 2, 4, false, 4, 0, false, true},
          SweepShape{8, 3, 1, 7},
          SweepShape{1, 1, 2, 5},
          SweepShape{2, 2, 1, 3, false, 4},
          SweepShape{4, 1, 4, 6, false, 2, 2},
          SweepShape{1, 3, 2, 5, false, 4},
          SweepShape{2, 2, 1, 3, false, 4, 0, true},
          SweepShape{1, 1, 3, 5, false, 2, 2, true},
          shared,
          SweepShape{8, 3, 1, 7, true},
          SweepShape{2, 2, 2, 9, true, 1, 4},
          SweepShape{1, 1, 2, 5, true, 4},
          SweepShape{8, 4, 2, 7, true, 2}};  // a ring too large for shared memory in star4 double
}

// NVRTC's verdict on `source`, compiled as the library compiles it, with its
// log when it refuses it.
std::string compile_errors(const std::string& source) {
  try {
    return cuda::compile_kernel(source, 90, "the test's sweep").empty() ? "an empty CUBIN" : "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

TEST(StencilCodegen, WhereTheGpuDoesNotStage3DStencilsOfRadiusThreeOrMoreTileInSharedMemoryByDefaultInDouble) {
  Stencil star2;  // a 3-D star of radius 2
  star2.name = "star2";
  star2.dimension = 3;
  star2.diagonal = 12.0;
  for (int a : {-2, -1, 1, 2}) {
    for (int axis = 0; axis < 3; ++axis) {
      star2.points.push_back({axis == 0 ? a : 0, axis == 1 ? a : 0, axis == 2 ? a : 0, 1.0});
    }
  }
  star2.validate();
  EXPECT_TRUE(SweepShape::default_for(Stencil::builtin("star4"), Precision::Double, false).shared);
  EXPECT_FALSE(SweepShape::default_for(Stencil::builtin("star4"), Precision::Float, false).shared);
  EXPECT_FALSE(SweepShape::default_for(star2, Precision::Double, false).shared);
  for (Precision precision : {Precision::Float, Precision::Double}) {
    EXPECT_FALSE(SweepShape::default_for(Stencil::builtin("star4"), precision, false).staged);
    for (bool stages : {false, true}) {
      EXPECT_FALSE(SweepShape::default_for(Stencil::builtin("poisson7"), precision, stages).shared);
      EXPECT_FALSE(SweepShape::default_for(Stencil::builtin("box27"), precision, stages).shared);
      EXPECT_FALSE(SweepShape::default_for(Stencil::builtin("box9"), precision, stages).shared);
    }
  }
}

TEST(StencilCodegen, WhereTheGpuStages3DStencilsOfRadiusThreeOrMoreAreStagedByDefault) {
  const Stencil star4 = Stencil::builtin("star4");
  for (Precision precision : {Precision::Float, Precision::Double}) {
    const SweepShape shape = SweepShape::default_for(star4, precision);
    EXPECT_TRUE(shape.staged) << to_string(precision);
    EXPECT_FALSE(shape.shared);
    EXPECT_TRUE(cuda::staged_in_shared(star4, precision, shape));
    EXPECT_EQ(shape.vector * value_bytes(precision), 16u) << "groups of 16 bytes";
    // A tile tall enough that its box's lines beside it add at most half
    // again, in a ring two blocks of an sm_90 SM hold.
    const cuda::StagedRing ring = cuda::StagedRing::of(star4, precision, shape);
    EXPECT_LE(2 * ring.box_y, 3 * ring.tile_y) << to_string(precision);
    EXPECT_LE(2 * ring.bytes, 228u * 1024u) << to_string(precision);
    for (const Stencil& other : {reaching(2, 2), Stencil::builtin("poisson7"), Stencil::builtin("box27"), Stencil::builtin("box9")}) {
      EXPECT_FALSE(SweepShape::default_for(other, precision).staged) << other.name;
    }
  }
  // Asked of a 2-D stencil, or with the tiles in shared memory, it is not staged.
  SweepShape asked = SweepShape::default_for(star4, Precision::Float);
  EXPECT_FALSE(cuda::staged_in_shared(Stencil::builtin("box9"), Precision::Float, asked));
  asked.shared = true;
  asked.vector = 1;
  EXPECT_FALSE(cuda::staged_in_shared(star4, Precision::Float, asked));
}

TEST(StencilCodegen, StagingIsTunedIn3DAndPicksTheKernel) {
  StencilJob job;
  job.poisson5 = false;
  job.precision = Precision::Double;
  job.stencil = Stencil::builtin("star4");
  const auto listed = [&](const char* name) {
    const std::vector<Tunable> all = cuda::stencil_tunables(job, true);
    const auto it = std::find_if(all.begin(), all.end(), [&](const Tunable& t) { return t.name == name; });
    return it == all.end() ? std::optional<Tunable>() : *it;
  };
  const std::optional<Tunable> staged = listed("staged");
  ASSERT_TRUE(staged);
  EXPECT_TRUE(staged->family) << "each kernel is searched from";
  EXPECT_EQ(staged->default_value, 1);
  EXPECT_TRUE(cuda::sweep_choice("gpu0", job, true).shape.staged);
  job.tuning = {{"staged", 0}};
  EXPECT_FALSE(cuda::sweep_choice("gpu0", job, true).shape.staged);
  // What the staged kernel does not read is tuned without it.
  for (const char* name : {"columns", "ahead", "halo"}) {
    const std::optional<Tunable> t = listed(name);
    ASSERT_TRUE(t) << name;
    EXPECT_EQ(t->only_with.at("staged"), std::vector<int>{0}) << name;
  }
  job.stencil = Stencil::builtin("box9");
  job.tuning = {};
  EXPECT_FALSE(listed("staged")) << "2-D stencils are not staged";
}

TEST(StencilCodegen, AGpuThatDoesNotStageTunesAndSweepsWithoutIt) {
  StencilJob job;
  job.poisson5 = false;
  job.precision = Precision::Double;
  job.stencil = Stencil::builtin("star4");
  for (const Tunable& t : cuda::stencil_tunables(job, false)) EXPECT_NE(t.name, "staged");
  const cuda::SweepChoice choice = cuda::sweep_choice("gpu0", job, false);
  EXPECT_FALSE(choice.shape.staged);
  EXPECT_EQ(choice.shape, SweepShape::default_for(job.stencil, job.precision, false));
  job.tuning = {{"staged", 1}};
  try {
    cuda::sweep_choice("gpu3", job, false);
    FAIL() << "staged=1 taken by a GPU that does not stage";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("gpu3"), std::string::npos) << e.what();
  }
}

TEST(StencilCodegen, AStagedRingHoldsThePlanesAStepReadsAndThoseCopiedAhead) {
  const Stencil star4 = Stencil::builtin("star4");
  const cuda::StagedRing ring = cuda::StagedRing::of(star4, Precision::Float, SweepShape{4, 1, 2, 64, false, 4, 0, false, true});
  // The plane's neighbours within it, and the own cells of the plane 4 ahead, which join the registers.
  EXPECT_EQ(ring.low, 0);
  EXPECT_EQ(ring.high, 4);
  EXPECT_EQ(ring.slots, 5 + cuda::kStagedAhead);
  EXPECT_EQ(ring.tile_x, 128);
  EXPECT_EQ(ring.box_x, 128 + 2 * 4);
  EXPECT_EQ(ring.box_y, 8 + 2 * 4);
  EXPECT_EQ(ring.box_bytes, std::size_t{136} * 16 * sizeof(float));
  EXPECT_EQ(ring.slot_bytes % 128, 0u);
  EXPECT_GE(ring.bytes, ring.slots * ring.box_bytes);
  EXPECT_EQ(ring.threads, 32 * 5) << "the updating warps and the copying one";
  // box27 reads the planes either side through the ring; radius 1 in double
  // with groups of 4 still starts a box a whole group before its tile.
  const cuda::StagedRing box = cuda::StagedRing::of(Stencil::builtin("box27"), Precision::Double, SweepShape{2, 1, 1, 8, false, 4, 0, false, true});
  EXPECT_EQ(box.low, -1);
  EXPECT_EQ(box.high, 1);
  EXPECT_EQ(box.lead_x, 4);
  EXPECT_EQ(box.lead_y, 1);
}

TEST(StencilCodegen, ByDefaultAThreadUpdatesGroupsOfSixteenBytesOfCellsAndHalfThatFromRadiusTwoIn3D) {
  for (const char* name : {"box9", "poisson7", "box27"}) {
    EXPECT_EQ(SweepShape::default_for(Stencil::builtin(name), Precision::Float).vector, 4) << name;
    EXPECT_EQ(SweepShape::default_for(Stencil::builtin(name), Precision::Double).vector, 2) << name;
  }
  EXPECT_EQ(SweepShape::default_for(Stencil::builtin("star4"), Precision::Float, false).vector, 2);
  // Tiled in shared memory: one cell a group.
  EXPECT_EQ(SweepShape::default_for(Stencil::builtin("star4"), Precision::Double, false).vector, 1);
}

TEST(StencilCodegen, AKernelTilesInSharedMemoryWhereAskedAndItsRingFits) {
  const Stencil star4 = Stencil::builtin("star4");
  EXPECT_TRUE(cuda::tiled_in_shared(star4, Precision::Double, SweepShape::default_for(star4, Precision::Double, false)));
  EXPECT_FALSE(cuda::tiled_in_shared(star4, Precision::Double, SweepShape{8, 4, 2, 7, true, 2}));
  EXPECT_FALSE(cuda::tiled_in_shared(star4, Precision::Float, SweepShape::default_for(star4, Precision::Float)));
}

TEST(StencilCodegen, ByDefaultRegisterSweepsMarchShortAndAskL2AheadButForSmallStencilsInFloat) {
  for (Precision precision : {Precision::Float, Precision::Double}) {
    for (const char* name : {"box27", "star4", "poisson7"}) {
      const SweepShape shape = SweepShape::default_for(Stencil::builtin(name), precision, false);
      if (shape.shared) continue;
      const bool small = std::string(name) == "poisson7" && precision == Precision::Float;
      EXPECT_EQ(shape.units, small ? 4 : 8) << name << " " << to_string(precision);
      EXPECT_EQ(shape.ahead, small ? 0 : 2) << name << " " << to_string(precision);
    }
    // In 2-D, two columns over 4 rows; from radius 2, one over 8.
    Stencil cross;
    cross.name = "cross";
    cross.dimension = 2;
    cross.diagonal = 8.0;
    for (int a : {-2, -1, 1, 2}) {
      cross.points.push_back({a, 0, 0, 1.0});
      cross.points.push_back({0, a, 0, 1.0});
    }
    cross.validate();
    for (const Stencil& s : {Stencil::builtin("box9"), Stencil::builtin("poisson5"), cross}) {
      const SweepShape shape = SweepShape::default_for(s, precision);
      const bool far = s.radius() >= 2;
      EXPECT_EQ(shape.units, far ? 8 : 4) << s.name;
      EXPECT_EQ(shape.columns, far ? 1 : 2) << s.name;
      EXPECT_EQ(shape.ahead, 0) << s.name;
    }
  }
  const SweepShape tiled = SweepShape::default_for(Stencil::builtin("star4"), Precision::Double, false);
  ASSERT_TRUE(tiled.shared);
  EXPECT_EQ(tiled.units, 32);
  EXPECT_EQ(tiled.ahead, 0);
}

TEST(StencilCodegen, GroupsOfOtherThanOneTwoOrFourCellsAreRefused) {
  for (int cells : {0, 3, 8}) {
    SweepShape shape = SweepShape::default_for(Stencil::builtin("box9"), Precision::Float);
    shape.vector = cells;
    try {
      cuda::sweep_kernel_source(Stencil::builtin("box9"), Precision::Float, shape);
      ADD_FAILURE() << cells << " cells taken";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("a group of " + std::to_string(cells) + " cells"), std::string::npos) << e.what();
    }
  }
}

// Loads in the source of a register kernel: of one value, and of a group's vector.
std::pair<int, int> loads_in(const std::string& source) {
  int one = 0, vectors = 0;
  for (std::size_t at = source.find("__ldg(p + "); at != std::string::npos; at = source.find("__ldg(p + ", at + 1)) ++one;
  for (std::size_t at = source.find("cells_load(p + "); at != std::string::npos; at = source.find("cells_load(p + ", at + 1)) {
    ++vectors;
  }
  return {one, vectors};
}

TEST(StencilCodegen, ValuesBesideAGroupWithinTheReachAreLoadedAsVectorsWhereAsked) {
  const Stencil star4 = Stencil::builtin("star4");
  SweepShape shape = SweepShape::default_for(star4, Precision::Float, false);
  shape.shared = false;
  shape.vector = 4;
  const auto [one, vectors] = loads_in(cuda::sweep_kernel_source(star4, Precision::Float, shape));
  shape.halo = true;
  const auto [one_halo, vectors_halo] = loads_in(cuda::sweep_kernel_source(star4, Precision::Float, shape));
  // Each line's 8 values beside its group, at the march's first step and in
  // its loop: 2 vectors instead of 8 values.
  const int beside = 2 * shape.lines;
  EXPECT_EQ(one - one_halo, 8 * beside);
  EXPECT_EQ(vectors_halo - vectors, 2 * beside);
  // Radius 1: no vector of values beside a group lies within the reach.
  const Stencil box27 = Stencil::builtin("box27");
  SweepShape box = SweepShape::default_for(box27, Precision::Float);
  box.halo = true;
  EXPECT_EQ(loads_in(cuda::sweep_kernel_source(box27, Precision::Float, box)),
            loads_in(cuda::sweep_kernel_source(box27, Precision::Float, SweepShape::default_for(box27, Precision::Float))));
}

TEST(StencilCodegen, VectorsBesideAGroupAreTunedWithGroupsNoWiderThanTheReachAlongTheLine) {
  StencilJob job;
  job.poisson5 = false;
  job.precision = Precision::Float;
  // The groups `halo` is tried with (its only_with "vector"), none where it is not listed.
  const auto groups = [&](const Stencil& s) {
    job.stencil = s;
    for (const Tunable& t : cuda::stencil_tunables(job, true)) {
      if (t.name == "halo") return t.only_with.at("vector");
    }
    return std::vector<int>{};
  };
  EXPECT_EQ(groups(Stencil::builtin("star4")), (std::vector<int>{2, cuda::kMostVectorCells}));
  EXPECT_EQ(groups(reaching(2, 1)), (std::vector<int>{2}));
  EXPECT_EQ(groups(reaching(3, 3)), (std::vector<int>{2}));
  EXPECT_TRUE(groups(reaching(1, 2)).empty()) << "reaching 2 lines and planes away, 1 cell along the line";
  EXPECT_TRUE(groups(Stencil::builtin("box27")).empty());
  EXPECT_TRUE(groups(Stencil::builtin("box9")).empty());
  for (const Stencil& s : {Stencil::builtin("star4"), Stencil::builtin("box27")}) {
    job.stencil = s;
    job.tuning = {};
    EXPECT_FALSE(cuda::sweep_choice("gpu0", job, true).shape.halo) << s.name;
  }
  job.stencil = Stencil::builtin("star4");
  job.tuning = {{"halo", 1}};
  EXPECT_TRUE(cuda::sweep_choice("gpu0", job, true).shape.halo);
  // Reaching 2 along the line, groups of 4: no vector beside one lies within the reach.
  SweepShape shape = SweepShape::default_for(reaching(2, 1), Precision::Float);
  shape.vector = cuda::kMostVectorCells;
  const auto plain = loads_in(cuda::sweep_kernel_source(reaching(2, 1), Precision::Float, shape));
  shape.halo = true;
  EXPECT_EQ(loads_in(cuda::sweep_kernel_source(reaching(2, 1), Precision::Float, shape)), plain);
}

TEST(StencilCodegen, EveryDescriptionsSweepCompiles) {
  for (const Stencil& s : stencils()) {
    for (Precision precision : {Precision::Float, Precision::Double}) {
      for (const SweepShape& shape : shapes(s)) {
        const std::string source = cuda::sweep_kernel_source(s, precision, shape);
        EXPECT_EQ(compile_errors(source), "") << s.name << " " << to_string(precision) << "\n" << source;
      }
    }
  }
}

// One sweep of a slab of random values by the kernel generated at `shape`,
// against the update of every interior cell computed on the host; the cells
// past the interior keep their values. The source is 1 at a spike, or (with
// `grid_source`) a grid of random values laid out as the slab.
template <class T>
void expect_reference_sweep(const Stencil& s, const SweepShape& shape, bool grid_source, std::int64_t nx) {
  GridShape grid{s.dimension == 3 ? 9 : 0, s.dimension == 3 ? 7 : 21, nx, s.radius()};
  const cuda::StencilSlab slab = cuda::StencilSlab::of(grid);
  const std::int64_t units = s.dimension == 3 ? grid.nz : grid.ny;
  const std::size_t values = static_cast<std::size_t>((units + 2 * grid.depth) * slab.unit_values);
  std::vector<T> in(values), out(values, T(-7)), sf(values);
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (T& v : in) v = static_cast<T>(uniform(rng));
  for (T& v : sf) v = static_cast<T>(uniform(rng));
  // Cell 43 of its line: the last of a group of 4, the second of a group of 2.
  const std::int64_t spike = (grid.depth + 3) * slab.unit_values + (s.dimension == 3 ? (grid.depth + 2) * slab.cols : 0) +
                             grid.depth + 43;
  // Buffers as a solve's: unit 0 after the slab's lead.
  const std::size_t bytes = static_cast<std::size_t>(slab.buffer_values(units + 2 * grid.depth)) * sizeof(T);
  const std::size_t lead = static_cast<std::size_t>(slab.lead);
  cuda::DeviceMemory in_d(bytes, "test"), out_d(bytes, "test"), sf_d(bytes, "test");
  ASSERT_EQ(cudaMemcpy(in_d.get<T>() + lead, in.data(), values * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(out_d.get<T>() + lead, out.data(), values * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(sf_d.get<T>() + lead, sf.data(), values * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  cuda::StencilCode<T> code(s, grid, 0, cuda::SweepChoice{true, shape});
  cuda::StencilPass<T> pass;
  pass.in = in_d.get<T>() + lead;
  pass.out = out_d.get<T>() + lead;
  pass.sf = grid_source ? sf_d.get<T>() + lead : nullptr;
  pass.spike = grid_source ? -1 : spike;
  pass.unit_begin = grid.depth;
  pass.unit_end = grid.depth + units;
  EXPECT_TRUE(code.generated(slab, pass)) << "the generated kernel sweeps a solve's buffers";
  const Precision precision = std::is_same_v<T, float> ? Precision::Float : Precision::Double;
  int most_shared = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&most_shared, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0), cudaSuccess);
  const bool ring_fits = cuda::StagedRing::of(s, precision, shape).bytes <= static_cast<std::size_t>(most_shared);
  EXPECT_EQ(code.staged(), cuda::staged_in_shared(s, precision, shape) && cuda::gpu_stages(0) && ring_fits)
      << s.name << ": the kernel asked for, unless its ring is larger than a block's shared memory";
  code.launch(slab, pass, nullptr);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(out.data(), out_d.get<T>() + lead, values * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);

  const StencilTerms<T> terms = stencil_terms<T>(s, slab.cols, slab.unit_values);
  std::int64_t wrong = 0, first_wrong = -1;
  for (std::int64_t u = 0; u < units + 2 * grid.depth; ++u) {
    for (std::int64_t line = 0; line < (s.dimension == 3 ? grid.rows() : 1); ++line) {
      for (std::int64_t x = 0; x < slab.cols; ++x) {
        const std::int64_t cell = u * slab.unit_values + line * slab.cols + x;
        const bool interior = u >= grid.depth && u < grid.depth + units && x >= grid.depth && x < grid.depth + grid.nx &&
                              (s.dimension == 2 || (line >= grid.depth && line < grid.depth + grid.ny));
        const T source = grid_source ? sf[static_cast<std::size_t>(cell)] : (cell == spike ? T(1) : T(0));
        const T want = interior ? terms.update(in.data() + cell, source) : T(-7);
        if (std::memcmp(&want, &out[static_cast<std::size_t>(cell)], sizeof(T)) != 0) {
          if (wrong++ == 0) first_wrong = cell;
        }
      }
    }
  }
  EXPECT_EQ(wrong, 0) << s.name << " warps " << shape.warps << " columns " << shape.columns << " lines " << shape.lines
                      << " units " << shape.units << " vector " << shape.vector << (shape.shared ? " shared" : "") << (shape.halo ? " halo" : "")
                      << (shape.staged ? " staged" : "")
                      << (grid_source ? " grid source" : " spike") << " nx " << nx << ": first at value " << first_wrong;
}

TEST(StencilCodegen, SlabsAlignEveryLineWithRoomBesideItsLastGroupOfCells) {
  for (const GridShape& grid : {GridShape{9, 7, 133, 4}, GridShape{0, 21, 133, 1}, GridShape{0, 5, 30, 1}}) {
    const cuda::StencilSlab slab = cuda::StencilSlab::of(grid);
    const std::int64_t lines = grid.dimension() == 3 ? grid.rows() : 1;
    EXPECT_EQ(slab.cols % 32, 0);
    EXPECT_EQ((slab.lead + slab.depth) % 32, 0) << "a line's first interior cell starts 128 bytes of floats";
    // The last group of cuda::kMostVectorCells and the radius beside it.
    const std::int64_t groups = (grid.nx + cuda::kMostVectorCells - 1) / cuda::kMostVectorCells;
    EXPECT_GE(slab.cols, groups * cuda::kMostVectorCells + 2 * grid.depth) << grid.nx;
    // A staged copy's box of a line starts up to the ring in whole groups
    // before the tile's first cell (StagedRing::lead_x); the line's values
    // from there must still reach the ring after its last cell.
    const std::int64_t lead = (grid.depth + cuda::kMostVectorCells - 1) / cuda::kMostVectorCells * cuda::kMostVectorCells;
    EXPECT_GE(slab.cols - lead, grid.nx + grid.depth) << grid.nx;
    EXPECT_EQ(slab.unit_lines, lines);
    EXPECT_EQ(slab.unit_values, slab.cols * lines);
  }
}

TEST(StencilCodegen, UnitsCopiedIntoASlabAndBackAreTheGridsValues) {
  if (cuda_device_count() < 1) GTEST_SKIP() << "needs a GPU";
  for (const GridShape& grid : {GridShape{5, 6, 37, 2}, GridShape{0, 6, 37, 1}}) {
    const cuda::StencilSlab slab = cuda::StencilSlab::of(grid);
    const std::int64_t units = 4;
    const std::int64_t unit_values = grid.dimension() == 3 ? grid.rows() * grid.cols() : grid.cols();
    std::vector<double> values(static_cast<std::size_t>(units * unit_values)), back(values.size(), -1.0);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i);
    cuda::DeviceMemory d(static_cast<std::size_t>(slab.buffer_values(units)) * sizeof(double), "test");
    double* unit0 = d.get<double>() + slab.lead;
    cuda::copy_units(slab, sizeof(double), unit0, values.data(), units, cudaMemcpyHostToDevice, nullptr, "test");
    cuda::copy_units(slab, sizeof(double), back.data(), unit0, units, cudaMemcpyDeviceToHost, nullptr, "test");
    EXPECT_EQ(back, values) << grid.dimension() << "-D";
    // The last line's last value sits where the slab's layout puts it.
    double last = 0.0;
    const std::int64_t at = (units - 1) * slab.unit_values + (slab.unit_lines - 1) * slab.cols + grid.cols() - 1;
    ASSERT_EQ(cudaMemcpy(&last, unit0 + at, sizeof(double), cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(last, values.back());
  }
}

TEST(StencilCodegen, EveryShapesSweepGivesTheUpdatesBits) {
  if (cuda_device_count() < 1) GTEST_SKIP() << "needs a GPU";
  testing_support::Scratch scratch("hetstencil_codegen");
  setenv("XDG_CACHE_HOME", scratch.file("cache").c_str(), 1);
  for (const Stencil& s : stencils()) {
    for (const SweepShape& shape : shapes(s)) {
      // The last group of a line holds 1 cell of 4 (133) or 3 (135).
      for (std::int64_t nx : {133, 135}) {
        for (bool grid_source : {false, true}) {
          expect_reference_sweep<float>(s, shape, grid_source, nx);
          expect_reference_sweep<double>(s, shape, grid_source, nx);
        }
      }
    }
  }
  unsetenv("XDG_CACHE_HOME");
}

TEST(StencilCodegen, ACompiledSweepIsKeptAndADamagedOneCompiledAgain) {
  if (cuda_device_count() < 1) GTEST_SKIP() << "needs a GPU";
  testing_support::Scratch scratch("hetstencil_kernel_cache");
  setenv("XDG_CACHE_HOME", scratch.file("cache").c_str(), 1);
  const Stencil s = Stencil::builtin("box9");
  const GridShape grid{0, 40, 50, 1};
  const SweepShape shape = SweepShape::default_for(s, Precision::Double);
  auto kept = [&] {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(fs::path(scratch.file("cache")) / "hetstencil" / "kernels")) files.push_back(e.path());
    return files;
  };
  { cuda::StencilCode<double> code(s, grid, 0, cuda::SweepChoice{true, shape}); }
  std::vector<fs::path> files = kept();
  ASSERT_EQ(files.size(), 1u);
  const auto size = fs::file_size(files[0]);
  { std::ofstream(files[0], std::ios::trunc) << "not a kernel"; }
  { cuda::StencilCode<double> code(s, grid, 0, cuda::SweepChoice{true, shape}); }
  EXPECT_EQ(kept().size(), 1u);
  EXPECT_EQ(fs::file_size(files[0]), size);
  unsetenv("XDG_CACHE_HOME");
}

TEST(StencilCodegen, SweepsCompiledAheadAreKeptForTheSweepsThatLoadThem) {
  if (cuda_device_count() < 1) GTEST_SKIP() << "needs a GPU";
  testing_support::Scratch scratch("hetstencil_kernels_ahead");
  setenv("XDG_CACHE_HOME", scratch.file("cache").c_str(), 1);
  StencilJob job;
  job.stencil = Stencil::builtin("box27");
  job.poisson5 = false;
  job.precision = Precision::Float;
  job.nx = 70;
  job.ny = 20;
  job.nz = 12;
  const fs::path folder = fs::path(scratch.file("cache")) / "hetstencil" / "kernels";
  auto kept = [&] {
    std::map<fs::path, fs::file_time_type> files;
    for (const auto& e : fs::directory_iterator(folder)) files[e.path()] = fs::last_write_time(e.path());
    return files;
  };
  // Three generated sweeps: units per block is an argument of the default's
  // kernel, and the table-driven kernel is compiled with the library.
  const std::vector<Tuning> tunings = {{}, {{"warps", 2}}, {{"lines", 2}}, {{"units", 16}}, {{"generated", 0}}};
  cuda::compile_sweeps_ahead("gpu0", job, tunings, 0);
  const auto ahead = kept();
  EXPECT_EQ(ahead.size(), 3u);
  cuda::compile_sweeps_ahead("gpu0", job, tunings, 0);
  EXPECT_EQ(kept(), ahead) << "kept kernels are not compiled again";
  for (const Tuning& t : tunings) {
    job.tuning = t;
    cuda::StencilCode<float> code(job.stencil, job.shape(), 0, cuda::sweep_choice("gpu0", job, true));
  }
  EXPECT_EQ(kept(), ahead) << "each sweep loads the kernel compiled ahead for it";
  unsetenv("XDG_CACHE_HOME");
}

}  // namespace
}  // namespace hetstencil
