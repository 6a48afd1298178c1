#include "devices/cuda/tensor_map.hpp"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>

#include <cstring>
#include <string>

#include "devices/cuda/cuda_check.hpp"

namespace hetstencil::cuda {
namespace {

// The driver's encoder (CUDA 12.0's signature), from the driver library that
// every process with a GPU has loaded, looked up once; else why not.
struct Encoder {
  PFN_cuTensorMapEncodeTiled_v12000 encode = nullptr;
  std::string missing;
};

const Encoder& encoder() {
  static const Encoder found = [] {
    Encoder e;
    void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!driver) {
      const char* why = dlerror();
      e.missing = std::string("cannot open the driver library libcuda.so.1: ") + (why ? why : "no reason given");
      return e;
    }
    e.encode = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(dlsym(driver, "cuTensorMapEncodeTiled"));
    if (!e.encode) e.missing = "the driver has no cuTensorMapEncodeTiled (CUDA 12.0 or later)";
    return e;
  }();
  return found;
}

std::string device(int gpu) { return "gpu" + std::to_string(gpu); }

}  // namespace

void check_tensor_maps(int gpu) {
  if (!encoder().encode) throw CudaError(device(gpu) + ": the staged sweep's tensor maps: " + encoder().missing, __FILE__, __LINE__);
}

TensorMapBytes planes_map(const void* first, std::size_t value_bytes, std::int64_t line_values, std::int64_t line_pitch,
                          std::int64_t plane_lines, std::int64_t plane_pitch, std::int64_t planes, int box_x, int box_y, int gpu) {
  check_tensor_maps(gpu);
  CUtensorMap map{};
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(line_values), static_cast<cuuint64_t>(plane_lines),
                              static_cast<cuuint64_t>(planes)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(line_pitch) * value_bytes,
                                 static_cast<cuuint64_t>(plane_pitch) * value_bytes};
  const cuuint32_t box[3] = {static_cast<cuuint32_t>(box_x), static_cast<cuuint32_t>(box_y), 1};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  const CUresult rc = encoder().encode(&map, value_bytes == 4 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_FLOAT64, 3,
                                       const_cast<void*>(first), dims, strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                       CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (rc != CUDA_SUCCESS) {
    throw CudaError(device(gpu) + ": cuTensorMapEncodeTiled refused the staged sweep's map of its planes (CUresult " +
                        std::to_string(static_cast<int>(rc)) + ")",
                    __FILE__, __LINE__);
  }
  static_assert(sizeof(CUtensorMap) == sizeof(TensorMapBytes));
  TensorMapBytes bytes;
  std::memcpy(bytes.data(), &map, bytes.size());
  return bytes;
}

}  // namespace hetstencil::cuda
