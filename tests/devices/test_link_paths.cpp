// Which path the ghost rows between two processes take, and how reports and
// the option name it: logic that needs no GPU.
#include <gtest/gtest.h>

#include "devices/transport/link_paths.hpp"
#include "devices/transport/transport.hpp"
#include "hetstencil/error.hpp"

namespace hetstencil {
namespace {

TEST(LinkPaths, TwoGpusOfDifferentNodesTakeNcclUnlessTheOptionOrTheBuildSaysHost) {
  for (bool cuda_aware : {false, true}) {
    EXPECT_EQ(choose_link_path(GpuTransport::Auto, true, true, true, cuda_aware, false), LinkPath::Nccl);
    EXPECT_EQ(choose_link_path(GpuTransport::Nccl, true, true, true, cuda_aware, false), LinkPath::Nccl);
    EXPECT_EQ(choose_link_path(GpuTransport::Host, true, true, true, cuda_aware, false), LinkPath::HostStaging);
  }
  EXPECT_EQ(choose_link_path(GpuTransport::Auto, true, true, false, false, false), LinkPath::HostStaging);
}

TEST(LinkPaths, TwoGpusOfOneNodeTakeCudaIpcUnlessNcclOrHostIsAsked) {
  for (bool nccl : {false, true}) {
    for (bool cuda_aware : {false, true}) {
      EXPECT_EQ(choose_link_path(GpuTransport::Auto, true, true, nccl, cuda_aware, true), LinkPath::CudaIpc);
      EXPECT_EQ(choose_link_path(GpuTransport::Ipc, true, true, nccl, cuda_aware, true), LinkPath::CudaIpc);
      EXPECT_EQ(choose_link_path(GpuTransport::Host, true, true, nccl, cuda_aware, true), LinkPath::HostStaging);
    }
  }
  EXPECT_EQ(choose_link_path(GpuTransport::Nccl, true, true, true, false, true), LinkPath::Nccl);
}

TEST(LinkPaths, IpcBetweenNodesTakesWhatAutoTakes) {
  for (bool nccl : {false, true}) {
    for (bool cuda_aware : {false, true}) {
      EXPECT_EQ(choose_link_path(GpuTransport::Ipc, true, true, nccl, cuda_aware, false),
                choose_link_path(GpuTransport::Auto, true, true, nccl, cuda_aware, false));
    }
  }
}

TEST(LinkPaths, WithoutNcclACudaAwareMpiCarriesGpuMemoryUnlessHostIsAsked) {
  EXPECT_EQ(choose_link_path(GpuTransport::Auto, true, true, false, true, false), LinkPath::CudaAwareMpi);
  EXPECT_EQ(choose_link_path(GpuTransport::Host, true, true, false, true, false), LinkPath::HostStaging);
}

TEST(LinkPaths, AGpuBesideACpuDeviceOfAnotherProcessKeepsHostStaging) {
  for (GpuTransport option : {GpuTransport::Auto, GpuTransport::Nccl, GpuTransport::Host, GpuTransport::Ipc}) {
    for (bool cuda_aware : {false, true}) {
      for (bool one_node : {false, true}) {
        EXPECT_EQ(choose_link_path(option, true, false, true, cuda_aware, one_node), LinkPath::HostStaging);
        EXPECT_EQ(choose_link_path(option, false, true, true, cuda_aware, one_node), LinkPath::HostStaging);
        EXPECT_EQ(choose_link_path(option, false, false, true, cuda_aware, one_node), LinkPath::HostStaging);
      }
    }
  }
}

// GPUs by their number on the node (-1: a CPU device).
ProcessBoundary gpus(int top, int bottom, const std::string& node, bool cuda_aware = false) {
  const auto bus = [](int gpu) { return gpu < 0 ? std::string() : "0000:" + std::to_string(16 + gpu) + ":00.0"; };
  ProcessBoundary b;
  b.top_gpu = top >= 0;
  b.bottom_gpu = bottom >= 0;
  b.top_id = bus(top);
  b.bottom_id = bus(bottom);
  b.node = node;
  b.cuda_aware = cuda_aware;
  return b;
}

TEST(LinkPaths, ABoundaryCrossesToTheOtherProcessesAsTextAndBack) {
  const ProcessBoundary sent = gpus(2, -1, "node-7.cluster", true);
  const ProcessBoundary got = boundary_from_text(to_text(sent));
  EXPECT_EQ(got.top_gpu, true);
  EXPECT_EQ(got.bottom_gpu, false);
  EXPECT_EQ(got.cuda_aware, true);
  EXPECT_EQ(got.top_id, sent.top_id);
  EXPECT_EQ(got.bottom_id, "");
  EXPECT_EQ(got.node, "node-7.cluster");
  EXPECT_THROW(boundary_from_text("garbled"), Error);
}

TEST(LinkPaths, ProcessesSharingOneGpuAtTheirBoundaryStageThroughHostMemory) {
  // Three processes of one node taking both its GPUs each: 0's last is gpu1,
  // 1's first gpu0 (CUDA IPC between them), 1's last and 2's first both gpu1.
  const std::vector<ProcessBoundary> node{gpus(0, 1, "a"), gpus(0, 1, "a"), gpus(1, 1, "a")};
  EXPECT_EQ(choose_link_paths(GpuTransport::Auto, node, true),
            (std::vector<LinkPath>{LinkPath::CudaIpc, LinkPath::HostStaging}));
  EXPECT_EQ(choose_link_paths(GpuTransport::Nccl, node, true),
            (std::vector<LinkPath>{LinkPath::Nccl, LinkPath::HostStaging}));
  // The same devices on two nodes are two GPUs.
  const std::vector<ProcessBoundary> two_nodes{gpus(0, 1, "a"), gpus(1, 1, "b")};
  EXPECT_EQ(choose_link_paths(GpuTransport::Auto, two_nodes, true), std::vector<LinkPath>{LinkPath::Nccl});
}

TEST(LinkPaths, EachLinkTakesThePathItsOwnEndsAllow) {
  // A CPU process between GPU processes; CUDA-aware MPI everywhere but on rank 3.
  const std::vector<ProcessBoundary> ranks{gpus(-1, 0, "a", true), gpus(-1, -1, "b", true), gpus(0, 0, "c", true),
                                           gpus(0, 0, "d", true), gpus(0, -1, "e", false)};
  EXPECT_EQ(choose_link_paths(GpuTransport::Auto, ranks, false),
            (std::vector<LinkPath>{LinkPath::HostStaging, LinkPath::HostStaging, LinkPath::CudaAwareMpi,
                                   LinkPath::HostStaging}));
  EXPECT_TRUE(choose_link_paths(GpuTransport::Auto, {gpus(0, 0, "a")}, true).empty());
}

TEST(LinkPaths, ACudaIpcLinkThatDidNotOpenTakesThePathBetweenNodes) {
  const std::vector<ProcessBoundary> node{gpus(0, 0, "a", true), gpus(1, 1, "a", true), gpus(2, 2, "a", false)};
  const std::vector<LinkPath> ipc(2, LinkPath::CudaIpc);
  const std::vector<std::string> second_failed{"", "rank 2: cannot open"};
  EXPECT_EQ(paths_after_opening(GpuTransport::Auto, ipc, second_failed, node, true),
            (std::vector<LinkPath>{LinkPath::CudaIpc, LinkPath::Nccl}));
  EXPECT_EQ(paths_after_opening(GpuTransport::Auto, ipc, second_failed, node, false),
            (std::vector<LinkPath>{LinkPath::CudaIpc, LinkPath::HostStaging}));  // rank 2's MPI is not CUDA-aware
  const std::vector<std::string> first_failed{"rank 0: cannot open", ""};
  EXPECT_EQ(paths_after_opening(GpuTransport::Auto, ipc, first_failed, node, false),
            (std::vector<LinkPath>{LinkPath::CudaAwareMpi, LinkPath::CudaIpc}));
  EXPECT_EQ(paths_after_opening(GpuTransport::Ipc, ipc, {"", ""}, node, true), ipc);
  try {
    paths_after_opening(GpuTransport::Ipc, ipc, second_failed, node, true);
    ADD_FAILURE() << "a link that did not open was taken under the option ipc";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("the GPU transport ipc was asked for, but rank 2: cannot open"),
              std::string::npos)
        << e.what();
  }
}

TEST(LinkPaths, ReportsNameEachLinkByTheRanksItJoins) {
  EXPECT_EQ(describe_link_paths({LinkPath::Nccl, LinkPath::HostStaging, LinkPath::CudaAwareMpi, LinkPath::CudaIpc}),
            "r0-r1 nccl, r1-r2 host staging, r2-r3 cuda-aware mpi, r3-r4 cuda ipc");
  EXPECT_EQ(describe_link_paths({}), "");
}

TEST(LinkPaths, NcclIsRefusedOnlyByABuildWithoutIt) {
  EXPECT_NO_THROW(check_gpu_transport(GpuTransport::Auto));
  EXPECT_NO_THROW(check_gpu_transport(GpuTransport::Host));
  EXPECT_NO_THROW(check_gpu_transport(GpuTransport::Ipc));
  if (nccl_built()) {
    EXPECT_NO_THROW(check_gpu_transport(GpuTransport::Nccl));
  } else {
    try {
      check_gpu_transport(GpuTransport::Nccl);
      ADD_FAILURE() << "nccl was accepted by a build without it";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("built without NCCL"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace hetstencil
