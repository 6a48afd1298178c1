// Plots drawn by the Python scripts in tools/ (Debian's python3-matplotlib).
#pragma once

#include <string>

namespace hetstencil::cli {

/// Runs tools/<script> CSV PNG --title TITLE with /usr/bin/python3 (else
/// python3 from PATH; $HETSTENCIL_PYTHON and $HETSTENCIL_TOOLS_DIR override
/// both). Returns whether it drew the plot; if not, says on stderr how to draw
/// it by hand.
bool draw_plot(const std::string& script, const std::string& csv, const std::string& png, const std::string& title);

}  // namespace hetstencil::cli
