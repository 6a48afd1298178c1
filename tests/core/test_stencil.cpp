// The stencil description: built-ins, the refusals (each naming its field),
// JSON in and out, and the generic update against Poisson5 bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "core/stencil_terms.hpp"
#include "core/stencil_update.hpp"
#include "hetstencil/error.hpp"
#include "hetstencil/stencil.hpp"

namespace hetstencil {
namespace {

std::string refusal(const Stencil& s) {
  try {
    s.validate();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

std::string parse_refusal(const std::string& text) {
  try {
    parse_stencil(text, "my.json");
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

TEST(Stencil, BuiltinsAreValidWithTheirRadiusAndPoints) {
  struct Expected {
    const char* name;
    int dimension, radius;
    std::size_t points;
  };
  for (const Expected& e : {Expected{"poisson5", 2, 1, 4}, Expected{"box9", 2, 1, 8}, Expected{"poisson7", 3, 1, 6},
                            Expected{"box27", 3, 1, 26}, Expected{"star4", 3, 4, 24}}) {
    const Stencil s = Stencil::builtin(e.name);
    EXPECT_NO_THROW(s.validate()) << e.name;
    EXPECT_EQ(s.name, e.name);
    EXPECT_EQ(s.dimension, e.dimension) << e.name;
    EXPECT_EQ(s.radius(), e.radius) << e.name;
    EXPECT_EQ(s.points.size(), e.points) << e.name;
  }
  EXPECT_EQ(builtin_stencil_names().size(), 5u);
}

TEST(Stencil, BuiltinsAreConsistentLaplacians) {
  // A constant is harmonic (the weights add up to the diagonal), and u = x^2
  // has A u = -2 times s / h^2 (sum of w dx^2 = 2 * factor), per axis.
  for (const std::string& name : builtin_stencil_names()) {
    const Stencil s = Stencil::builtin(name);
    double sum = 0.0, xx = 0.0, yy = 0.0, zz = 0.0;
    for (const StencilPoint& p : s.points) {
      sum += p.weight;
      xx += p.weight * p.dx * p.dx;
      yy += p.weight * p.dy * p.dy;
      zz += p.weight * p.dz * p.dz;
    }
    EXPECT_EQ(sum, s.diagonal) << name;
    EXPECT_EQ(xx, 2.0 * s.source_scale.factor) << name;
    EXPECT_EQ(yy, 2.0 * s.source_scale.factor) << name;
    EXPECT_EQ(zz, s.dimension == 3 ? 2.0 * s.source_scale.factor : 0.0) << name;
    EXPECT_TRUE(s.source_scale.times_h2) << name;
  }
}

TEST(Stencil, Poisson5ListsNorthSouthWestEast) {
  const Stencil s = Stencil::builtin("poisson5");
  ASSERT_EQ(s.points.size(), 4u);
  EXPECT_EQ(s.points[0], (StencilPoint{0, -1, 0, 1.0}));
  EXPECT_EQ(s.points[1], (StencilPoint{0, 1, 0, 1.0}));
  EXPECT_EQ(s.points[2], (StencilPoint{-1, 0, 0, 1.0}));
  EXPECT_EQ(s.points[3], (StencilPoint{1, 0, 0, 1.0}));
  EXPECT_EQ(s.diagonal, 4.0);
  EXPECT_EQ(s.source_scale, (SourceScale{1.0, true}));
}

TEST(Stencil, UnknownBuiltinNamesTheBuiltins) {
  try {
    Stencil::builtin("poisson9");
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("'poisson9'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("box27"), std::string::npos) << e.what();
  }
}

TEST(Stencil, EveryRefusalNamesItsField) {
  const Stencil good = Stencil::builtin("poisson5");
  auto with = [&](auto change) {
    Stencil s = good;
    s.name = "mine";
    change(s);
    return refusal(s);
  };
  EXPECT_EQ(refusal(good), "");
  EXPECT_EQ(with([](Stencil& s) { s.points[3].dx = 5; }), "stencil 'mine': points[3].offset: dx = 5 is beyond radius 4");
  EXPECT_EQ(with([](Stencil& s) { s.points[1].dy = -7; }), "stencil 'mine': points[1].offset: dy = -7 is beyond radius 4");
  EXPECT_EQ(with([](Stencil& s) { s.points[2] = s.points[0]; }),
            "stencil 'mine': points[2].offset: (0, -1) repeats points[0]");
  EXPECT_EQ(with([](Stencil& s) { s.points[1] = StencilPoint{0, 0, 0, 2.0}; }),
            "stencil 'mine': points[1].offset: (0, 0) is the centre; its coefficient is the stencil's 'diagonal'");
  EXPECT_EQ(with([](Stencil& s) { s.diagonal = 0.0; }), "stencil 'mine': diagonal: must be finite and non-zero, got 0");
  EXPECT_EQ(with([](Stencil& s) { s.diagonal = std::numeric_limits<double>::infinity(); }),
            "stencil 'mine': diagonal: must be finite and non-zero, got inf");
  EXPECT_EQ(with([](Stencil& s) { s.points[2].weight = std::nan(""); }),
            "stencil 'mine': points[2].weight: must be finite, got nan");
  EXPECT_EQ(with([](Stencil& s) { s.points.clear(); }),
            "stencil 'mine': points: none given; a stencil needs at least one neighbour");
  EXPECT_EQ(with([](Stencil& s) { s.dimension = 4; }), "stencil 'mine': dimension: must be 2 or 3, got 4");
  EXPECT_EQ(with([](Stencil& s) { s.points[0].dz = 1; }), "stencil 'mine': points[0].offset: dz = 1 in a 2-D stencil");
  EXPECT_EQ(with([](Stencil& s) { s.source_scale.factor = 0.0; }),
            "stencil 'mine': source_scale.factor: must be finite and non-zero, got 0");
}

TEST(StencilJson, RoundTripsEveryBuiltinAndARandomOne) {
  std::vector<Stencil> stencils;
  for (const std::string& name : builtin_stencil_names()) stencils.push_back(Stencil::builtin(name));
  Stencil odd;
  odd.name = "odd";
  odd.dimension = 3;
  odd.points = {{4, -3, 2, 0.1}, {-1, 0, 0, 1.0 / 3.0}};
  odd.diagonal = -2.5e-7;
  odd.source_scale = {0.125, false};
  stencils.push_back(odd);
  for (const Stencil& s : stencils) {
    const std::string text = stencil_json(s);
    EXPECT_NE(text.find("\"schema\": \"hetstencil-stencil\""), std::string::npos);
    EXPECT_EQ(parse_stencil(text), s) << text;
  }
}

TEST(StencilJson, ReadsTheDocumentedFormat) {
  const Stencil s = parse_stencil(R"({"name": "cross", "dimension": 2, "diagonal": 4,
    "points": [{"offset": [0, -1], "weight": 1}, {"offset": [0, 1], "weight": 1},
               {"offset": [-1, 0], "weight": 1}, {"offset": [1, 0], "weight": 1}]})");
  Stencil expected = Stencil::builtin("poisson5");
  expected.name = "cross";
  EXPECT_EQ(s, expected);
  const Stencil scaled = parse_stencil(R"({"name": "a", "dimension": 2, "diagonal": 1, "source_scale": 0.5,
    "points": [{"offset": [1, 0], "weight": 1}]})");
  EXPECT_EQ(scaled.source_scale, (SourceScale{0.5, false}));
}

TEST(StencilJson, RefusalsNameTheFileAndTheField) {
  const std::string head = R"({"name": "a", "dimension": 2, "diagonal": 4, "points": [)";
  const std::string p = R"({"offset": [0, 1], "weight": 1}, {"offset": [1, 0], "weight": 1}, )";
  EXPECT_EQ(parse_refusal(head + p + p + R"({"offset": [3, 0], "weight": 1}]})"),
            "my.json: points[2].offset: (0, 1) repeats points[0]");
  EXPECT_EQ(parse_refusal(head + p + R"({"offset": [0, 5], "weight": 1}]})"),
            "my.json: points[2].offset: dy = 5 is beyond radius 4");
  EXPECT_EQ(parse_refusal(head + p + R"({"offset": [1, 1, 1], "weight": 1}]})"),
            "my.json: points[2].offset: expected [dx, dy] in a 2-D stencil, got [1,1,1]");
  EXPECT_EQ(parse_refusal(head + p + R"({"offset": [1, 1], "weight": "x"}]})"),
            "my.json: points[2].weight: expected a number, got \"x\"");
  EXPECT_EQ(parse_refusal(head + p + R"({"offset": [1, 1]}]})"), "my.json: points[2].weight: missing");
  EXPECT_EQ(parse_refusal(head + p + R"({"offset": [1.5, 1], "weight": 1}]})"),
            "my.json: points[2].offset: dx must be a whole number, got 1.5");
  EXPECT_EQ(parse_refusal(R"({"name": "a", "dimension": 2, "points": []})"), "my.json: diagonal: missing");
  EXPECT_EQ(parse_refusal(R"({"name": "a", "dimension": 5, "diagonal": 1, "points": []})"),
            "my.json: dimension: must be 2 or 3, got 5");
  EXPECT_EQ(parse_refusal(R"({"name": "a", "dimension": 2, "diagonal": 0, "points": [{"offset": [1, 0], "weight": 1}]})"),
            "my.json: diagonal: must be finite and non-zero, got 0");
  EXPECT_EQ(parse_refusal(R"({"schema": "hetstencil-plan", "schema_version": 1})").rfind("my.json: schema: ", 0), 0u);
  EXPECT_EQ(parse_refusal("{").rfind("my.json: not valid JSON", 0), 0u);
}

TEST(StencilJson, ReadStencilNamesAMissingFile) {
  try {
    read_stencil("/nonexistent/s.json");
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/s.json"), std::string::npos) << e.what();
  }
}

TEST(StencilJson, ExamplesAreValid) {
  for (const char* file : {"cross9.json", "anisotropic5.json", "star2_3d.json"}) {
    const Stencil s = read_stencil(std::string(HETSTENCIL_EXAMPLES) + "/stencils/" + file);
    EXPECT_NO_THROW(s.validate()) << file;
  }
}

TEST(StencilJson, RandomValidDescriptionsAreAccepted) {
  std::mt19937 rng(17);
  for (int trial = 0; trial < 200; ++trial) {
    Stencil s;
    s.name = "random" + std::to_string(trial);
    s.dimension = 2 + static_cast<int>(rng() % 2);
    const int radius = 1 + static_cast<int>(rng() % 4);
    std::uniform_int_distribution<int> offset(-radius, radius);
    std::uniform_real_distribution<double> weight(-2.0, 2.0);
    const int wanted = 1 + static_cast<int>(rng() % 12);
    for (int k = 0; k < wanted; ++k) {
      StencilPoint p{offset(rng), offset(rng), s.dimension == 3 ? offset(rng) : 0, weight(rng)};
      bool fresh = !(p.dx == 0 && p.dy == 0 && p.dz == 0);
      for (const StencilPoint& q : s.points) fresh = fresh && !(q.dx == p.dx && q.dy == p.dy && q.dz == p.dz);
      if (fresh) s.points.push_back(p);
    }
    if (s.points.empty()) s.points.push_back({1, 0, 0, 1.0});
    s.diagonal = 1.0 + weight(rng) * weight(rng);
    EXPECT_NO_THROW(s.validate()) << stencil_json(s);
    EXPECT_EQ(parse_stencil(stencil_json(s)), s);
  }
}

template <class T>
void generic_update_is_poisson5_bit_for_bit(std::uint32_t seed) {
  const GridShape shape{0, 3, 3, 1};
  const StencilTerms<T> terms = stencil_terms<T>(Stencil::builtin("poisson5"), shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> magnitude(-30.0, 30.0);
  auto random_value = [&] {
    return static_cast<T>(std::ldexp(std::uniform_real_distribution<double>(-1.0, 1.0)(rng), int(magnitude(rng))));
  };
  for (int trial = 0; trial < 100000; ++trial) {
    T cells[25];
    for (T& c : cells) c = random_value();
    const T* centre = cells + 2 * 5 + 2;  // rows of 5 values
    const T sf = random_value();
    const T n = centre[-5], s = centre[5], w = centre[-1], e = centre[1];
    const T expected_update = Poisson5<T>::update(n, s, w, e, sf);
    const T expected_residual = Poisson5<T>::residual(n, s, w, e, centre[0], sf);
    const T update = terms.update(centre, sf);
    const T residual = terms.residual(centre, sf);
    ASSERT_EQ(std::memcmp(&update, &expected_update, sizeof(T)), 0) << trial;
    ASSERT_EQ(std::memcmp(&residual, &expected_residual, sizeof(T)), 0) << trial;
  }
}

TEST(StencilTerms, Poisson5IsTheDevicesUpdateBitForBit) {
  generic_update_is_poisson5_bit_for_bit<float>(1);
  generic_update_is_poisson5_bit_for_bit<double>(2);
}

TEST(StencilTerms, AddsInTheDescriptionsOrder) {
  // In float, 1e8 + 1 rounds back to 1e8: the listed order decides what survives.
  Stencil s;
  s.name = "order";
  s.points = {{-1, 0, 0, 1.0}, {1, 0, 0, 1.0}, {0, 1, 0, 1.0}};
  s.diagonal = 1.0;
  const float row[3] = {1e8f, 0.0f, -1e8f};
  const float below[3] = {0.0f, 1.0f, 0.0f};
  float grid[6];
  std::memcpy(grid, row, sizeof row);
  std::memcpy(grid + 3, below, sizeof below);
  EXPECT_EQ(stencil_terms<float>(s, GridShape{0, 1, 1, 1}).neighbours(grid + 1), 1.0f);  // (1e8 - 1e8) + 1
  s.points = {{-1, 0, 0, 1.0}, {0, 1, 0, 1.0}, {1, 0, 0, 1.0}};
  EXPECT_EQ(stencil_terms<float>(s, GridShape{0, 1, 1, 1}).neighbours(grid + 1), 0.0f);  // (1e8 + 1) - 1e8
}

TEST(StencilTerms, FusesEachTermAfterTheFirst) {
  // 3 (1 + 2^-23) needs one bit more than a float has: a product rounded before
  // the sum would leave 2^-22 or 2^-21 of it after the -3, the fused term 3 2^-23.
  Stencil s;
  s.name = "fused";
  s.points = {{-1, 0, 0, 1.0}, {1, 0, 0, 3.0}};
  s.diagonal = 4.0;
  const float b = 1.0f + std::ldexp(1.0f, -23);
  const float row[3] = {-3.0f, 0.0f, b};
  const StencilTerms<float> terms = stencil_terms<float>(s, GridShape{0, 1, 1, 1});
  EXPECT_EQ(terms.neighbours(row + 1), 3 * std::ldexp(1.0f, -23));
  volatile float product = 3.0f * b;  // rounded on its own, whatever the compiler contracts
  EXPECT_NE(terms.neighbours(row + 1), -3.0f + product);
  EXPECT_EQ(terms.update(row + 1, 0.0f), 3 * std::ldexp(1.0f, -23) / 4);
}

// The built-in Laplacians keep a smooth mode as it is (their weights sum to
// the diagonal) and grow none; star4's checkerboard mode lines its alternating
// weights up, all with one sign, and grows by their sum over the diagonal.
TEST(JacobiGrowth, LaplaciansGrowNothingAndStar4GrowsItsCheckerboard) {
  for (const char* name : {"poisson5", "box9", "poisson7", "box27"}) {
    EXPECT_NEAR(jacobi_growth(Stencil::builtin(name)), 1.0, 1e-12) << name;
  }
  const Stencil star4 = Stencil::builtin("star4");
  double weights = 0.0;
  for (const StencilPoint& p : star4.points) weights += std::fabs(p.weight);
  EXPECT_NEAR(jacobi_growth(star4), weights / star4.diagonal, 1e-12);
  EXPECT_GT(jacobi_growth(star4), 1.0);
}

// A heavier diagonal damps every mode by as much; a one-sided stencil's modes
// all keep their size (the symbol's modulus, not its real part); a variable
// stencil's growth depends on its coefficients.
TEST(JacobiGrowth, IsTheLargestModulusOfTheSymbolOverTheDiagonal) {
  Stencil damped = Stencil::builtin("poisson5");
  damped.diagonal = 2.0 * damped.diagonal;
  EXPECT_NEAR(jacobi_growth(damped), 0.5, 1e-12);
  Stencil upwind = Stencil::builtin("poisson5");
  upwind.points = {{1, 0, 0, 3.0}};
  upwind.diagonal = -4.0;
  EXPECT_NEAR(jacobi_growth(upwind), 0.75, 1e-12);
  EXPECT_TRUE(std::isnan(jacobi_growth(Stencil::diffusion(2))));
}

}  // namespace
}  // namespace hetstencil
