#include "devices/transport/nccl_api.hpp"

#include <string>

#include "devices/shared_library.hpp"
#include "hetstencil/error.hpp"

namespace hetstencil {
namespace {

struct Opened {
  NcclApi api;
  std::string why_not;

  Opened() {
    SharedLibrary library("libnccl.so." + std::to_string(NCCL_MAJOR), HETSTENCIL_NCCL_LIBRARY_PATH);
    library.symbol(api.get_unique_id, "ncclGetUniqueId");
    library.symbol(api.comm_init_rank, "ncclCommInitRank");
    library.symbol(api.comm_destroy, "ncclCommDestroy");
    library.symbol(api.comm_abort, "ncclCommAbort");
    library.symbol(api.comm_get_async_error, "ncclCommGetAsyncError");
    library.symbol(api.get_error_string, "ncclGetErrorString");
    library.symbol(api.get_last_error, "ncclGetLastError");
    library.symbol(api.group_start, "ncclGroupStart");
    library.symbol(api.group_end, "ncclGroupEnd");
    library.symbol(api.send, "ncclSend");
    library.symbol(api.recv, "ncclRecv");
    if (!library.why_not().empty()) why_not = "NCCL: " + library.why_not();
  }
};

}  // namespace

const NcclApi& NcclApi::get() {
  static const Opened opened;
  if (!opened.why_not.empty()) HETSTENCIL_THROW(SystemError, opened.why_not);
  return opened.api;
}

}  // namespace hetstencil
