// Which path the ghost rows between two processes take, and how reports and
// the option name it: logic that needs no GPU.
#include <gtest/gtest.h>

#include "devices/transport/link_paths.hpp"
#include "devices/transport/transport.hpp"
#include "hetstencil/error.hpp"

namespace hetstencil {
namespace {

TEST(LinkPaths, TwoGpusTakeNcclUnlessTheOptionOrTheBuildSaysHost) {
  for (bool cuda_aware : {false, true}) {
    EXPECT_EQ(choose_link_path(GpuTransport::Auto, true, true, true, cuda_aware), LinkPath::Nccl);
    EXPECT_EQ(choose_link_path(GpuTransport::Nccl, true, true, true, cuda_aware), LinkPath::Nccl);
    EXPECT_EQ(choose_link_path(GpuTransport::Host, true, true, true, cuda_aware), LinkPath::HostStaging);
  }
  EXPECT_EQ(choose_link_path(GpuTransport::Auto, true, true, false, false), LinkPath::HostStaging);
}

TEST(LinkPaths, WithoutNcclACudaAwareMpiCarriesGpuMemoryUnlessHostIsAsked) {
  EXPECT_EQ(choose_link_path(GpuTransport::Auto, true, true, false, true), LinkPath::CudaAwareMpi);
  EXPECT_EQ(choose_link_path(GpuTransport::Host, true, true, false, true), LinkPath::HostStaging);
}

TEST(LinkPaths, AGpuBesideACpuDeviceOfAnotherProcessKeepsHostStaging) {
  for (GpuTransport option : {GpuTransport::Auto, GpuTransport::Nccl, GpuTransport::Host}) {
    for (bool cuda_aware : {false, true}) {
      EXPECT_EQ(choose_link_path(option, true, false, true, cuda_aware), LinkPath::HostStaging);
      EXPECT_EQ(choose_link_path(option, false, true, true, cuda_aware), LinkPath::HostStaging);
      EXPECT_EQ(choose_link_path(option, false, false, true, cuda_aware), LinkPath::HostStaging);
    }
  }
}

TEST(LinkPaths, ReportsNameEachLinkByTheRanksItJoins) {
  EXPECT_EQ(describe_link_paths({LinkPath::Nccl, LinkPath::HostStaging, LinkPath::CudaAwareMpi}),
            "r0-r1 nccl, r1-r2 host staging, r2-r3 cuda-aware mpi");
  EXPECT_EQ(describe_link_paths({}), "");
}

TEST(LinkPaths, NcclIsRefusedOnlyByABuildWithoutIt) {
  EXPECT_NO_THROW(check_gpu_transport(GpuTransport::Auto));
  EXPECT_NO_THROW(check_gpu_transport(GpuTransport::Host));
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
