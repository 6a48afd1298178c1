#include "devices/cuda/runtime_kernel.hpp"

#include <nvrtc.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/log.hpp"
#include "devices/cuda/cuda_check.hpp"

namespace hetstencil::cuda {
namespace {

namespace fs = std::filesystem;

void nvrtc_check(nvrtcResult rc, const char* call, const std::string& context, const char* file, int line) {
  if (rc != NVRTC_SUCCESS) throw CudaError(context + ": " + call + " failed: " + nvrtcGetErrorString(rc), file, line);
}
#define HETSTENCIL_NVRTC_CHECK(call, context) nvrtc_check((call), #call, (context), __FILE__, __LINE__)

std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

class Program {
 public:
  Program(const std::string& source, const std::string& where) : where_(where) {
    HETSTENCIL_NVRTC_CHECK(nvrtcCreateProgram(&program_, source.c_str(), "hetstencil_sweep.cu", 0, nullptr, nullptr),
                           where);
  }
  ~Program() { nvrtcDestroyProgram(&program_); }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  std::vector<char> compile(const std::vector<std::string>& options) {
    std::vector<const char*> argv;
    for (const std::string& o : options) argv.push_back(o.c_str());
    const nvrtcResult rc = nvrtcCompileProgram(program_, static_cast<int>(argv.size()), argv.data());
    if (rc != NVRTC_SUCCESS) throw CudaError(where_ + ": NVRTC failed (" + nvrtcGetErrorString(rc) + "):\n" + log(), __FILE__, __LINE__);
    std::size_t size = 0;
    HETSTENCIL_NVRTC_CHECK(nvrtcGetCUBINSize(program_, &size), where_);
    std::vector<char> cubin(size);
    HETSTENCIL_NVRTC_CHECK(nvrtcGetCUBIN(program_, cubin.data()), where_);
    return cubin;
  }

 private:
  std::string log() const {
    std::size_t size = 0;
    if (nvrtcGetProgramLogSize(program_, &size) != NVRTC_SUCCESS || size == 0) return "(no log)";
    std::string text(size, '\0');
    if (nvrtcGetProgramLog(program_, text.data()) != NVRTC_SUCCESS) return "(no log)";
    return text;
  }

  nvrtcProgram program_ = nullptr;
  std::string where_;
};

std::vector<char> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  return std::vector<char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Keeps `cubin` at `path` when the folder can be made; a cache that cannot
// be written costs a compile next time, nothing else.
void keep(const fs::path& path, const std::vector<char>& cubin) {
  try {
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    if (ec) throw std::runtime_error("cannot make " + path.parent_path().string() + ": " + ec.message());
    AtomicFile file(path.string());
    file.write(cubin.data(), cubin.size());
    file.commit();
  } catch (const std::exception& e) {
    log::warn("not keeping a compiled kernel: {}", e.what());
  }
}

// One compile at a time in a process: host threads of several GPUs asking
// for the same kernel find the first one's file.
std::mutex compiling;

}  // namespace

std::string kernel_cache_folder() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return (fs::path(xdg) / "hetstencil" / "kernels").string();
  if (const char* home = std::getenv("HOME"); home && *home) return (fs::path(home) / ".cache" / "hetstencil" / "kernels").string();
  return (fs::temp_directory_path() / "hetstencil-kernels").string();
}

RuntimeKernel::RuntimeKernel(const std::string& source, const char* entry, int gpu, const std::string& what) {
  const std::string where = "gpu" + std::to_string(gpu) + ": compiling " + what;
  int major = 0, minor = 0, nvrtc_major = 0, nvrtc_minor = 0;
  HETSTENCIL_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, gpu), where);
  HETSTENCIL_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, gpu), where);
  HETSTENCIL_NVRTC_CHECK(nvrtcVersion(&nvrtc_major, &nvrtc_minor), where);
  // -fmad=false as the library's own kernels: the bits of the reference.
  const std::vector<std::string> options = {"--gpu-architecture=sm_" + std::to_string(major * 10 + minor),
                                            "--fmad=false", "-std=c++17"};
  std::string key = "nvrtc " + std::to_string(nvrtc_major) + "." + std::to_string(nvrtc_minor);
  for (const std::string& o : options) key += " " + o;
  key += "\n" + source;
  const fs::path path = fs::path(kernel_cache_folder()) / fmt::format("{:016x}.cubin", fnv1a(key));

  // Loading is lazy: a damaged image may load and fail only when its kernel
  // is looked up, so both steps decide whether the kept file serves.
  auto load = [&](const std::vector<char>& cubin) {
    cudaError_t rc = cudaLibraryLoadData(&library_, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
    if (rc == cudaSuccess) rc = cudaLibraryGetKernel(&kernel_, library_, entry);
    if (rc != cudaSuccess && library_) {
      cudaLibraryUnload(library_);
      library_ = nullptr;
    }
    return rc;
  };
  std::lock_guard<std::mutex> lock(compiling);
  std::vector<char> cubin = read_file(path);
  if (!cubin.empty() && load(cubin) != cudaSuccess) {
    log::warn("gpu{}: the kept kernel {} does not load; compiling it again", gpu, path.string());
    cudaGetLastError();
  }
  if (!library_) {
    const auto start = std::chrono::steady_clock::now();
    cubin = Program(source, where).compile(options);
    log::info("gpu{}: compiled {} in {:.2f} s", gpu, what,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    HETSTENCIL_CUDA_CHECK(load(cubin), "gpu" + std::to_string(gpu) + ": loading " + what);
    keep(path, cubin);
  }
}

RuntimeKernel::~RuntimeKernel() {
  if (library_) cudaLibraryUnload(library_);
}

}  // namespace hetstencil::cuda
