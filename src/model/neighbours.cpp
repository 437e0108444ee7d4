// The candidates explain compares a shape with: its size neighbours and the sizes that fill the last
// wave; and the SHAPE and --tile texts (model/explain.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include "model/explain.hpp"

namespace shapescope {

int64_t dim_value(const Problem& p, Dim dim) {
  switch (dim) {
    case Dim::kM: return p.m;
    case Dim::kN: return p.n;
    case Dim::kK: return p.k;
    case Dim::kAll: return p.n;
  }
  return p.n;
}

namespace {

constexpr int64_t kMultiples[] = {8, 16, 32, 64, 128, 256};
constexpr double kFullWave = 0.95;

void set_dim(Problem& p, Dim dim, int64_t value) {
  if (dim == Dim::kAll || dim == Dim::kM) p.m = value;
  if (dim == Dim::kAll || dim == Dim::kN) p.n = value;
  if (dim == Dim::kAll || dim == Dim::kK) p.k = value;
}

// Rounds and efficiency of the target's tile and slots at another size (K does not move tiles).
std::optional<Waves> waves_at(const Problem& p, Dim dim, int64_t value, const Annotation& target) {
  if (target.grid.tiles <= 0 || target.waves.slots <= 0 || dim == Dim::kK) return std::nullopt;
  Problem q = p;
  set_dim(q, dim, value);
  const TileGrid g = tile_grid(q.m, q.n, q.batch, target.grid.tile_m, target.grid.tile_n, target.grid.splits);
  return waves_of(g.tiles, target.waves.slots);
}

}  // namespace

std::string_view dim_name(Dim dim) {
  switch (dim) {
    case Dim::kAll: return "n";
    case Dim::kM: return "M";
    case Dim::kN: return "N";
    case Dim::kK: return "K";
  }
  return "n";
}

std::vector<Candidate> neighbours(const Problem& problem, bool square, const Annotation& target) {
  std::vector<Dim> dims;
  if (square) {
    dims = {Dim::kAll};
  } else {
    for (Dim d : {Dim::kM, Dim::kN, Dim::kK})
      if (dim_value(problem, d) % 256 != 0) dims.push_back(d);
    if (dims.empty()) dims = {Dim::kM, Dim::kN, Dim::kK};
  }
  std::vector<Candidate> out;
  for (Dim dim : dims) {
    std::vector<Candidate> along = neighbours_along(problem, dim, target, Side::kBoth);
    out.insert(out.end(), std::make_move_iterator(along.begin()), std::make_move_iterator(along.end()));
  }
  return out;
}

std::vector<Candidate> neighbours_along(const Problem& problem, Dim dim, const Annotation& target, Side side) {
  const bool below = side == Side::kBoth;
  const int64_t v = dim_value(problem, dim);
  std::map<int64_t, std::vector<std::string>> sizes;  // sorted, each reason kept
  auto add = [&](int64_t value, std::string why) {
    if (value >= 1 && value != v) sizes[value].push_back(std::move(why));
  };
  if (below) {
    add(v - 1, fmt::format("{}-1", dim_name(dim)));
    add(v + 1, fmt::format("{}+1", dim_name(dim)));
  }
  for (int64_t multiple : kMultiples) {
    if (below) add((v - 1) / multiple * multiple, fmt::format("multiple of {} below", multiple));
    add((v / multiple + 1) * multiple, fmt::format("multiple of {} above", multiple));
  }
  if (auto w = waves_at(problem, dim, v, target)) {
    // One wave less: the largest smaller size that needs fewer rounds (within half the size).
    for (int64_t x = v - 1; below && x >= std::max<int64_t>(1, v / 2); --x) {
      auto wx = waves_at(problem, dim, x, target);
      if (wx->rounds < w->rounds) {
        add(x, "one wave less");
        break;
      }
    }
    // Fills its last wave: the smallest larger size (within +25 %) whose last wave is >= 95 %
    // full, when the target's is not.
    if (w->efficiency < kFullWave) {
      for (int64_t x = v + 1; x <= v + v / 4; ++x) {
        auto wx = waves_at(problem, dim, x, target);
        if (wx->efficiency >= kFullWave) {
          add(x, "fills its last wave");
          break;
        }
      }
    }
  }
  std::vector<Candidate> out;
  for (auto& [value, reasons] : sizes) {
    Candidate c;
    c.dim = dim;
    c.value = value;
    // A multiple of 256 is a multiple of 8..128 too: only the largest multiple is worth saying.
    std::string why, multiple;
    for (const std::string& r : reasons) {
      if (r.rfind("multiple of ", 0) == 0) {
        multiple = r;
        continue;
      }
      why += (why.empty() ? "" : ", ") + r;
    }
    if (!multiple.empty()) why = why.empty() ? multiple : multiple + ", " + why;
    c.why = why;
    c.problem = problem;
    set_dim(c.problem, dim, value);
    out.push_back(std::move(c));
  }
  return out;
}

std::optional<ShapeArg> parse_shape(std::string_view text) {
  std::vector<int64_t> values;
  int64_t current = -1;
  for (char c : text) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      if (current < 0) current = 0;
      current = current * 10 + (c - '0');
      if (current > (int64_t(1) << 40)) return std::nullopt;
    } else if (c == 'x' || c == 'X') {
      if (current < 0) return std::nullopt;
      values.push_back(current);
      current = -1;
    } else {
      return std::nullopt;
    }
  }
  if (current < 0) return std::nullopt;
  values.push_back(current);
  for (int64_t v : values)
    if (v < 1) return std::nullopt;
  if (values.size() == 1) return ShapeArg{values[0], values[0], values[0], true};
  if (values.size() == 3) return ShapeArg{values[0], values[1], values[2], false};
  return std::nullopt;
}

std::optional<std::pair<int, int>> parse_tile(std::string_view text) {
  const size_t x = text.find_first_of("xX");
  if (x == std::string_view::npos) return std::nullopt;
  // Two positive sizes: parse "BMxBNx1" as a shape so that both parts get the same checks.
  const auto shape = parse_shape(fmt::format("{}x1", text));
  constexpr int64_t kMaxTile = 1024;
  if (!shape || shape->m > kMaxTile || shape->n > kMaxTile) return std::nullopt;
  return std::make_pair(int(shape->m), int(shape->n));
}

}  // namespace shapescope
