#include "hetstencil/version.hpp"

namespace hetstencil {

const char* version() { return HETSTENCIL_VERSION_STRING; }

}  // namespace hetstencil
