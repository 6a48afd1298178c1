// NCCL, opened when a solve first needs it rather than linked: its 200 MB are
// mapped only by runs whose GPUs exchange between processes, so that every
// other run starts under a small address-space limit. Looked for by name, then
// where the build found it.
#pragma once

#include <nccl.h>

namespace hetstencil {

struct NcclApi {
  /// The opened library; throws SystemError saying why it cannot be opened.
  static const NcclApi& get();

  decltype(&ncclGetUniqueId) get_unique_id = nullptr;
  decltype(&ncclCommInitRank) comm_init_rank = nullptr;
  decltype(&ncclCommDestroy) comm_destroy = nullptr;
  decltype(&ncclCommAbort) comm_abort = nullptr;
  decltype(&ncclCommGetAsyncError) comm_get_async_error = nullptr;
  decltype(&ncclGetErrorString) get_error_string = nullptr;
  decltype(&ncclGetLastError) get_last_error = nullptr;
  decltype(&ncclGroupStart) group_start = nullptr;
  decltype(&ncclGroupEnd) group_end = nullptr;
  decltype(&ncclSend) send = nullptr;
  decltype(&ncclRecv) recv = nullptr;
};

}  // namespace hetstencil
