#include "devices/cuda/runtime_kernel.hpp"

#include <dlfcn.h>
#include <nvrtc.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/log.hpp"
#include "devices/cuda/cuda_check.hpp"
#include "devices/shared_library.hpp"

namespace hetstencil::cuda {
namespace {

namespace fs = std::filesystem;

// NVRTC, opened on first use rather than linked: its 100 MB are mapped only
// by a run that compiles a kernel (a process under a small address-space
// limit still starts), and its builtins library, which NVRTC looks for by
// name only, is opened first from NVRTC's own folder, where the loader's
// path may not reach (a toolkit in /usr/local/cuda without ldconfig).
class Nvrtc {
 public:
  static const Nvrtc& get() {
    static const Nvrtc nvrtc;
    if (!nvrtc.why_not_.empty()) throw CudaError(nvrtc.why_not_, __FILE__, __LINE__);
    return nvrtc;
  }

  decltype(&nvrtcVersion) version = nullptr;
  decltype(&nvrtcGetErrorString) error_string = nullptr;
  decltype(&nvrtcCreateProgram) create = nullptr;
  decltype(&nvrtcDestroyProgram) destroy = nullptr;
  decltype(&nvrtcCompileProgram) compile = nullptr;
  decltype(&nvrtcGetCUBINSize) cubin_size = nullptr;
  decltype(&nvrtcGetCUBIN) cubin = nullptr;
  decltype(&nvrtcGetProgramLogSize) log_size = nullptr;
  decltype(&nvrtcGetProgramLog) log = nullptr;

 private:
  Nvrtc() {
    const std::string name = "libnvrtc.so." + std::to_string(CUDART_VERSION / 1000);
    SharedLibrary library(name, std::string(HETSTENCIL_CUDA_LIBRARY_DIR) + "/" + name);
    library.symbol(version, "nvrtcVersion");
    library.symbol(error_string, "nvrtcGetErrorString");
    library.symbol(create, "nvrtcCreateProgram");
    library.symbol(destroy, "nvrtcDestroyProgram");
    library.symbol(compile, "nvrtcCompileProgram");
    library.symbol(cubin_size, "nvrtcGetCUBINSize");
    library.symbol(cubin, "nvrtcGetCUBIN");
    library.symbol(log_size, "nvrtcGetProgramLogSize");
    library.symbol(log, "nvrtcGetProgramLog");
    if (!library.why_not().empty()) {
      why_not_ = "NVRTC: " + library.why_not();
      return;
    }
    int major = 0, minor = 0;
    Dl_info where{};
    if (version(&major, &minor) == NVRTC_SUCCESS && dladdr(reinterpret_cast<void*>(version), &where) != 0 &&
        where.dli_fname) {
      const fs::path builtins = fs::path(where.dli_fname).parent_path() /
                                ("libnvrtc-builtins.so." + std::to_string(major) + "." + std::to_string(minor));
      // Kept open for NVRTC to find by name; where it is not there, NVRTC searches itself.
      dlopen(builtins.c_str(), RTLD_NOW | RTLD_GLOBAL);
    }
  }

  std::string why_not_;
};

void nvrtc_check(nvrtcResult rc, const char* call, const std::string& context, const char* file, int line) {
  if (rc != NVRTC_SUCCESS) {
    throw CudaError(context + ": " + call + " failed: " + Nvrtc::get().error_string(rc), file, line);
  }
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
  Program(const std::string& source, const std::string& where) : nvrtc_(Nvrtc::get()), where_(where) {
    HETSTENCIL_NVRTC_CHECK(nvrtc_.create(&program_, source.c_str(), "hetstencil_sweep.cu", 0, nullptr, nullptr), where);
  }
  ~Program() { nvrtc_.destroy(&program_); }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  std::vector<char> compile(const std::vector<std::string>& options) {
    std::vector<const char*> argv;
    for (const std::string& o : options) argv.push_back(o.c_str());
    const nvrtcResult rc = nvrtc_.compile(program_, static_cast<int>(argv.size()), argv.data());
    if (rc != NVRTC_SUCCESS) {
      throw CudaError(where_ + ": NVRTC failed (" + nvrtc_.error_string(rc) + "):\n" + log(), __FILE__, __LINE__);
    }
    std::size_t size = 0;
    HETSTENCIL_NVRTC_CHECK(nvrtc_.cubin_size(program_, &size), where_);
    std::vector<char> cubin(size);
    HETSTENCIL_NVRTC_CHECK(nvrtc_.cubin(program_, cubin.data()), where_);
    return cubin;
  }

 private:
  std::string log() const {
    std::size_t size = 0;
    if (nvrtc_.log_size(program_, &size) != NVRTC_SUCCESS || size == 0) return "(no log)";
    std::string text(size, '\0');
    if (nvrtc_.log(program_, text.data()) != NVRTC_SUCCESS) return "(no log)";
    return text;
  }

  const Nvrtc& nvrtc_;
  nvrtcProgram program_ = nullptr;
  std::string where_;
};

// -fmad=false as the library's own kernels: no multiply-add but those the
// source asks for (add_term's), so the bits of the reference.
std::vector<std::string> options_for(int architecture) {
  return {"--gpu-architecture=sm_" + std::to_string(architecture), "--fmad=false", "-std=c++17"};
}

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

// GPU `gpu`'s compute capability as NVRTC names it (90: sm_90).
int architecture_of(int gpu, const std::string& where) {
  int major = 0, minor = 0;
  HETSTENCIL_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, gpu), where);
  HETSTENCIL_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, gpu), where);
  return major * 10 + minor;
}

// Where the CUBIN of `source` for `architecture` is kept: named by a hash of
// NVRTC's version, the options and the source.
fs::path kept_path(const std::string& source, int architecture, const std::string& where) {
  int nvrtc_major = 0, nvrtc_minor = 0;
  HETSTENCIL_NVRTC_CHECK(Nvrtc::get().version(&nvrtc_major, &nvrtc_minor), where);
  std::string key = "nvrtc " + std::to_string(nvrtc_major) + "." + std::to_string(nvrtc_minor);
  for (const std::string& o : options_for(architecture)) key += " " + o;
  key += "\n" + source;
  return fs::path(kernel_cache_folder()) / fmt::format("{:016x}.cubin", fnv1a(key));
}

}  // namespace

std::string kernel_cache_folder() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return (fs::path(xdg) / "hetstencil" / "kernels").string();
  if (const char* home = std::getenv("HOME"); home && *home) return (fs::path(home) / ".cache" / "hetstencil" / "kernels").string();
  return (fs::temp_directory_path() / "hetstencil-kernels").string();
}

std::vector<char> compile_kernel(const std::string& source, int architecture, const std::string& where) {
  return Program(source, where).compile(options_for(architecture));
}

void compile_ahead(const std::vector<std::string>& sources, int gpu, const std::string& what) {
  const std::string where = "gpu" + std::to_string(gpu) + ": compiling " + what;
  int architecture = 0;
  std::map<fs::path, const std::string*> absent;  // each kernel once
  try {
    architecture = architecture_of(gpu, where);
    for (const std::string& source : sources) {
      fs::path path = kept_path(source, architecture, where);
      std::error_code ec;
      if (!fs::exists(path, ec)) absent.emplace(std::move(path), &source);
    }
  } catch (const CudaError& e) {
    log::debug("{}", e.what());  // no NVRTC: each RuntimeKernel says so where it is made
    return;
  }
  const std::vector<std::pair<fs::path, const std::string*>> missing(absent.begin(), absent.end());
  if (missing.empty()) return;
  const auto start = std::chrono::steady_clock::now();
  // NVRTC compiles distinct programs on several threads at once.
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t k = next++; k < missing.size(); k = next++) {
      try {
        keep(missing[k].first, compile_kernel(*missing[k].second, architecture, where));
      } catch (const std::exception& e) {
        log::debug("{}", e.what());  // its RuntimeKernel compiles it again and says why it fails
      }
    }
  };
  const std::size_t threads = std::min<std::size_t>(missing.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> team;
  try {
    for (std::size_t t = 1; t < threads; ++t) team.emplace_back(work);
  } catch (const std::system_error& e) {
    log::debug("{}: compiling on fewer threads ({})", where, e.what());
  }
  work();
  for (std::thread& t : team) t.join();
  log::info("gpu{}: compiled {} kernels of {} side by side in {:.2f} s", gpu, missing.size(), what,
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

RuntimeKernel::RuntimeKernel(const std::string& source, const char* entry, int gpu, const std::string& what) {
  const std::string where = "gpu" + std::to_string(gpu) + ": compiling " + what;
  const int architecture = architecture_of(gpu, where);
  const fs::path path = kept_path(source, architecture, where);

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
    cubin = compile_kernel(source, architecture, where);
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
