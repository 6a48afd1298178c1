/// \file
/// How a GPU sweeps: the variants of the original study's chapter V.
#pragma once

#include <cstdint>
#include <string>

#include "hetstencil/export.hpp"

namespace hetstencil {

/// How a GPU sweeps (the original study's chapter V). sync: one sweep per
/// iteration. blocked: K sweeps per pass over ghost zones K deep, the
/// reference's bits; across devices K rows are traded every K iterations (CPU
/// devices sweep plainly). Both take any split. async2 / async3, on one GPU
/// alone: alpha sweeps of each tile between global synchronizations, without
/// (async2) or with (async3) tiles reading each other's progress; they
/// converge, but their bits are not defined.
enum class Variant { Sync, Async2, Async3, Blocked };

/// "sync", "async2", "async3" or "blocked".
HETSTENCIL_API std::string to_string(Variant v);
/// "sync", "async2", "async3" or "blocked"; throws InvalidArgument otherwise.
HETSTENCIL_API Variant parse_variant(const std::string& text);
/// Whether the variant gives the reference's bits (sync, blocked).
inline bool deterministic(Variant v) { return v == Variant::Sync || v == Variant::Blocked; }

/// The most sweeps a variant makes per pass: async's alpha; blocked's K (a
/// GPU keeps K iterates in flight in registers).
constexpr int kMaxVariantSweeps = 32;
/// The deepest ghost zone of blocked (its K).
constexpr int kMaxBlockedDepth = 8;
/// The most sweeps a pass of `v` may make: kMaxBlockedDepth or kMaxVariantSweeps.
inline int max_sweeps(Variant v) { return v == Variant::Blocked ? kMaxBlockedDepth : kMaxVariantSweeps; }

/// A variant with its parameter.
struct VariantChoice {
  Variant variant = Variant::Sync;  ///< how GPUs sweep
  /// async2/async3: alpha, the sweeps a tile makes between global synchronizations;
  /// blocked: K, the sweeps per pass (the ghost zone's depth); up to max_sweeps(). Ignored by sync.
  int param = 1;
};

/// Ghost rows a device keeps on a side with a neighbour, and the sweeps between
/// exchanges: blocked's K, else 1.
inline int halo_depth(const VariantChoice& v) { return v.variant == Variant::Blocked ? v.param : 1; }
/// The rows a device with `neighbours` neighbours sweeps: its own and the ghost
/// rows but the outermost on each side with a neighbour.
inline std::int64_t rows_swept(std::int64_t rows, int neighbours, const VariantChoice& v) {
  return rows + neighbours * (halo_depth(v) - 1);
}

}  // namespace hetstencil
