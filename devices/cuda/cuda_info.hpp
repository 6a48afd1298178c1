// What this build knows of CUDA GPUs. Without CUDA (or without a GPU) it reports
// zero devices; the CUDA device itself comes with its own issue.
#pragma once

namespace hetstencil {

/// Number of CUDA GPUs visible to this process; 0 when CUDA is not compiled in,
/// no driver is loaded or no GPU is present.
int cuda_device_count();

/// Whether this build contains the CUDA parts.
bool cuda_compiled();

}  // namespace hetstencil
