#include "devices/cuda/stencil_tuning.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <map>
#include <string>

#include "devices/cuda/cuda_check.hpp"

namespace hetstencil::cuda {

std::vector<Tunable> stencil_tunables(const StencilJob& job, bool stages) {
  // A variable stencil's sweep reads its coefficient grids: one kernel, coefficient_kernels.cuh.
  if (job.stencil.variable) return {};
  const SweepShape d = SweepShape::default_for(job.stencil, job.precision, stages);
  const bool three_d = job.stencil.dimension == 3;
  const bool staging = three_d && stages;
  // The shape is the generated kernel's; a group of cells, the register and
  // staged kernels'; columns and ahead, the register and tiled kernels'; halo,
  // the register kernel's.
  const std::map<std::string, std::vector<int>> generated = {{"generated", {1}}};
  const std::map<std::string, std::vector<int>> grouped = {{"generated", {1}}, {"shared", {0}}};
  std::map<std::string, std::vector<int>> unstaged = generated, in_registers = grouped;
  if (staging) unstaged["staged"] = in_registers["staged"] = {0};
  // Groups no wider than the stencil's reach along the line: the values beside one make a vector.
  const std::vector<int> halo_groups = halo_vector_cells(job.stencil);
  std::map<std::string, std::vector<int>> in_groups = in_registers;
  in_groups["vector"] = halo_groups;
  std::vector<Tunable> out = {{"generated", {0, 1}, 1},
                              {"shared", {0, 1}, d.shared ? 1 : 0, true},
                              {"warps", {1, 2, 4, 8}, d.warps, false, generated},
                              {"columns", {1, 2, 4}, d.columns, false, unstaged},
                              {"units", {4, 8, 16, 32, 64, 128}, d.units, false, generated},
                              {"vector", {1, 2, kMostVectorCells}, d.vector, false, grouped},
                              {"ahead", {0, 2}, d.ahead, false, unstaged}};
  if (!halo_groups.empty()) out.push_back({"halo", {0, 1}, d.halo ? 1 : 0, false, in_groups});
  if (three_d) out.push_back({"lines", {1, 2, 4}, d.lines, false, generated});
  if (staging) out.push_back({"staged", {0, 1}, d.staged ? 1 : 0, true, grouped});
  return out;
}

SweepChoice sweep_choice(const std::string& device, const StencilJob& job, bool stages) {
  const std::vector<Tunable> parameters = stencil_tunables(job, stages);
  check_tuning(device, parameters, job.tuning);
  SweepChoice c;
  c.shape = SweepShape::default_for(job.stencil, job.precision, stages);
  if (parameters.empty()) {
    c.generated = false;
    return c;
  }
  const auto value = [&](const char* name) { return tuned_value(job.tuning, parameters, name); };
  c.generated = value("generated") == 1;
  c.shape.shared = value("shared") == 1;
  c.shape.warps = value("warps");
  c.shape.columns = value("columns");
  c.shape.units = value("units");
  c.shape.vector = value("vector");
  c.shape.ahead = value("ahead");
  const auto lists = [&](const char* name) {
    return std::any_of(parameters.begin(), parameters.end(), [&](const Tunable& t) { return t.name == name; });
  };
  if (lists("halo")) c.shape.halo = value("halo") == 1;
  if (lists("lines")) c.shape.lines = value("lines");
  if (lists("staged")) c.shape.staged = value("staged") == 1;
  return c;
}

bool gpu_stages(int gpu) {
  int major = 0;
  HETSTENCIL_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, gpu),
                        "gpu" + std::to_string(gpu) + ": asking its compute capability");
  return major >= 9;
}

}  // namespace hetstencil::cuda
