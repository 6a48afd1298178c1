// The sum of a residual's row (3-D: plane) sums: a balanced binary tree over
// their indices, so that the processes of a solve can each add their own rows
// and send the few blocks they hold instead of every row. Node (level L, index
// k) holds values k * 2^L .. (k + 1) * 2^L - 1 of n; a leaf (level 0) is a
// value; a node adds its left child and its right one, in that order, or is its
// left child where the right one starts at or past n. The root is the node of
// level ceil(log2 n), index 0. Any cover of 0 .. n - 1 by nodes, in order,
// gives the root's bits (tree_root): the same total for any split.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "hetstencil/error.hpp"

namespace hetstencil {

struct TreeNode {
  int level = 0;
  std::int64_t index = 0;
  double sum = 0.0;

  std::int64_t first() const { return index << level; }
};

/// The level of the root of a tree over n values (0 for n <= 1).
inline int tree_levels(std::int64_t n) {
  int level = 0;
  while ((std::int64_t{1} << level) < n) ++level;
  return level;
}

/// The sum of values[0 .. n - 1] in the tree's order, a level at a time:
/// each pair's sum, a last value without a partner carried up as it is; 0 for
/// n = 0.
inline double tree_sum(const double* values, std::int64_t n) {
  if (n == 0) return 0.0;
  if (n == 1) return values[0];
  std::vector<double> level(static_cast<std::size_t>((n + 1) / 2));
  double* up = level.data();
  const double* in = values;
  while (n > 1) {
    const std::int64_t pairs = n / 2;
    for (std::int64_t k = 0; k < pairs; ++k) up[k] = in[2 * k] + in[2 * k + 1];
    if (n % 2 != 0) up[pairs] = in[n - 1];
    in = up;  // a level is written over the one below it: k <= 2k
    n = (n + 1) / 2;
  }
  return up[0];
}

/// The sum of node (level, index) of the tree over values[0 .. n - 1]: its
/// values' own tree, since the node starts where a pair does at every level.
inline double tree_node_sum(const double* values, std::int64_t n, int level, std::int64_t index) {
  const std::int64_t first = index << level;
  return tree_sum(values + first, std::min(std::int64_t{1} << level, n - first));
}

/// The fewest nodes that cover values first .. end - 1 of n, in order, each
/// the largest that starts where the one before ends (sums left at 0): what a
/// process holding those values sends. A node may reach past n only where end
/// is n.
inline std::vector<TreeNode> tree_cover(std::int64_t first, std::int64_t end, std::int64_t n) {
  std::vector<TreeNode> nodes;
  const int top = tree_levels(n);
  while (first < end) {
    int level = 0;
    while (level < top && first % (std::int64_t{2} << level) == 0 &&
           (first + (std::int64_t{2} << level) <= end || end == n)) {
      ++level;
    }
    nodes.push_back({level, first >> level, 0.0});
    first += std::int64_t{1} << level;
  }
  return nodes;
}

/// The root's sum from nodes that cover 0 .. n - 1 in order (tree_cover's of
/// consecutive ranges, with their sums). Throws Error for nodes that do not.
inline double tree_root(const std::vector<TreeNode>& cover, std::int64_t n) {
  const int top = tree_levels(n);
  std::vector<TreeNode> stack;
  const auto merge_siblings = [&] {
    while (stack.size() >= 2) {
      const TreeNode right = stack.back();
      TreeNode& left = stack[stack.size() - 2];
      if (left.level != right.level || left.index + 1 != right.index || left.index % 2 != 0) return;
      left = {left.level + 1, left.index / 2, left.sum + right.sum};
      stack.pop_back();
    }
  };
  const auto not_a_cover = [n] {
    HETSTENCIL_THROW(Error, "the residual's sum tree was given nodes that do not cover its " + std::to_string(n) +
                                " values in order");
  };
  std::int64_t covered = 0;  // values 0 .. covered - 1 so far
  for (const TreeNode& node : cover) {
    if (node.level < 0 || node.level > top || node.first() != covered || covered >= n) not_a_cover();
    covered += std::int64_t{1} << node.level;
    stack.push_back(node);
    merge_siblings();
  }
  if (covered < n) not_a_cover();
  if (n == 0) return 0.0;
  // What is left is the right edge, whose right siblings start at or past n.
  while (stack.back().level < top && stack.back().index % 2 == 0) {
    TreeNode& last = stack.back();
    last = {last.level + 1, last.index / 2, last.sum};
    merge_siblings();
  }
  if (stack.size() != 1 || stack.back().level != top) not_a_cover();
  return stack.back().sum;
}

}  // namespace hetstencil
