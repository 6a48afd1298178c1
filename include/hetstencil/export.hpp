// HETSTENCIL_API marks what the library exports: the library is compiled with
// hidden visibility, so a shared libhetstencil shows an application these
// classes and functions and nothing of its internals or of the libraries it
// uses (spdlog, fmt, nlohmann-json, hwloc), which cannot then clash with the
// application's own copies. Exception classes are marked too: a catch in the
// application matches their type information across the library's boundary.
#pragma once

#if defined(__GNUC__) || defined(__clang__)
#define HETSTENCIL_API __attribute__((visibility("default")))
#else
#define HETSTENCIL_API
#endif
