// Peer access is a property of the process: each pair is enabled once.
#pragma once

#include <string>

namespace hetstencil {

/// Lets the current device `from` read and write device `to`'s memory (the
/// caller checked cudaDeviceCanAccessPeer). Throws CudaError with `context`.
void enable_peer_access(int from, int to, const std::string& context);

}  // namespace hetstencil
