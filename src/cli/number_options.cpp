// The numbers of every command's options, read as the user wrote them: an integer whole and in
// decimal, within its option's range where it has one, and a real number finite; otherwise one line
// naming the option and the value as given (CLI11 alone reads 99999999999999999999 as
// 9223372036854775807, 010 as 8 and 1e309 as inf).
#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "cli/commands.hpp"
#include "common/error.hpp"

namespace shapescope {
namespace {

// Its own check of the text (named kInRange, which read_integer_options_whole leaves alone), so that
// "--slowest x" names the option's range (1 to 100), not int64's.
constexpr const char* kInRange = "whole number in range";
template <class T>
CLI::Option* add_bounded_option(CLI::App* cmd, const std::string& name, T& value, T low, T high, const std::string& help) {
  return cmd
      ->add_option_function<T>(
          name,
          [&value, name, low, high](const T& given) {
            if (given < low || given > high)
              throw usage_error(fmt::format("{}: {} must be between {} and {}", name, given, low, high));
            value = given;
          },
          help)
      ->default_str(std::to_string(value))
      ->transform(CLI::Validator(
          [low, high](std::string& text) -> std::string {
            long long parsed = 0;
            const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), parsed);
            if (end != text.data() + text.size() || error != std::errc())
              return fmt::format("'{}' is not a whole number from {} to {}", text, low, high);
            if (parsed < low || parsed > high) return fmt::format("{} must be between {} and {}", parsed, low, high);
            text = std::to_string(parsed);  // decimal: CLI11 would read a leading 0 as octal
            return "";
          },
          "", kInRange));
}

}  // namespace

CLI::Option* add_int_option(CLI::App* cmd, const std::string& name, int& value, int low, int high,
                            const std::string& help) {
  return add_bounded_option(cmd, name, value, low, high, help);
}

CLI::Option* add_real_option(CLI::App* cmd, const std::string& name, double& value, double low, double high,
                             const std::string& help) {
  return cmd
      ->add_option_function<double>(
          name,
          [&value, name, low, high](const double& given) {
            if (!(given >= low && given <= high))
              throw usage_error(fmt::format("{}: {:g} must be between {:g} and {:g}", name, given, low, high));
            value = given;
          },
          help)
      ->default_str(fmt::format("{:g}", value));
}

namespace {
// T's whole decimal numbers, passed on as such (CLI11 would read a leading 0 as octal).
template <class T>
CLI::Validator whole_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        T value = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (error == std::errc() && end == text.data() + text.size()) {
          text = std::to_string(value);
          return "";
        }
        if (error == std::errc::result_out_of_range && end == text.data() + text.size())
          return fmt::format("'{}' is too large (a whole number from {} to {})", text, std::numeric_limits<T>::min(),
                             std::numeric_limits<T>::max());
        return fmt::format("'{}' is not a whole number", text);
      },
      "");
}

// A finite decimal number: "1e309" would be read as inf and "nan" as NaN, which no option means.
CLI::Validator finite_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const char* begin = text.c_str();
        char* end = nullptr;
        const double value = std::strtod(begin, &end);
        if (end == begin || *end != '\0' || std::isspace(static_cast<unsigned char>(text.front())))
          return fmt::format("'{}' is not a number", text);
        if (!std::isfinite(value)) return fmt::format("'{}' is not a finite number", text);
        return "";
      },
      "");
}
}  // namespace

void read_integer_options_whole(CLI::App& app) {
  const CLI::Validator whole_signed = whole_number<int64_t>(), whole_unsigned = whole_number<uint64_t>();
  const CLI::Validator finite = finite_number();
  for (CLI::App* command : app.get_subcommands([](CLI::App*) { return true; })) {
    for (CLI::Option* option : command->get_options([](CLI::Option*) { return true; })) {
      try {
        option->get_validator(kInRange);
        continue;  // a bounded option checks its text itself
      } catch (const CLI::OptionNotFound&) {
      }
      if (option->get_type_name() == "INT") option->transform(whole_signed);
      if (option->get_type_name() == "UINT") option->transform(whole_unsigned);
      if (option->get_type_name() == "FLOAT") option->transform(finite);
    }
  }
}

}  // namespace shapescope
