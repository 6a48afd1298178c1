// Plots drawn by the Python scripts in tools/ (Debian's python3-matplotlib).
#pragma once

#include <string>

namespace hetstencil::cli {

/// Refuses (InvalidArgument) a --plot without a --csv: the plot is drawn from the CSV.
void check_plot_options(const std::string& csv, const std::string& png);

/// Runs tools/<script> CSV PNG --title TITLE with /usr/bin/python3 (else
/// python3 from PATH; $HETSTENCIL_PYTHON and $HETSTENCIL_TOOLS_DIR override
/// both), its output on stderr. Throws Error, saying what failed and how to
/// draw the plot by hand, when the plot was not drawn.
void draw_plot(const std::string& script, const std::string& csv, const std::string& png, const std::string& title);

}  // namespace hetstencil::cli
