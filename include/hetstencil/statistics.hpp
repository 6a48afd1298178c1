/// \file
/// Statistics of timing samples, as the library takes them.
#pragma once

#include <string>
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
/// from /proc/stat (every process) less this process's own CPU time, and
/// what the hypervisor of a virtual machine takes from them (/proc/stat's
/// steal): started when constructed, read with since_start().
class HETSTENCIL_API HostLoad {
 public:
  /// The cores' worth others may take before they crowd a measurement. On a
  /// 2-core VM beside compilers, solves of one split took 4.4 to 13.8 ms an
  /// iteration, the slow ones with others using a core or more. On a 64-vCPU
  /// VM, a team of 63 threads lost 4-9 cores' worth to the hypervisor and each
  /// of its iterations took 6-9 ms, against 1.0 ms for 48 threads that lost 0.1
  /// (docs/model.md).
  static constexpr double kCrowdingCores = 0.2;
  /// Cores' worth, averaged over the wall time since the start.
  struct Figures {
    double others = -1.0;  ///< used by other processes (-1 where /proc/stat cannot be read)
    double idle = 0.0;     ///< left idle
    double stolen = 0.0;   ///< taken by the hypervisor from the machine's CPUs while they had work
    /// Others took more than kCrowdingCores and more than the host left idle
    /// (a daemon on a spare core of a large host takes none), or the hypervisor
    /// took more than kCrowdingCores: it stops CPUs that have work, ours among
    /// them, whatever else is idle.
    bool crowded() const;
    /// What crowded the measurement, in words ("" where nothing did).
    std::string describe() const;
  };
  HostLoad();
  Figures since_start() const;

 private:
  struct Reading {
    bool valid = false;
    double host = 0.0, idle = 0.0, steal = 0.0, ours = 0.0, wall = 0.0;
  };
  static Reading read();
  Reading start_;
};

}  // namespace hetstencil
