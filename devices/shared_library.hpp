// A library opened at run time (dlopen) rather than linked, so that a run
// that never needs it never maps it (NVRTC, NCCL). It stays open for the
// rest of the process.
#pragma once

#include <dlfcn.h>

#include <string>
#include <type_traits>

namespace hetstencil {

class SharedLibrary {
 public:
  /// Opens `name` (a soname) through the loader's path, else the file at
  /// `fallback` (where the build found it); why_not() says why neither opened.
  SharedLibrary(const std::string& name, const std::string& fallback) {
    handle_ = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) handle_ = dlopen(fallback.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) why_not_ = name + " (also looked for as " + fallback + ") cannot be opened: " + dlerror();
  }

  /// Points `to` at the function `called`; a missing one makes why_not() say so.
  template <class Function>
  void symbol(Function& to, const char* called) {
    static_assert(std::is_pointer_v<Function>, "a function pointer");
    to = handle_ ? reinterpret_cast<Function>(dlsym(handle_, called)) : nullptr;
    if (!to && why_not_.empty()) why_not_ = std::string("the library lacks ") + called;
  }

  /// "" once opened with every symbol asked for.
  const std::string& why_not() const { return why_not_; }

 private:
  void* handle_ = nullptr;
  std::string why_not_;
};

}  // namespace hetstencil
