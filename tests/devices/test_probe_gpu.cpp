// The probe on a real GPU machine; skipped where there is no GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <vector>

#include "devices/cuda/cuda_info.hpp"
#include "devices/device_map.hpp"
#include "hetstencil/topology.hpp"

namespace hetstencil {
namespace {

TEST(ProbeGpu, FindsEveryGpuWithItsMemory) {
  const int count = cuda_device_count();
  if (count == 0) GTEST_SKIP() << "needs a GPU";
  const Topology t = load_topology();
  ASSERT_EQ(t.gpus.size(), static_cast<std::size_t>(count));
  for (const GpuInfo& g : t.gpus) {
    ASSERT_EQ(cudaSetDevice(g.index), cudaSuccess);
    std::size_t free_bytes = 0, total_bytes = 0;
    ASSERT_EQ(cudaMemGetInfo(&free_bytes, &total_bytes), cudaSuccess);
    EXPECT_EQ(g.memory_bytes, total_bytes) << g.name;
    EXPECT_GT(g.sm_count, 0);
    EXPECT_EQ(g.uuid.rfind("GPU-", 0), 0u) << g.uuid;
    EXPECT_TRUE(std::filesystem::exists("/sys/bus/pci/devices/" + g.pci_bus_id)) << g.pci_bus_id;
    std::printf("gpu%d: %s, %d SMs, %zu bytes, %s, NUMA %d\n", g.index, g.name.c_str(), g.sm_count, total_bytes,
                g.pci_bus_id.c_str(), g.numa);
  }
  // Every GPU becomes a device whose host thread has a core of its own.
  const auto devices = map_devices(t, DeviceMapOptions{});
  int gpus = 0;
  for (const auto& d : devices) gpus += d.info.kind == DeviceKind::Gpu ? 1 : 0;
  EXPECT_EQ(gpus, count);
}

TEST(ProbeGpu, PeerLinksCarryData) {
  const int count = cuda_device_count();
  if (count < 2) GTEST_SKIP() << "needs 2 GPUs";
  const Topology t = load_topology();
  const std::size_t n = 1 << 20;
  for (int a = 0; a < count; ++a) {
    for (int b = 0; b < count; ++b) {
      if (a == b || !t.links[a][b].peer) continue;
      std::vector<int> host(n), back(n, 0);
      for (std::size_t k = 0; k < n; ++k) host[k] = static_cast<int>(k * 7 + a);
      int *src = nullptr, *dst = nullptr;
      ASSERT_EQ(cudaSetDevice(a), cudaSuccess);
      ASSERT_EQ(cudaMalloc(&src, n * sizeof(int)), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(src, host.data(), n * sizeof(int), cudaMemcpyHostToDevice), cudaSuccess);
      const cudaError_t enable = cudaDeviceEnablePeerAccess(b, 0);
      ASSERT_TRUE(enable == cudaSuccess || enable == cudaErrorPeerAccessAlreadyEnabled) << cudaGetErrorString(enable);
      (void)cudaGetLastError();
      ASSERT_EQ(cudaSetDevice(b), cudaSuccess);
      ASSERT_EQ(cudaMalloc(&dst, n * sizeof(int)), cudaSuccess);
      ASSERT_EQ(cudaMemcpyPeer(dst, b, src, a, n * sizeof(int)), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(back.data(), dst, n * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
      EXPECT_EQ(back, host) << "gpu" << a << " -> gpu" << b;
      std::printf("gpu%d -> gpu%d: peer, %s, rank %d\n", a, b, t.links[a][b].kind.c_str(),
                  t.links[a][b].performance_rank);
      cudaFree(dst);
      ASSERT_EQ(cudaSetDevice(a), cudaSuccess);
      cudaFree(src);
    }
  }
}

}  // namespace
}  // namespace hetstencil
