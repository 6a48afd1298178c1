#include <cuda_runtime.h>

#include <cctype>
#include <cstdio>
#include <mutex>
#include <set>
#include <string>

#include "devices/cuda/cuda_check.hpp"
#include "devices/cuda/cuda_info.hpp"
#include "devices/cuda/peer_access.hpp"

namespace hetstencil {
namespace {

std::string gpu_name(int device) { return "gpu" + std::to_string(device); }

std::string uuid_string(const cudaUUID_t& uuid) {
  const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
  char text[64];
  std::snprintf(text, sizeof(text), "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return text;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

void enable_peer_access(int from, int to, const std::string& context) {
  static std::mutex mutex;
  static std::set<std::pair<int, int>> enabled;
  std::lock_guard<std::mutex> lock(mutex);
  if (!enabled.insert({from, to}).second) return;
  const cudaError_t rc = cudaDeviceEnablePeerAccess(to, 0);
  if (rc == cudaErrorPeerAccessAlreadyEnabled) {  // by the application
    (void)cudaGetLastError();
    return;
  }
  HETSTENCIL_CUDA_CHECK(rc, context);
}

int cuda_device_count() {
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  // No driver or no device means zero GPUs, not a failure.
  if (rc == cudaErrorNoDevice || rc == cudaErrorInsufficientDriver) {
    (void)cudaGetLastError();
    return 0;
  }
  HETSTENCIL_CUDA_CHECK(rc, "counting the CUDA devices");
  return count;
}

int cuda_driver_version() {
  int version = 0;
  if (cudaDriverGetVersion(&version) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return version;
}

std::vector<GpuInfo> cuda_gpus() {
  std::vector<GpuInfo> gpus;
  const int count = cuda_device_count();
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop{};
    HETSTENCIL_CUDA_CHECK(cudaGetDeviceProperties(&prop, d), gpu_name(d) + ": reading its properties");
    char bus[32] = {};
    HETSTENCIL_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof(bus), d), gpu_name(d) + ": reading its PCI bus id");
    GpuInfo g;
    g.index = d;
    g.name = prop.name;
    g.uuid = uuid_string(prop.uuid);
    g.pci_bus_id = lower(bus);
    g.compute_major = prop.major;
    g.compute_minor = prop.minor;
    g.sm_count = prop.multiProcessorCount;
    g.memory_bytes = prop.totalGlobalMem;
    gpus.push_back(g);
  }
  return gpus;
}

std::vector<std::vector<GpuLink>> cuda_links() {
  const int count = cuda_device_count();
  std::vector<std::vector<GpuLink>> links(static_cast<std::size_t>(count), std::vector<GpuLink>(count));
  for (int a = 0; a < count; ++a) {
    for (int b = 0; b < count; ++b) {
      if (a == b) continue;
      const std::string what = gpu_name(a) + ": asking about peer access to " + gpu_name(b);
      int can = 0, rank = -1, atomics = 0;
      HETSTENCIL_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, a, b), what);
      GpuLink& link = links[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)];
      link.peer = can != 0;
      if (!link.peer) continue;
      HETSTENCIL_CUDA_CHECK(cudaDeviceGetP2PAttribute(&rank, cudaDevP2PAttrPerformanceRank, a, b), what);
      HETSTENCIL_CUDA_CHECK(cudaDeviceGetP2PAttribute(&atomics, cudaDevP2PAttrNativeAtomicSupported, a, b), what);
      link.performance_rank = rank;
      // PCIe peer traffic has no native atomics; NVLink has.
      link.kind = atomics ? "NVLink" : "PCIe";
    }
  }
  return links;
}

}  // namespace hetstencil
