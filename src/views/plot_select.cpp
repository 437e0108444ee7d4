#include "views/plot_select.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <set>
#include <tuple>

#include "common/error.hpp"
#include "core/backend_kind.hpp"
#include "views/annotated.hpp"
#include "shape/range.hpp"
#include "store/store.hpp"

namespace shapescope {

namespace {

constexpr std::array<std::string_view, 3> kDimNames = {"M", "N", "K"};

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool contains_nocase(std::string_view text, std::string_view part) {
  return lower(text).find(lower(part)) != std::string::npos;
}

// --gpu KEY: a GPU's name as a store records it belongs to that model (the profiles' own matching,
// so that "h100" finds "NVIDIA H100 80GB HBM3" and not "NVIDIA H100 PCIe").
bool of_model(std::string_view gpu_name, const GpuProfile* model) { return profile_for_device_name(gpu_name) == model; }

std::string quoted_list(const std::set<std::string>& values) {
  std::vector<std::string> quoted;
  for (const std::string& v : values) quoted.push_back("'" + v + "'");
  return fmt::format("{}", fmt::join(quoted, ", "));
}

int64_t dim_value(const Problem& p, int dim) { return dim == 0 ? p.m : dim == 1 ? p.n : p.k; }

// The shape options as sweep reads them, as a membership test.
struct ShapeFilter {
  std::array<std::optional<std::set<int64_t>>, 3> dims;
  int leader = -1;
  std::set<int64_t> batches;

  explicit ShapeFilter(const PlotFilter& f) : batches(f.batch.values.begin(), f.batch.values.end()) {
    const std::array<const SizeFilter*, 3> given = {&f.m, &f.n, &f.k};
    for (int d = 0; d < 3; ++d) {
      if (given[size_t(d)]->text.empty()) continue;
      dims[size_t(d)] = std::set<int64_t>(given[size_t(d)]->values.begin(), given[size_t(d)]->values.end());
      if (leader < 0) leader = d;
    }
  }

  bool matches(const Problem& p) const {
    if (batches.count(p.batch) == 0) return false;
    if (leader < 0) return true;
    for (int d = 0; d < 3; ++d) {
      const int64_t value = dim_value(p, d);
      if (dims[size_t(d)]) {
        if (dims[size_t(d)]->count(value) == 0) return false;
      } else if (value != dim_value(p, leader)) {
        return false;
      }
    }
    return true;
  }
};

bool strides_match(const Problem& p, int64_t ld_pad, int64_t offset) {
  return p.lda == p.a_cols() + ld_pad && p.ldb == p.b_cols() + ld_pad && p.ldc == p.n + ld_pad &&
         p.off_a == offset && p.off_b == offset && p.off_c == 0;
}

// What the store holds, briefly, for the message about an empty selection.
std::string store_summary(const std::vector<StoredPoint>& stored) {
  std::map<std::string, size_t> groups;
  for (const StoredPoint& p : stored) {
    groups[fmt::format("{} {} {} {} {}{}", p.device.gpu_name, to_string(p.key.problem.dtype),
                       to_string(p.key.problem.layout), to_string(p.key.backend), p.key.algo, p.key.hot ? " hot" : "")]++;
  }
  if (groups.empty()) return "it holds no points";
  constexpr size_t kShown = 4;
  std::vector<std::string> parts;
  for (const auto& [what, count] : groups) {
    if (parts.size() == kShown) {
      parts.push_back(fmt::format("{} more", groups.size() - kShown));
      break;
    }
    parts.push_back(fmt::format("{}: {} points", what, count));
  }
  return fmt::format("it holds {}", fmt::join(parts, "; "));
}

// Identical keys measured again (another machine of the same kind, a re-run): the newest stays.
std::vector<StoredPoint> newest_of_each_key(std::vector<StoredPoint> points) {
  std::map<std::string, size_t> newest;
  for (size_t i = 0; i < points.size(); ++i) {
    const Problem& p = points[i].key.problem;
    const std::string key = fmt::format("{} {} {} {} {} {} {} {} {} {} {} {} {}", to_string(points[i].key.backend),
                                        points[i].key.algo, p.m, p.n, p.k, p.batch, to_string(p.dtype),
                                        to_string(p.layout), p.lda, p.ldb, p.ldc, p.off_a, p.off_b);
    auto [at, inserted] = newest.emplace(key, i);
    if (!inserted && points[i].result.measured_at > points[at->second].result.measured_at) at->second = i;
  }
  std::vector<StoredPoint> kept;
  for (const auto& entry : newest) kept.push_back(std::move(points[entry.second]));
  std::sort(kept.begin(), kept.end(), [](const StoredPoint& a, const StoredPoint& b) {
    const Problem& p = a.key.problem;
    const Problem& q = b.key.problem;
    // By the backend's name, as the store lists them.
    return std::make_tuple(p.m, p.n, p.k, p.batch, to_string(a.key.backend), std::cref(a.key.algo)) <
           std::make_tuple(q.m, q.n, q.k, q.batch, to_string(b.key.backend), std::cref(b.key.algo));
  });
  return kept;
}

// With several (backend, algorithm) pairs and one wanted: cuBLAS's default, or the only backend's.
std::vector<StoredPoint> one_algorithm(std::vector<StoredPoint> points, const PlotFilter& f, std::string& note) {
  std::set<std::pair<BackendKind, std::string>> pairs;
  std::set<BackendKind> backends;
  for (const StoredPoint& p : points) {
    pairs.emplace(p.key.backend, p.key.algo);
    backends.insert(p.key.backend);
  }
  if (pairs.size() <= 1) return points;
  std::set<std::string> names;
  for (const auto& [backend, algo] : pairs) names.insert(fmt::format("{} {}", to_string(backend), algo));
  // The library's own choice: cuBLAS's default, cuBLASLt's first heuristic choice.
  const auto own_choice = [](BackendKind b) { return std::make_pair(b, std::string(default_algo(b))); };
  std::optional<std::pair<BackendKind, std::string>> chosen;
  if (f.algos.empty()) {
    if (f.backends.empty() && pairs.count(own_choice(BackendKind::kCublas))) {
      chosen = own_choice(BackendKind::kCublas);
    } else if (backends.size() == 1 && pairs.count(own_choice(*backends.begin()))) {
      chosen = own_choice(*backends.begin());
    }
  }
  if (!chosen) {
    const bool backend_mix = backends.size() > 1;
    throw usage_error(fmt::format("{}: the selection mixes {}; choose one with --backend and --algo "
                                  "(plot compare draws them together)",
                                  backend_mix ? "--backend" : "--algo", fmt::join(names, ", ")));
  }
  note = fmt::format("plotting {} {} (the selection also holds {}; choose with --backend and --algo, or draw "
                     "them together with plot compare)",
                     to_string(chosen->first), chosen->second, names.size() - 1 == 1 ? "one more" : fmt::format("{} more", names.size() - 1));
  std::vector<StoredPoint> kept;
  for (StoredPoint& p : points)
    if (p.key.backend == chosen->first && p.key.algo == chosen->second) kept.push_back(std::move(p));
  return kept;
}

PlotContext context_of(const std::vector<StoredPoint>& points) {
  PlotContext c;
  std::set<std::string> drivers, runtimes, uuids;
  std::string first_day, last_day;
  for (const StoredPoint& p : points) {
    drivers.insert(p.device.driver);
    runtimes.insert(p.device.cuda_runtime);
    uuids.insert(p.device.gpu_uuid);
    const std::string day = p.result.measured_at.substr(0, 10);
    if (first_day.empty() || day < first_day) first_day = day;
    if (last_day.empty() || day > last_day) last_day = day;
  }
  const StoredPoint& any = points.front();
  c.gpu_name = any.device.gpu_name;
  c.cublas = any.device.cublas;
  c.driver = fmt::format("{}", fmt::join(drivers, ", "));
  c.cuda_runtime = fmt::format("{}", fmt::join(runtimes, ", "));
  c.dtype = any.key.problem.dtype;
  c.layout = any.key.problem.layout;
  c.hot = any.key.hot;
  c.measured = first_day == last_day ? first_day : first_day + ".." + last_day;
  c.gpus = int(uuids.size());
  return c;
}

}  // namespace

SizeFilter size_filter(const std::string& text, std::string_view option) {
  return SizeFilter{text, parse_range(text, option)};
}

std::vector<std::string> comma_list_option(const std::string& text, std::string_view option) {
  std::vector<std::string> items;
  for (size_t start = 0; !text.empty();) {
    const size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty()) throw usage_error(fmt::format("{}: '{}' has an empty item", option, text));
    items.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return items;
}

std::string PlotFilter::given() const {
  std::vector<std::string> parts;
  auto add = [&](std::string_view option, const std::string& value) {
    if (!value.empty()) parts.push_back(fmt::format("{} {}", option, value));
  };
  if (gpu) add("--gpu", gpu->key);
  add("--gpu-name", gpu_name);
  add("--cublas", cublas);
  if (dtype) add("--dtype", std::string(to_string(*dtype)));
  if (layout) add("--layout", std::string(to_string(*layout)));
  add("--backend", fmt::format("{}", fmt::join(backends, ",")));
  add("--algo", fmt::format("{}", fmt::join(algos, ",")));
  add("--kernel", kernel);
  add("--m", m.text);
  add("--n", n.text);
  add("--k", k.text);
  if (batch.text != "1") add("--batch", batch.text);
  if (ld_pad != 0) add("--ld-pad", std::to_string(ld_pad));
  if (offset != 0) add("--offset", std::to_string(offset));
  if (hot) parts.emplace_back("--hot");
  if (clocks) add("--clocks", std::string(to_string(*clocks)));
  if (parts.empty()) return "no filter";
  return fmt::format("{}", fmt::join(parts, " "));
}

std::string PlotContext::title() const {
  return fmt::format("{}{}, {} {}, cuBLAS {} (driver {}, CUDA {}), {} L2, measured {}{}", gpu_name,
                     gpus > 1 ? fmt::format(" ({} GPUs)", gpus) : "", to_string(dtype), to_string(layout), cublas,
                     driver, cuda_runtime, hot ? "hot" : "cold", measured,
                     kernel.empty() ? "" : fmt::format("\nonly the points whose kernel matches '{}'", kernel));
}

namespace {

// Each named value (--backend, --algo, --gpu, --gpu-name, --cublas) must occur in the store: a typo is
// named with what the store holds, rather than reported as "no point". Returns the backends named.
std::set<BackendKind> check_against_store(const std::vector<StoredPoint>& stored, const PlotFilter& f,
                                          const std::string& db_path) {
  std::set<std::string> stored_backends, stored_algos, stored_gpus, stored_cublas;
  for (const StoredPoint& p : stored) {
    stored_backends.insert(std::string(to_string(p.key.backend)));
    stored_algos.insert(p.key.algo);
    stored_gpus.insert(p.device.gpu_name);
    stored_cublas.insert(p.device.cublas);
  }
  std::set<BackendKind> backends;
  for (const std::string& b : f.backends) {
    if (!stored_backends.count(b))
      throw usage_error(fmt::format("--backend: '{}' has no point in '{}' (it holds {})", b, db_path,
                                    stored_backends.empty() ? "none" : quoted_list(stored_backends)));
    backends.insert(*parse_backend_kind(b));  // a name the store holds: the store read it as a kind
  }
  for (const std::string& a : f.algos) {
    if (!stored_algos.count(a))
      throw usage_error(fmt::format("--algo: '{}' has no point in '{}' (it holds {})", a, db_path,
                                    stored_algos.empty() ? "none" : quoted_list(stored_algos)));
  }
  auto any_contains = [](const std::set<std::string>& names, const std::string& part) {
    return std::any_of(names.begin(), names.end(), [&](const std::string& n) { return contains_nocase(n, part); });
  };
  const std::string held = stored_gpus.empty() ? "none" : quoted_list(stored_gpus);
  if (f.gpu && std::none_of(stored_gpus.begin(), stored_gpus.end(), [&](const std::string& n) { return of_model(n, f.gpu); }))
    throw usage_error(fmt::format("--gpu: '{}' matches no GPU in '{}' (it holds {})", f.gpu->key, db_path, held));
  if (!f.gpu_name.empty() && !any_contains(stored_gpus, f.gpu_name))
    throw usage_error(fmt::format("--gpu-name: '{}' matches no GPU in '{}' (it holds {})", f.gpu_name, db_path, held));
  if (!f.cublas.empty() &&
      std::none_of(stored_cublas.begin(), stored_cublas.end(), [&](const std::string& v) { return v.rfind(f.cublas, 0) == 0; }))
    throw usage_error(fmt::format("--cublas: '{}' matches no cuBLAS version in '{}' (it holds {})", f.cublas, db_path,
                                  stored_cublas.empty() ? "none" : quoted_list(stored_cublas)));
  return backends;
}

// One picture, one GPU and one library: a mix must be chosen from, never averaged.
void refuse_mixes(const std::vector<StoredPoint>& points) {
  std::set<std::string> gpus, cublas, dtypes, layouts;
  for (const StoredPoint& p : points) {
    gpus.insert(p.device.gpu_name);
    cublas.insert(p.device.cublas);
    dtypes.insert(std::string(to_string(p.key.problem.dtype)));
    layouts.insert(std::string(to_string(p.key.problem.layout)));
  }
  if (gpus.size() > 1) {
    // --gpu where it tells them apart (their models differ), else the name.
    const GpuProfile* first = profile_for_device_name(*gpus.begin());
    const bool models_differ = std::any_of(gpus.begin(), gpus.end(), [&](const std::string& n) { return !of_model(n, first); });
    throw usage_error(fmt::format("--gpu: the selection mixes GPUs {}; choose one (e.g. {})", quoted_list(gpus),
                                  first && models_differ ? "--gpu " + first->key
                                                         : fmt::format("--gpu-name '{}'", *gpus.begin())));
  }
  if (cublas.size() > 1)
    throw usage_error(fmt::format("--cublas: the selection mixes cuBLAS versions {}; choose one (e.g. --cublas {})",
                                  quoted_list(cublas), *cublas.begin()));
  if (dtypes.size() > 1)
    throw usage_error(fmt::format("--dtype: the selection mixes {}; choose one (e.g. --dtype {})", quoted_list(dtypes),
                                  *dtypes.begin()));
  if (layouts.size() > 1)
    throw usage_error(fmt::format("--layout: the selection mixes {}; choose one (e.g. --layout {})",
                                  quoted_list(layouts), *layouts.begin()));
}

}  // namespace

Selection select_points(const std::vector<StoredPoint>& stored, const std::string& db_path, const PlotFilter& f,
                        Algos algos, const std::string& command, const Store& calibrations, Mixes mixes) {
  const ShapeFilter shapes(f);

  const std::set<BackendKind> backends = check_against_store(stored, f, db_path);
  const std::set<std::string> algo_names(f.algos.begin(), f.algos.end());

  std::vector<StoredPoint> points;
  for (const StoredPoint& p : stored) {
    const Problem& problem = p.key.problem;
    if (p.key.hot != f.hot) continue;
    if (f.clocks && p.key.clocks != *f.clocks) continue;
    if (f.gpu && !of_model(p.device.gpu_name, f.gpu)) continue;
    if (!f.gpu_name.empty() && !contains_nocase(p.device.gpu_name, f.gpu_name)) continue;
    if (!f.cublas.empty() && p.device.cublas.rfind(f.cublas, 0) != 0) continue;
    if (f.dtype && problem.dtype != *f.dtype) continue;
    if (f.layout && problem.layout != *f.layout) continue;
    if (!backends.empty() && !backends.count(p.key.backend)) continue;
    if (!algo_names.empty() && !algo_names.count(p.key.algo)) continue;
    if (!strides_match(problem, f.ld_pad, f.offset)) continue;
    if (!shapes.matches(problem)) continue;
    points.push_back(p);
  }
  auto refuse_empty = [&] {
    return usage_error(fmt::format("{}: no point in '{}' matches {} ({})", command, db_path, f.given(),
                                   store_summary(stored)));
  };
  if (points.empty()) throw refuse_empty();

  if (mixes == Mixes::kRefuse) refuse_mixes(points);

  Selection s;
  points = newest_of_each_key(std::move(points));
  if (algos == Algos::kOne) points = one_algorithm(std::move(points), f, s.note);

  std::vector<Annotation> annotations = annotate_points(calibrations, points);
  if (!f.kernel.empty()) {
    for (size_t i = 0; i < points.size(); ++i) {
      const Annotation& a = annotations[i];
      const bool match = a.main_kernel >= 0 &&
                         contains_nocase(short_kernel_name(points[i].kernels[size_t(a.main_kernel)].name), f.kernel);
      if (!match) continue;
      s.points.push_back(std::move(points[i]));
      s.annotations.push_back(std::move(annotations[i]));
    }
    if (s.points.empty()) throw refuse_empty();
  } else {
    s.points = std::move(points);
    s.annotations = std::move(annotations);
  }
  s.context = context_of(s.points);
  s.context.kernel = f.kernel;
  return s;
}

int64_t SweptAxis::of(const Problem& p) const {
  switch (dim) {
    case Dim::kM: return p.m;
    case Dim::kK: return p.k;
    case Dim::kSquare:
    case Dim::kN: break;
  }
  return p.n;
}

namespace {

std::array<std::set<int64_t>, 3> distinct_dims(const std::vector<StoredPoint>& points) {
  std::array<std::set<int64_t>, 3> values;
  for (const StoredPoint& p : points)
    for (int d = 0; d < 3; ++d) values[size_t(d)].insert(dim_value(p.key.problem, d));
  return values;
}

SweptAxis axis_of(int dim, const std::array<std::set<int64_t>, 3>& values) {
  SweptAxis axis;
  axis.dim = dim == 0 ? SweptAxis::Dim::kM : dim == 1 ? SweptAxis::Dim::kN : SweptAxis::Dim::kK;
  axis.name = std::string(kDimNames[size_t(dim)]);
  std::vector<std::string> fixed;
  for (int d = 0; d < 3; ++d) {
    if (d != dim && values[size_t(d)].size() == 1)
      fixed.push_back(fmt::format("{} = {}", kDimNames[size_t(d)], *values[size_t(d)].begin()));
  }
  axis.label = fixed.empty() ? fmt::format("{} [elements]", axis.name)
                             : fmt::format("{} ({}) [elements]", axis.name, fmt::join(fixed, ", "));
  return axis;
}

std::string varying_text(const std::vector<int>& varying, const std::array<std::set<int64_t>, 3>& values) {
  std::vector<std::string> parts;
  for (int d : varying) parts.push_back(fmt::format("{} ({} sizes)", kDimNames[size_t(d)], values[size_t(d)].size()));
  return fmt::format("{}", fmt::join(parts, " and "));
}

}  // namespace

SweptAxis swept_axis(const std::vector<StoredPoint>& points, const std::string& command) {
  const auto values = distinct_dims(points);
  const bool square = std::all_of(points.begin(), points.end(), [](const StoredPoint& p) {
    return p.key.problem.m == p.key.problem.n && p.key.problem.n == p.key.problem.k;
  });
  if (square) {
    SweptAxis axis;
    axis.dim = SweptAxis::Dim::kSquare;
    axis.name = "n";
    axis.label = "n (M = N = K = n) [elements]";
    return axis;
  }
  std::vector<int> varying;
  for (int d = 0; d < 3; ++d)
    if (values[size_t(d)].size() > 1) varying.push_back(d);
  if (varying.empty()) return axis_of(1, values);
  if (varying.size() == 1) return axis_of(varying.front(), values);
  throw usage_error(fmt::format("--m/--n/--k: {} needs one swept size, and the selection varies {}; fix the others "
                                "(e.g. --m 4096 --k 4096 --n 1..8192), or draw two with plot heatmap",
                                command, varying_text(varying, values)));
}

GridAxes grid_axes(const std::vector<StoredPoint>& points, const std::string& command) {
  const auto values = distinct_dims(points);
  std::vector<int> varying;
  for (int d = 0; d < 3; ++d)
    if (values[size_t(d)].size() > 1) varying.push_back(d);
  if (varying.size() != 2) {
    throw usage_error(fmt::format("--m/--n/--k: {} needs two sizes that vary and one fixed, and the selection varies "
                                  "{}; select a grid (e.g. --m 256..8192:256 --n 256..8192:256 --k 4096)",
                                  command, varying.empty() ? "none" : varying_text(varying, values)));
  }
  GridAxes g;
  g.y = axis_of(varying[0], values);
  g.x = axis_of(varying[1], values);
  const int fixed = 3 - varying[0] - varying[1];
  g.fixed = fmt::format("{} = {}", kDimNames[size_t(fixed)], *values[size_t(fixed)].begin());
  g.x.label = fmt::format("{} [elements]", g.x.name);
  g.y.label = fmt::format("{} [elements]", g.y.name);
  return g;
}

std::string series_name(const PointKey& key) { return std::string(to_string(key.backend)) + " " + key.algo; }

}  // namespace shapescope
