/// \file
/// What the runtime knows about one device it can run on.
#pragma once

#include <string>
#include <vector>

#include "hetstencil/export.hpp"

namespace hetstencil {

/// Bounds on the CPU devices a machine is cut into and the worker threads of
/// each: beyond any machine's cores, low enough that mapping the devices and
/// starting their threads stays quick.
constexpr int kMaxCpuDevices = 4096;
/// The most worker threads of a CPU device (RuntimeOptions::threads_per_device).
constexpr int kMaxThreadsPerDevice = 4096;

/// A CPU device (a socket, a NUMA node or a group of cores) or a GPU.
enum class DeviceKind { Cpu, Gpu };

/// How the GPUs of different processes of a solve exchange ghost rows
/// (RuntimeOptions::gpu_transport). A GPU beside a CPU device of another
/// process always goes through host memory.
enum class GpuTransport {
  Auto,  ///< CUDA IPC on one node where it opens, else NCCL where this build has it, else through host memory
  Nccl,  ///< NCCL, GPU to GPU (a build without NCCL refuses it)
  Host,  ///< through host memory: copies to pinned memory and MPI messages
  Ipc    ///< CUDA IPC on one node (where it cannot be opened the job ends, saying why), between nodes as Auto
};

/// Thread safety: a value, safe to copy across threads.
struct DeviceInfo {
  std::string name;  ///< "cpu0", "cpu1", "gpu0", ...
  DeviceKind kind = DeviceKind::Cpu;  ///< CPU or GPU
  int numa_node = -1;       ///< memory node of its slab (-1: unknown / no NUMA)
  std::vector<int> cores;   ///< OS indices of the cores its threads are bound to
  int threads = 0;          ///< worker threads (CPU) or host threads (GPU)
  std::string description;  ///< one line for people: "package 0, NUMA node 0, cores 0-7"
  /// What the device is, whatever its name: a profile keeps its curves under
  /// it. A CPU device's NUMA node, cores and threads ("cpu:node0:cores0-7:threads8");
  /// a GPU's UUID, or its name where none is known. Empty: its name.
  std::string key;
};

/// "0-3,8,10-11" from sorted indices, as descriptions list cores.
HETSTENCIL_API std::string index_list(const std::vector<int>& indices);

/// The devices as one JSON object (schema "hetstencil-devices"): their list under "devices".
HETSTENCIL_API std::string to_json(const std::vector<DeviceInfo>& devices, int indent = 2);

}  // namespace hetstencil
