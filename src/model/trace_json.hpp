// Reading a PyTorch profiler trace's events (Chrome trace JSON), shared by the trace's readers
// (trace_import.cpp, trace_casts.cpp, trace_clocks.cpp): a member as text, number or integer id
// (absent or of another type: empty), the thread an event ran on, and which categories are CPU ops.
#pragma once
#include <nlohmann/json.hpp>
#include <cstdint>
#include <optional>
#include <string>

namespace shapescope::trace_json {

inline std::string text_of(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

inline std::optional<double> number_of(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

inline std::optional<int64_t> id_of(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int64_t>();
}

// "pid/tid": ops on one thread nest or follow each other.
inline std::string thread_of(const nlohmann::json& event) {
  const auto pid = event.find("pid"), tid = event.find("tid");
  return (pid != event.end() ? pid->dump() : "") + "/" + (tid != event.end() ? tid->dump() : "");
}

// An operator event, as the profiler's versions name its category.
inline bool is_cpu_op(const std::string& cat) { return cat == "cpu_op" || cat == "Operator" || cat == "operator"; }

}  // namespace shapescope::trace_json
