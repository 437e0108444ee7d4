// Which of the processes NVML lists on a GPU are "other processes" for the health check: not this
// one, and not one of the processes that started it. Plain C++ (reads /proc); no NVML here.
//
// The processes that started shapescope are excluded because they wait on it: a shell, a Python
// script that runs `shapescope profile` with subprocess (shapescope.record() does, and its process
// holds a CUDA context from the step it recorded), `sweep --devices`' parent. Their contexts hold
// memory but run nothing while the child measures, so counting them flagged every point of such a
// run `shared_gpu`. The cost: an ancestor that does run GPU work while shapescope measures (a
// training script that starts a sweep in the background) is not seen; its load still shows in the
// clocks and the sentinel.
//
// NVML gives the host's process ids. Where this process sees them too (its own id is in the list),
// the ancestors are matched by id. In a container with its own PID namespace none of the ids are
// ours: then this process is taken to be one of them (it holds a context while it measures) and so
// is each ancestor that holds the GPU's device file (/dev/nvidia<minor>) open, as a CUDA context does.
#pragma once
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shapescope {

// The parent's id from the text of /proc/<pid>/stat ("123 (python3) S 45 ..."): the field after the
// state, read after the last ')' since a command name may hold spaces and parentheses; nullopt when
// the text is not of that form.
std::optional<unsigned> parent_from_stat(std::string_view stat_text);

// The chain of parents of `pid`, nearest first, through `parent_of`, ending at a process without a
// parent (id 0), one `parent_of` cannot read, or a repeat; at most 256 long.
std::vector<unsigned> ancestor_chain(unsigned pid, const std::function<std::optional<unsigned>(unsigned)>& parent_of);

// The ancestors of this process as /proc (under `proc_root`) shows them.
std::vector<unsigned> ancestor_pids(const std::string& proc_root = "/proc");

// How many of `pids` have a file descriptor open on /dev/nvidia<minor> (their /proc/<pid>/fd links);
// a process whose descriptors cannot be read counts as not holding it.
size_t holding_device(const std::vector<unsigned>& pids, unsigned minor, const std::string& proc_root = "/proc");

// Of the processes NVML lists on a GPU (`listed`, host ids), how many are others: neither `self`
// nor one of `ancestors` when `self` is listed (the ids are ours); otherwise all but this process and
// the `ancestors_holding` ancestors that hold the GPU (a container's namespace), never below 0.
// `ancestors_holding` is asked for only in the second case (it reads every ancestor's descriptors).
size_t other_processes_on_gpu(const std::vector<unsigned>& listed, unsigned self, const std::vector<unsigned>& ancestors,
                              const std::function<size_t()>& ancestors_holding);

}  // namespace shapescope
