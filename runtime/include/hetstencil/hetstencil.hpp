// Everything an application needs.
#pragma once

#include "hetstencil/device_info.hpp"
#include "hetstencil/error.hpp"
#include "hetstencil/grid.hpp"
#include "hetstencil/npy.hpp"
#include "hetstencil/plan.hpp"
#include "hetstencil/problem.hpp"
#include "hetstencil/reference.hpp"
#include "hetstencil/report.hpp"
#include "hetstencil/runtime.hpp"
