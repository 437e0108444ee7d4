#include "model/kernel_name.hpp"

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace shapescope {

namespace {

using Tokens = std::vector<std::string_view>;

// No tile, stage count, cluster or alignment comes near this; a longer number in a name is not
// one of them, and refusing it keeps every later product far from int overflow.
constexpr int kMaxNumber = 1 << 20;

// CUTLASS 3 mainloop/kernel-schedule words. The tokens after "alignN" mix these with epilogue
// fusions ("bias_f32_relu") and epilogue schedules ("epi_tma"); only these describe the schedule.
constexpr std::array<std::string_view, 9> kCutlass3xScheduleWords = {
    "warpspecialized", "cooperative", "pingpong", "cpasync", "1sm", "2sm", "tma",
    "streamk",         "persistent"};

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

bool is_identifier(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!is_digit(c) && !is_lower(c) && !is_upper(c) && c != '_') return false;
  }
  return true;
}

bool is_lower_alnum(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!is_digit(c) && !is_lower(c)) return false;
  }
  return true;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

std::optional<int> parse_number(std::string_view text) {
  if (text.empty()) return std::nullopt;
  int value = 0;
  for (char c : text) {
    if (!is_digit(c)) return std::nullopt;
    value = value * 10 + (c - '0');
    if (value > kMaxNumber) return std::nullopt;
  }
  return value;
}

// "128x256" (N = 2) or "128x256x64" (N = 3): exactly N numbers joined by 'x', nothing else.
template <std::size_t N>
std::optional<std::array<int, N>> parse_dims(std::string_view text) {
  std::array<int, N> dims{};
  for (std::size_t i = 0; i < N; ++i) {
    const bool last = i + 1 == N;
    const std::size_t end = last ? text.size() : text.find('x');
    if (end == std::string_view::npos) return std::nullopt;
    const std::optional<int> value = parse_number(text.substr(0, end));
    if (!value) return std::nullopt;
    dims[i] = *value;
    text.remove_prefix(last ? end : end + 1);
  }
  return dims;
}

// parse_dims on what follows a fixed prefix ("tilesize128x128x32").
template <std::size_t N>
std::optional<std::array<int, N>> parse_prefixed_dims(std::string_view token,
                                                      std::string_view prefix) {
  if (!starts_with(token, prefix)) return std::nullopt;
  return parse_dims<N>(token.substr(prefix.size()));
}

std::optional<int> parse_prefixed_number(std::string_view token, std::string_view prefix) {
  if (!starts_with(token, prefix)) return std::nullopt;
  return parse_number(token.substr(prefix.size()));
}

// "sm90" -> 90; an architecture-specific suffix ("sm90a") names the same architecture.
std::optional<int> parse_sm(std::string_view token) {
  if (!starts_with(token, "sm")) return std::nullopt;
  token.remove_prefix(2);
  if (!token.empty() && is_lower(token.back())) token.remove_suffix(1);
  return parse_number(token);
}

// Operand-layout tokens are made of n/t only ("nn", "tnn", "NNT").
bool is_layout(std::string_view token, std::size_t min_size, std::size_t max_size) {
  if (token.size() < min_size || token.size() > max_size) return false;
  for (char c : token) {
    if (c != 'n' && c != 't' && c != 'N' && c != 'T') return false;
  }
  return true;
}

Tokens split_tokens(std::string_view name) {
  Tokens tokens;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = name.find('_', start);
    if (end == std::string_view::npos) {
      tokens.push_back(name.substr(start));
      return tokens;
    }
    tokens.push_back(name.substr(start, end - start));
    start = end + 1;
  }
}

// The digits of an instruction in a "...gemm" token: "s16816gemm" -> "16816", "sgemm" -> "".
std::string_view instruction_digits(std::string_view gemm_token) {
  std::size_t begin = 0;
  while (begin < gemm_token.size() && is_lower(gemm_token[begin])) ++begin;
  std::size_t end = begin;
  while (end < gemm_token.size() && is_digit(gemm_token[end])) ++end;
  return gemm_token.substr(begin, end - begin);
}

std::size_t find_gemm_token(const Tokens& tokens, std::size_t from) {
  for (std::size_t i = from; i < tokens.size(); ++i) {
    if (ends_with(tokens[i], "gemm")) return i;
  }
  return tokens.size();
}

bool valid_tile(int m, int n) { return m > 0 && n > 0; }

// nvjet_sm90_tst_256x128_64x4_1x4_h_bz_coopA_NNT, nvjet_hsh_... (no architecture token).
bool parse_nvjet(const Tokens& tokens, KernelTile& tile) {
  std::size_t i = 1;
  if (i < tokens.size()) {
    if (const std::optional<int> sm = parse_sm(tokens[i])) {
      tile.sm = *sm;
      ++i;
    }
  }
  // The data-type token ("tst", "hsh", "qqtst") varies; anything lowercase may stand there.
  while (i < tokens.size() && !parse_dims<2>(tokens[i])) {
    if (!is_lower_alnum(tokens[i])) return false;
    ++i;
  }
  if (i + 2 >= tokens.size()) return false;
  const auto cta = parse_dims<2>(tokens[i]);
  const auto k_stages = parse_dims<2>(tokens[i + 1]);
  const auto cluster = parse_dims<2>(tokens[i + 2]);
  if (!cta || !k_stages || !cluster || !valid_tile((*cta)[0], (*cta)[1])) return false;
  tile.tile_m = (*cta)[0];
  tile.tile_n = (*cta)[1];
  tile.tile_k = (*k_stages)[0];
  tile.stages = (*k_stages)[1];
  tile.cluster_m = (*cluster)[0];
  tile.cluster_n = (*cluster)[1];
  // h/v and bz are left out on purpose: their meaning is not documented.
  for (std::size_t j = i + 3; j < tokens.size(); ++j) {
    if (starts_with(tokens[j], "coop")) tile.schedule = std::string(tokens[j]);
    if (tokens[j] == "splitK") tile.split_k = true;
  }
  if (i + 3 < tokens.size() && is_layout(tokens.back(), 2, 3)) {
    tile.layout = std::string(tokens.back());
  }
  return true;
}

// cutlass_80_tensorop_bf16_s16816gemm_bf16_128x256_64x3_nn_align2,
// cutlass_75_tensorop_s1688gemm_bf16_64x64_nn_align1 (no K-block/stages),
// cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_nn_align2,
// cutlass_tensorop_f16_s16816gemm_f16_256x128_32x3_tn_align8 (CUTLASS library, no architecture).
bool parse_cutlass2(const Tokens& tokens, KernelTile& tile) {
  std::size_t i = 1;
  if (i < tokens.size()) {
    if (const std::optional<int> sm = parse_number(tokens[i])) {
      tile.sm = *sm;
      ++i;
    }
  }
  const std::size_t gemm = find_gemm_token(tokens, i);
  if (gemm == tokens.size()) return false;  // a convolution or another operation
  for (std::size_t j = i; j < gemm; ++j) {
    if (tokens[j] == "wmma") tile.wmma = true;
  }
  tile.instruction = std::string(instruction_digits(tokens[gemm]));
  // The output data type and fused epilogues ("relu") stand between the instruction and the tile.
  std::size_t j = gemm + 1;
  while (j < tokens.size() && !parse_dims<2>(tokens[j])) ++j;
  if (j == tokens.size()) return false;
  const auto cta = parse_dims<2>(tokens[j]);
  if (!valid_tile((*cta)[0], (*cta)[1])) return false;
  tile.tile_m = (*cta)[0];
  tile.tile_n = (*cta)[1];
  ++j;
  if (j < tokens.size()) {
    if (const auto k_stages = parse_dims<2>(tokens[j])) {
      tile.tile_k = (*k_stages)[0];
      tile.stages = (*k_stages)[1];
      ++j;
    }
  }
  for (; j < tokens.size(); ++j) {
    if (tile.layout.empty() && is_layout(tokens[j], 2, 3)) tile.layout = std::string(tokens[j]);
    if (tile.align == 0) {
      if (const std::optional<int> align = parse_prefixed_number(tokens[j], "align")) {
        tile.align = *align;
      }
    }
    if (tokens[j] == "splitK" || tokens[j] == "splitk") tile.split_k = true;
  }
  return true;
}

// cutlass3x_sm90_tensorop_gemm_bf16_bf16_f32_bf16_bf16_128x256x64_1x2x1_0_tnn_align8_
// warpspecialized_cooperative_epi_tma; the instruction may be spelled in the gemm token
// ("s64x128x16gemm").
bool parse_cutlass3x(const Tokens& tokens, KernelTile& tile) {
  std::size_t i = 1;
  if (i < tokens.size()) {
    if (const std::optional<int> sm = parse_sm(tokens[i])) {
      tile.sm = *sm;
      ++i;
    }
  }
  const std::size_t gemm = find_gemm_token(tokens, i);
  if (gemm == tokens.size()) return false;
  {
    std::string_view shape = tokens[gemm];
    while (!shape.empty() && is_lower(shape.front())) shape.remove_prefix(1);
    std::size_t end = 0;
    while (end < shape.size() && (is_digit(shape[end]) || shape[end] == 'x')) ++end;
    if (parse_dims<3>(shape.substr(0, end))) tile.instruction = std::string(shape.substr(0, end));
  }
  // Data types stand between the gemm token and the tile; none of them is all digits and 'x'.
  std::size_t j = gemm + 1;
  while (j < tokens.size() && !parse_dims<3>(tokens[j])) ++j;
  if (j == tokens.size()) return false;
  const auto cta = parse_dims<3>(tokens[j]);
  if (!valid_tile((*cta)[0], (*cta)[1])) return false;
  tile.tile_m = (*cta)[0];
  tile.tile_n = (*cta)[1];
  tile.tile_k = (*cta)[2];
  ++j;
  if (j < tokens.size()) {
    if (const auto cluster = parse_dims<3>(tokens[j])) {
      tile.cluster_m = (*cluster)[0];
      tile.cluster_n = (*cluster)[1];
      tile.cluster_k = (*cluster)[2];
      ++j;
    }
  }
  if (j < tokens.size()) {
    if (const std::optional<int> stages = parse_number(tokens[j])) {
      tile.stages = *stages;
      ++j;
    }
  }
  if (j < tokens.size() && is_layout(tokens[j], 2, 3)) tile.layout = std::string(tokens[j++]);
  if (j < tokens.size()) {
    if (const std::optional<int> align = parse_prefixed_number(tokens[j], "align")) {
      tile.align = *align;
      ++j;
    }
  }
  for (; j < tokens.size(); ++j) {
    bool schedule_word = false;
    for (std::string_view word : kCutlass3xScheduleWords) schedule_word |= tokens[j] == word;
    if (!schedule_word) break;
    if (!tile.schedule.empty()) tile.schedule += '_';
    tile.schedule += tokens[j];
  }
  return true;
}

// sm80_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x128x32_stage4_warpsize2x2x1_
// tensor16x8x16_kernel; sm90 names carry cgasize instead of stage and tensor.
bool parse_xmma(const Tokens& tokens, KernelTile& tile) {
  if (tokens.size() < 3 || tokens[2] != "gemm") return false;  // fprop/dgrad are convolutions
  bool have_tile = false;
  for (std::size_t j = 3; j < tokens.size(); ++j) {
    const std::string_view token = tokens[j];
    if (const auto cta = parse_prefixed_dims<3>(token, "tilesize")) {
      if (have_tile || !valid_tile((*cta)[0], (*cta)[1])) return false;
      tile.tile_m = (*cta)[0];
      tile.tile_n = (*cta)[1];
      tile.tile_k = (*cta)[2];
      have_tile = true;
    } else if (const std::optional<int> stages = parse_prefixed_number(token, "stage")) {
      tile.stages = *stages;
    } else if (const auto cluster = parse_prefixed_dims<3>(token, "cgasize")) {
      tile.cluster_m = (*cluster)[0];
      tile.cluster_n = (*cluster)[1];
      tile.cluster_k = (*cluster)[2];
    } else if (parse_prefixed_dims<3>(token, "tensor")) {
      tile.instruction = std::string(token.substr(6));
    } else if (!have_tile && tile.layout.empty() && token.size() == 2 && is_layout(token, 2, 2)) {
      tile.layout = std::string(token);
    }
  }
  return have_tile;
}

// ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_nn, ampere_sgemm_128x64_nn,
// turing_fp16_s1688gemm_fp16_128x128_ldg8_f2f_nn, volta_h884gemm_64x64_ldg8_nn.
bool parse_legacy(const Tokens& tokens, KernelTile& tile) {
  const std::size_t gemm = find_gemm_token(tokens, 1);
  if (gemm == tokens.size()) return false;
  tile.instruction = std::string(instruction_digits(tokens[gemm]));
  std::size_t j = gemm + 1;
  while (j < tokens.size() && !parse_dims<2>(tokens[j])) ++j;
  if (j == tokens.size()) return false;
  const auto cta = parse_dims<2>(tokens[j]);
  if (!valid_tile((*cta)[0], (*cta)[1])) return false;
  tile.tile_m = (*cta)[0];
  tile.tile_n = (*cta)[1];
  for (++j; j < tokens.size(); ++j) {
    if (tokens[j] == "stages" && j + 1 < tokens.size()) {
      if (const auto k_stages = parse_dims<2>(tokens[j + 1])) {
        tile.tile_k = (*k_stages)[0];
        tile.stages = (*k_stages)[1];
        ++j;
        continue;
      }
    }
    if (tile.layout.empty() && is_layout(tokens[j], 2, 2)) tile.layout = std::string(tokens[j]);
  }
  return true;
}

// Older cuBLAS names start with the architecture's name rather than its number.
std::optional<int> legacy_sm(std::string_view family) {
  if (family == "ampere") return 80;
  if (family == "turing") return 75;
  if (family == "volta") return 70;
  return std::nullopt;
}

// A procedural name (one identifier that spells out its configuration). Sets the family when the
// prefix is one we know, and returns whether a tile was read.
bool parse_procedural(std::string_view name, KernelTile& tile) {
  const Tokens tokens = split_tokens(name);
  const std::string_view first = tokens.front();
  if (first == "nvjet") {
    tile.family = "nvjet";
    return parse_nvjet(tokens, tile);
  }
  if (first == "cutlass3x") {
    tile.family = "cutlass3x";
    return parse_cutlass3x(tokens, tile);
  }
  if (first == "cutlass") {
    tile.family = "cutlass2";
    return parse_cutlass2(tokens, tile);
  }
  if (tokens.size() > 1 && tokens[1] == "xmma") {
    if (const std::optional<int> sm = parse_sm(first)) {
      tile.family = "xmma";
      tile.sm = *sm;
      return parse_xmma(tokens, tile);
    }
  }
  if (const std::optional<int> sm = legacy_sm(first)) {
    // The same prefixes name cuDNN kernels ("volta_scudnn_..."): only a gemm token makes it ours.
    if (find_gemm_token(tokens, 1) == tokens.size()) return false;
    tile.family = std::string(first);
    tile.sm = *sm;
    return parse_legacy(tokens, tile);
  }
  return false;
}

// The name without its parameter list: up to the first '(' outside template arguments, except
// the "(anonymous namespace)" that can appear in a qualified name.
std::string_view without_parameters(std::string_view name) {
  constexpr std::string_view kAnonymous = "(anonymous namespace)";
  int depth = 0;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c == '<' || c == '{') {
      ++depth;
    } else if ((c == '>' || c == '}') && depth > 0) {
      --depth;
    } else if (c == '(' && depth == 0) {
      if (name.substr(i, kAnonymous.size()) == kAnonymous) {
        i += kAnonymous.size() - 1;
        continue;
      }
      return trim(name.substr(0, i));
    }
  }
  return name;
}

// The text between the '<' at `open` and its matching '>' (or the end, for a truncated name).
std::string_view template_arguments(std::string_view name, std::size_t open) {
  int depth = 0;
  for (std::size_t i = open; i < name.size(); ++i) {
    if (name[i] == '<') ++depth;
    if (name[i] == '>' && --depth == 0) return name.substr(open + 1, i - open - 1);
  }
  return name.substr(open + 1);
}

// cuBLAS helper kernels are plain templates whose numbers are undocumented: recognise them by
// name, never read a tile. "cublas" in the name keeps generic names (dot_kernel, reduce_*) from
// other libraries out.
void classify_helper(std::string_view base, bool mentions_cublas, KernelTile& tile) {
  if (base == "splitKreduce_kernel") {
    tile.family = "splitk_reduce";
    tile.auxiliary = true;
  } else if (mentions_cublas && starts_with(base, "reduce_") && ends_with(base, "_kernel")) {
    tile.family = "gemv";
    tile.auxiliary = true;
  } else if (starts_with(base, "gemv") || starts_with(base, "gemmSN_") ||
             (mentions_cublas && base == "dot_kernel")) {
    tile.family = "gemv";
  }
}

KernelTile finish(KernelTile tile, bool known) {
  if (known) {
    tile.known = true;
    return tile;
  }
  KernelTile unknown;
  unknown.family = std::move(tile.family);
  unknown.auxiliary = tile.auxiliary;
  unknown.core = std::move(tile.core);
  return unknown;
}

// "16816" -> "16x8x16", "161616" -> "16x16x16", "1688" -> "16x8x8". The digits are split only
// when exactly one split uses MMA extents (M, N in 8/16/32; K a power of two from 4 to 256);
// otherwise they are shown as spelled.
std::string instruction_shape(std::string_view digits) {
  if (digits.find('x') != std::string_view::npos) return std::string(digits);
  constexpr std::array<std::string_view, 3> kMn = {"8", "16", "32"};
  constexpr std::array<std::string_view, 7> kK = {"4", "8", "16", "32", "64", "128", "256"};
  std::string found;
  int matches = 0;
  for (std::string_view m : kMn) {
    if (!starts_with(digits, m)) continue;
    const std::string_view rest = digits.substr(m.size());
    for (std::string_view n : kMn) {
      if (!starts_with(rest, n)) continue;
      const std::string_view k = rest.substr(n.size());
      for (std::string_view candidate : kK) {
        if (k != candidate) continue;
        ++matches;
        found = std::string(m) + "x" + std::string(n) + "x" + std::string(k);
      }
    }
  }
  return matches == 1 ? found : std::string(digits);
}

}  // namespace

KernelTile parse_kernel_name(std::string_view demangled) {
  KernelTile tile;
  tile.family = "unknown";
  std::string_view name = trim(demangled);
  if (starts_with(name, "void ")) name = trim(name.substr(5));
  const std::string_view head = without_parameters(name);
  tile.core = std::string(head);
  if (head.empty()) return finish(std::move(tile), false);

  const std::size_t open = head.find('<');
  const std::string_view qualified = trim(head.substr(0, open));
  const std::size_t scope = qualified.rfind("::");
  const std::string_view base =
      scope == std::string_view::npos ? qualified : qualified.substr(scope + 2);

  if (open != std::string_view::npos &&
      (qualified == "cutlass::Kernel2" || qualified == "cutlass::Kernel" ||
       qualified == "cutlass::device_kernel")) {
    // CUTLASS launches every kernel through one of these wrappers; the configuration is in the
    // wrapped type, which cuBLAS names procedurally.
    const std::string_view inner = trim(template_arguments(head, open));
    if (is_identifier(inner)) {
      tile.core = std::string(inner);
      const bool known = parse_procedural(inner, tile);
      return finish(std::move(tile), known);
    }
    if (starts_with(inner, "cutlass::reduction::kernel::ReduceSplitK")) {
      tile.family = "splitk_reduce";
      tile.auxiliary = true;
    }
    return finish(std::move(tile), false);
  }

  if (open == std::string_view::npos && is_identifier(head)) {
    const bool known = parse_procedural(head, tile);
    if (known || tile.family != "unknown") return finish(std::move(tile), known);
  }
  classify_helper(base, name.find("cublas") != std::string_view::npos, tile);
  return finish(std::move(tile), false);
}

std::string describe(const KernelTile& tile) {
  if (!tile.known) {
    if (tile.family == "splitk_reduce") return "split-K reduction, auxiliary, no tile";
    if (tile.family == "gemv") {
      return tile.auxiliary ? "cuBLAS reduction step, auxiliary, no tile"
                            : "cuBLAS gemv-style kernel, no tile in the name";
    }
    return "unknown";
  }
  std::string out = "tile " + std::to_string(tile.tile_m) + "x" + std::to_string(tile.tile_n);
  if (tile.tile_k > 0) out += ", K-block " + std::to_string(tile.tile_k);
  if (tile.stages > 0) {
    out += ", " + std::to_string(tile.stages) + (tile.stages == 1 ? " stage" : " stages");
  }
  if (tile.cluster_m == 0 || tile.cluster_n == 0 || tile.cluster_k == 0) {
    out += ", cluster set at launch";
  } else if (tile.cluster_m != 1 || tile.cluster_n != 1 || tile.cluster_k != 1) {
    out += ", cluster " + std::to_string(tile.cluster_m) + "x" + std::to_string(tile.cluster_n);
    if (tile.cluster_k != 1) out += "x" + std::to_string(tile.cluster_k);
  }
  if (tile.align > 0) {
    const std::string align = std::to_string(tile.align);
    out += ", " + align + "-element alignment (align" + align + ")";
  }
  if (!tile.instruction.empty()) {
    // CUTLASS 2 tensor-op kernels issue mma.sync and its wmma kernels wmma; for the others the
    // name gives the shape but not the PTX instruction.
    const char* kind = tile.wmma ? "wmma" : tile.family == "cutlass2" ? "mma.sync" : "MMA";
    out += std::string(", ") + kind + " " + instruction_shape(tile.instruction);
    if (tile.sm > 0) out += " (sm" + std::to_string(tile.sm) + ")";
  }
  if (tile.split_k) out += ", split-K";
  return out;
}

namespace {
// Longer names are cut: a table cell, a plot label.
constexpr size_t kMaxKernelNameChars = 72;
}  // namespace

// "void cutlass::Kernel2<cutlass_80_tensorop_..._align2>(Params)" -> "cutlass_80_tensorop_..._align2",
// "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT" stays: the template arguments and parameter
// lists make names hundreds of characters long, but CUTLASS's generic entry points
// (cutlass::Kernel, Kernel2, device_kernel) carry the name that matters in their first argument.
std::string short_kernel_name(const std::string& name) {
  std::string_view text = name;
  constexpr std::string_view kVoid = "void ";
  if (text.substr(0, kVoid.size()) == kVoid) text.remove_prefix(kVoid.size());
  size_t cut = text.find_first_of("<(");
  if (cut != std::string_view::npos && cut > 0) {
    const std::string_view outer = text.substr(0, cut);
    if (text[cut] == '<' && (outer == "cutlass::Kernel" || outer == "cutlass::Kernel2" ||
                             outer == "cutlass::device_kernel")) {
      std::string_view inner = text.substr(cut + 1);
      const size_t end = inner.find_first_of("<,>(");
      if (end != std::string_view::npos && end > 0) inner = inner.substr(0, end);
      while (!inner.empty() && inner.back() == ' ') inner.remove_suffix(1);
      if (!inner.empty()) return std::string(inner.substr(0, kMaxKernelNameChars));
    }
    text = outer;
  }
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return std::string(text.substr(0, kMaxKernelNameChars));
}

}  // namespace shapescope
