// What is wrong with a stencil description, as "field: what", shared by
// Stencil::validate (which names the stencil) and the JSON reader (which names
// the file).
#pragma once

#include <string>

#include "hetstencil/stencil.hpp"

namespace hetstencil {

/// "" for a valid description, else the first fault as "field: what".
std::string stencil_fault(const Stencil& stencil);

}  // namespace hetstencil
