#include "devices/transport/nccl_api.hpp"

#include <dlfcn.h>

#include <string>
#include <type_traits>

#include "hetstencil/error.hpp"

namespace hetstencil {
namespace {

struct Opened {
  NcclApi api;
  std::string why_not;

  Opened() {
    const std::string name = "libnccl.so." + std::to_string(NCCL_MAJOR);
    void* library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!library) library = dlopen(HETSTENCIL_NCCL_LIBRARY_PATH, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      why_not = "NCCL (" + name + ", also looked for as " + HETSTENCIL_NCCL_LIBRARY_PATH + ") cannot be opened: " + dlerror();
      return;
    }
    const auto symbol = [&](auto& to, const char* called) {
      to = reinterpret_cast<std::remove_reference_t<decltype(to)>>(dlsym(library, called));
      if (!to && why_not.empty()) why_not = std::string("NCCL (") + name + ") lacks " + called;
    };
    symbol(api.get_unique_id, "ncclGetUniqueId");
    symbol(api.comm_init_rank, "ncclCommInitRank");
    symbol(api.comm_destroy, "ncclCommDestroy");
    symbol(api.comm_abort, "ncclCommAbort");
    symbol(api.comm_get_async_error, "ncclCommGetAsyncError");
    symbol(api.get_error_string, "ncclGetErrorString");
    symbol(api.get_last_error, "ncclGetLastError");
    symbol(api.group_start, "ncclGroupStart");
    symbol(api.group_end, "ncclGroupEnd");
    symbol(api.send, "ncclSend");
    symbol(api.recv, "ncclRecv");
  }
};

}  // namespace

const NcclApi& NcclApi::get() {
  static const Opened opened;
  if (!opened.why_not.empty()) HETSTENCIL_THROW(SystemError, opened.why_not);
  return opened.api;
}

}  // namespace hetstencil
