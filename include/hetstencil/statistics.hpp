/// \file
/// Statistics of timing samples, as the library takes them.
#pragma once

#include <vector>

#include "hetstencil/export.hpp"

namespace hetstencil {

/// The median of samples (the mean of the middle two for an even count);
/// throws InvalidArgument for none.
HETSTENCIL_API double median(std::vector<double> values);

/// The host's copy speed now, in bytes read and written a second: every
/// hardware thread copies its part of 16 MiB, three times (a few ms), the
/// median counted. Taken beside a measurement, it tells a spell of a shared
/// host (its cores or its memory busy with others) from a model's error; a
/// calibration keeps the one it was taken beside.
HETSTENCIL_API double host_canary_bytes_per_s();

/// What other processes take of the host's CPUs while a measurement runs,
/// from /proc/stat (every process, and time the hypervisor stole) less this
/// process's own CPU time: started when constructed, read with since_start().
class HETSTENCIL_API HostLoad {
 public:
  /// The cores' worth other processes may take before they crowd a
  /// measurement. On a 2-core VM beside compilers, solves of one split took
  /// 4.4 to 13.8 ms an iteration, the slow ones with others using a core or more.
  static constexpr double kCrowdingCores = 0.2;
  /// Cores' worth, averaged over the wall time since the start.
  struct Figures {
    double others = -1.0;  ///< used by other processes (-1 where /proc/stat cannot be read)
    double idle = 0.0;     ///< left idle
    /// Others took more than kCrowdingCores and more than the host left idle: they
    /// took cores the measurement wanted (a daemon on a spare core of a large
    /// host takes none).
    bool crowded() const;
  };
  HostLoad();
  Figures since_start() const;

 private:
  struct Reading {
    bool valid = false;
    double host = 0.0, idle = 0.0, ours = 0.0, wall = 0.0;
  };
  static Reading read();
  Reading start_;
};

}  // namespace hetstencil
