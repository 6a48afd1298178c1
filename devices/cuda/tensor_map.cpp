#include "devices/cuda/tensor_map.hpp"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>

#include <cstring>

#include "devices/cuda/cuda_check.hpp"

namespace hetstencil::cuda {
namespace {

// The driver's encoder (CUDA 12.0's signature), from the driver library that
// every process with a GPU has loaded, looked up once.
PFN_cuTensorMapEncodeTiled_v12000 encoder(const std::string& where) {
  static const auto found = [] {
    void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(driver ? dlsym(driver, "cuTensorMapEncodeTiled") : nullptr);
  }();
  if (!found) throw CudaError(where + ": the driver (libcuda.so.1) has no cuTensorMapEncodeTiled; CUDA 12.0 or later is needed", __FILE__, __LINE__);
  return found;
}

}  // namespace

TensorMapBytes planes_map(const void* first, std::size_t value_bytes, std::int64_t line_values, std::int64_t plane_lines,
                       std::int64_t plane_values, std::int64_t planes, int box_x, int box_y, const std::string& where) {
  CUtensorMap map{};
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(line_values), static_cast<cuuint64_t>(plane_lines),
                              static_cast<cuuint64_t>(planes)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(line_values) * value_bytes,
                                 static_cast<cuuint64_t>(plane_values) * value_bytes};
  const cuuint32_t box[3] = {static_cast<cuuint32_t>(box_x), static_cast<cuuint32_t>(box_y), 1};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  const CUresult rc = encoder(where)(&map, value_bytes == 4 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_FLOAT64, 3,
                                     const_cast<void*>(first), dims, strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                     CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (rc != CUDA_SUCCESS) {
    throw CudaError(where + ": cuTensorMapEncodeTiled refused the planes' map (CUresult " + std::to_string(static_cast<int>(rc)) + ")",
                    __FILE__, __LINE__);
  }
  static_assert(sizeof(CUtensorMap) == sizeof(TensorMapBytes));
  TensorMapBytes bytes;
  std::memcpy(bytes.data(), &map, bytes.size());
  return bytes;
}

}  // namespace hetstencil::cuda
