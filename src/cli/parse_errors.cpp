// CLI11's refusals in shapescope's words: one line naming the option (or argument) and what is wrong
// with it. CLI11's own wording ("At Most 1 required but received 2", "The following arguments were
// not expected") never reaches the user: each kind of ParseError is read for its option and said again.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <regex>

#include "cli/commands.hpp"

namespace shapescope {
namespace {

// The command the arguments name (check_first_argument has checked it), for "see shapescope CMD --help".
std::string command_of(const std::vector<std::string>& args) {
  return args.empty() || args.front().empty() || args.front()[0] == '-' ? "" : args.front();
}

std::string help_hint(const std::string& command) {
  return fmt::format("see shapescope {}--help", command.empty() ? "" : command + " ");
}

// The options whose value is a range or list of sizes: given twice, the list is what was meant.
bool takes_a_range(const std::string& option) {
  for (const char* name : {"--m", "--n", "--k", "--batch", "--tokens", "--expert-tokens"})
    if (option == name) return true;
  return false;
}

std::string value_kind(const std::string& type) {
  if (type == "INT" || type == "UINT") return "a whole number";
  if (type == "FLOAT") return "a number";
  return "a value";
}

// The first argument, in the order given, that the command did not take.
std::string first_unexpected(CLI::App& app, const std::vector<std::string>& args) {
  std::vector<std::string> left;
  for (CLI::App* command : app.get_subcommands()) {
    const std::vector<std::string> rest = command->remaining(false);
    left.insert(left.end(), rest.begin(), rest.end());
  }
  const std::vector<std::string> own = app.remaining(false);
  left.insert(left.end(), own.begin(), own.end());
  for (size_t i = 1; i < args.size(); ++i)
    if (std::find(left.begin(), left.end(), args[i]) != left.end()) return args[i];
  return left.empty() ? std::string() : left.front();
}

std::string unexpected_text(const std::string& arg, const std::string& command) {
  const std::string of = command.empty() ? "shapescope" : command;
  if (arg.size() > 1 && arg[0] == '-' && !std::isdigit(static_cast<unsigned char>(arg[1])))
    return fmt::format("'{}' is not an option of {} ({})", arg, of, help_hint(command));
  return fmt::format("'{}' is one argument too many for {} ({})", arg, of, help_hint(command));
}

}  // namespace

std::string parse_error_text(const CLI::ParseError& error, CLI::App& app, const std::vector<std::string>& args) {
  const std::string command = command_of(args);
  const std::string what = error.what();
  std::smatch m;
  // ArgumentMismatch: an option given too often, or without its value.
  if (std::regex_match(what, m, std::regex(R"((\S+): At Most (\d+) required but received (\d+))")))
    return fmt::format("{}: given {} times; give it once{} ({})", m[1].str(), m[3].str(),
                       takes_a_range(m[1].str()) ? ", with a list as one value (1..64,128)" : "", help_hint(command));
  if (std::regex_match(what, m, std::regex(R"((\S+): (\d+) required (\S+) missing)")))
    return fmt::format("{}: no value given (it takes {}; {})", m[1].str(), value_kind(m[3].str()), help_hint(command));
  if (std::regex_match(what, m, std::regex(R"((\S+): At least (\d+) required but received (\d+))")) ||
      std::regex_match(what, m, std::regex(R"(Expected (?:exactly|at least) \d+ arguments to (\S+), got \d+)")))
    return fmt::format("{}: no value given ({})", m[1].str(), help_hint(command));
  // RequiredError: a positional argument left out; or no command at all.
  if (std::regex_match(what, m, std::regex(R"(A subcommand is required)")))
    return fmt::format("no command given ({})", help_hint(""));
  if (std::regex_match(what, m, std::regex(R"((\S+) is required)")))
    return fmt::format("{}: missing ({})", m[1].str(), help_hint(command));
  // ExtrasError: an unknown option or a positional argument too many.
  if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr)
    return unexpected_text(first_unexpected(app, args), command);
  // ConversionError: a value that is not of the option's type.
  if (std::regex_match(what, m, std::regex(R"(Could not convert: (\S+) = (.*))")))
    return fmt::format("{}: '{}' is not {}", m[1].str(), m[2].str(), "a number");
  if (std::regex_match(what, m, std::regex(R"(The value (.*) is not an allowed value for (\S+))")))
    return fmt::format("{}: '{}' is not an allowed value ({})", m[2].str(), m[1].str(), help_hint(command));
  if (std::regex_match(what, m, std::regex(R"((\S+): too many inputs for a flag)")) ||
      std::regex_match(what, m, std::regex(R"((\S+): Should be true/false or a number)")) ||
      std::regex_match(what, m, std::regex(R"((\S+) was given a disallowed flag override)")))
    return fmt::format("{}: a flag takes no value ({})", m[1].str(), help_hint(command));
  if (std::regex_match(what, m, std::regex(R"((\S+) requires (\S+))")))
    return fmt::format("{}: needs {} too ({})", m[1].str(), m[2].str(), help_hint(command));
  if (std::regex_match(what, m, std::regex(R"((\S+) excludes (\S+))")))
    return fmt::format("{}: cannot be given with {} ({})", m[1].str(), m[2].str(), help_hint(command));
  // ValidationError: our own validators' words, already "--option: 'value' is not ...".
  if (dynamic_cast<const CLI::ValidationError*>(&error) != nullptr) return what;
  // Anything else CLI11 may say: the arguments as given, never its wording.
  return fmt::format("the command line cannot be read as shapescope {}({})", command.empty() ? "" : command + " ",
                     help_hint(command));
}

}  // namespace shapescope
