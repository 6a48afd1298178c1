// Command lines the robustness cases start from: small, quick, and the same
// machine everywhere (two CPU devices of one thread, no calibration).
#pragma once

#include <string>
#include <vector>

#include "tests/robustness/harness.hpp"

namespace hetstencil::robustness {

using Args = std::vector<std::string>;

/// A solve of an 8 x 8 grid, 3 iterations, on two CPU devices.
inline Args quick_solve() {
  return {"solve", "--no-calibrate", "--no-learn", "--devices", "cpu", "--cpu-devices", "2", "--threads", "1",
          "--nx", "8", "--ny", "8", "--iters", "3"};
}

/// `args` with `option` set to `value` (replacing its value where it is given).
inline Args with(Args args, const std::string& option, const std::string& value) {
  for (std::size_t k = 0; k + 1 < args.size(); ++k) {
    if (args[k] == option) {
      args[k + 1] = value;
      return args;
    }
  }
  args.push_back(option);
  args.push_back(value);
  return args;
}

/// `args` and then `more`.
inline Args plus(Args args, const Args& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

/// A time limit of `s` seconds.
inline RunOptions within(int s) {
  RunOptions o;
  o.timeout_s = s;
  return o;
}

/// A copy (in the box) of the fixture profile of a machine with two sockets and eight GPUs.
inline std::string copy_fixture_profile(const Sandbox& box) {
  return box.write("eight_gpus.json", read_file(std::string(HETSTENCIL_FIXTURES) + "/profiles/eight_gpus_two_sockets.json"))
      .string();
}

}  // namespace hetstencil::robustness
