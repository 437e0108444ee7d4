// Kernel symbols as people read them: CUPTI's records and the driver's function names are mangled.
#pragma once
#include <string>

namespace shapescope {

// The demangled form of an Itanium-mangled symbol ("_Z..."); any other name, or one that does not
// demangle, as it is. Null gives "".
std::string demangle(const char* name);

}  // namespace shapescope
