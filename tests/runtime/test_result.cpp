// A Result's solution is read in its own precision; asking for the other one
// says which to ask for.
#include <gtest/gtest.h>

#include <string>

#include "hetstencil/error.hpp"
#include "hetstencil/reference.hpp"
#include "hetstencil/report.hpp"

namespace hetstencil {
namespace {

template <class T>
std::string grid_failure(const Result& r) {
  try {
    r.grid<T>();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

Result solved(Precision precision) {
  Problem p;
  p.nx = p.ny = 6;
  p.precision = precision;
  p.stop.max_iterations = 3;
  return solve_reference(p);
}

TEST(Result, TheOtherPrecisionGivesAClearError) {
  const Result d = solved(Precision::Double);
  EXPECT_EQ(d.grid<double>().nx(), 6);
  EXPECT_EQ(grid_failure<float>(d), "the solution is double; call grid<double>()");
  const Result f = solved(Precision::Float);
  EXPECT_EQ(f.grid<float>().ny(), 6);
  EXPECT_EQ(grid_failure<double>(f), "the solution is float; call grid<float>()");
}

}  // namespace
}  // namespace hetstencil
