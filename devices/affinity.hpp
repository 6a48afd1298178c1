// Binding the calling thread to processors.
#pragma once

#include <string>
#include <vector>

namespace hetstencil {

/// Binds the calling thread to the OS processors `cpus` (nothing to do when
/// empty). Binding is a matter of speed, not of correctness: where the OS
/// refuses (a described machine, a restricted cpuset) it warns and runs unbound.
void bind_current_thread(const std::string& who, const std::vector<int>& cpus);

}  // namespace hetstencil
