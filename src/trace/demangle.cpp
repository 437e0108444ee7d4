#include "trace/demangle.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <cstring>

namespace shapescope {

std::string demangle(const char* name) {
  if (name == nullptr) return {};
  // Only Itanium-mangled symbols start with "_Z"; __cxa_demangle would otherwise read a plain
  // kernel name such as "f" as a type and turn it into "float".
  if (std::strncmp(name, "_Z", 2) != 0) return name;
  int status = 0;
  char* demangled = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || demangled == nullptr) {
    std::free(demangled);
    return name;
  }
  std::string text(demangled);
  std::free(demangled);
  return text;
}

}  // namespace shapescope
