// Option checks several commands share: each bad value is one line naming the option and the value.
#include <fmt/format.h>

#include <charconv>

#include "cli/commands.hpp"
#include "common/error.hpp"

namespace shapescope {

void check_db_option(const std::string& db) {
  if (db.empty()) throw usage_error("--db: '' is empty (a store file, e.g. shapescope.db)");
}

void add_device_option(CLI::App* cmd, int& device) {
  // Taken as text so that "-1" or "x" gets a message of ours rather than CLI11's range dump.
  cmd->add_option_function<std::string>(
      "--device",
      [&device](const std::string& text) {
        int value = -1;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (error != std::errc() || end != text.data() + text.size() || value < 0)
          throw usage_error(fmt::format("--device: '{}' is not a CUDA device ordinal (0, 1, ...)", text));
        device = value;
      },
      "CUDA device ordinal")
      ->default_str(std::to_string(device));
}

}  // namespace shapescope
