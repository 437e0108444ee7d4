// Inputs that must be regular files (a store, a trace, a GEMM list, a config): what a path names,
// checked before anything reads it, and an open that never waits. A FIFO opened for reading blocks
// until some process opens its other end, and a device may never end: neither is an input.
#pragma once
#include <optional>
#include <string>

namespace shapescope {

// Why `path` is no input file, as words that follow the path in a message: "is a directory, not a
// file", "is a FIFO (named pipe), not a regular file", "is a character device, not a regular file"
// (block device, socket alike), "is a dangling symbolic link (to 'x')". nullopt for a regular file,
// a link to one, and a path that names nothing at all (what a missing file means is the caller's).
std::optional<std::string> not_a_regular_file(const std::string& path);

// A descriptor of the regular file `path`, opened for reading without blocking on a FIFO (the
// descriptor itself is checked, so a file swapped after a check is still refused). Throws
// usage_error "<origin> <why>" (the words above) or "<origin> cannot be read (<errno text>)".
int open_regular_file(const std::string& path, const std::string& origin);

}  // namespace shapescope
