// Which processes on a GPU count as others for the health check (device/gpu_processes.hpp): this
// process and the ones that started it do not; the ancestors from /proc, and the case of a container
// whose process ids are not the host's NVML lists.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "device/gpu_processes.hpp"

namespace shapescope {
namespace {

TEST(GpuProcesses, ParentFromStatReadsTheFieldAfterTheState) {
  EXPECT_EQ(parent_from_stat("123 (python3) S 45 123 123 0 -1 4194560 ...\n"), 45u);
  // A command name may hold spaces and parentheses: the fields start after the last ')'.
  EXPECT_EQ(parent_from_stat("77 (a) b (c)) R 9 1 1 0"), 9u);
  EXPECT_EQ(parent_from_stat("1 (init) S 0 1 1"), 0u);
  for (const char* bad : {"", "12 python S 4 1", "1 (x) S", "1 (x) S -3 1", "1 (x) S 4x 1", "1 (x)S 4 1"})
    EXPECT_EQ(parent_from_stat(bad), std::nullopt) << bad;
}

TEST(GpuProcesses, AncestorChainEndsAtNoParentAnUnreadableOneOrARepeat) {
  const std::map<unsigned, unsigned> parents = {{10, 7}, {7, 3}, {3, 1}, {1, 0}, {5, 6}, {6, 5}, {20, 21}};
  const auto parent_of = [&](unsigned pid) -> std::optional<unsigned> {
    const auto it = parents.find(pid);
    if (it == parents.end()) return std::nullopt;
    return it->second;
  };
  EXPECT_EQ(ancestor_chain(10, parent_of), (std::vector<unsigned>{7, 3, 1}));
  EXPECT_EQ(ancestor_chain(5, parent_of), (std::vector<unsigned>{6}));
  EXPECT_EQ(ancestor_chain(20, parent_of), (std::vector<unsigned>{21}));
  EXPECT_EQ(ancestor_chain(99, parent_of), (std::vector<unsigned>{}));
}

TEST(GpuProcesses, ThisProcesssAncestorsStartWithItsParent) {
  const std::vector<unsigned> ancestors = ancestor_pids();
  ASSERT_FALSE(ancestors.empty());
  EXPECT_EQ(ancestors.front(), unsigned(getppid()));
  EXPECT_EQ(std::count(ancestors.begin(), ancestors.end(), unsigned(getpid())), 0);
}

TEST(GpuProcesses, HoldingTheDeviceIsAnOpenDescriptorOnItsFile) {
  namespace fs = std::filesystem;
  char folder[] = "/tmp/shapescope-proc-XXXXXX";
  ASSERT_NE(mkdtemp(folder), nullptr);
  const fs::path root = folder;
  fs::create_directories(root / "100" / "fd");
  fs::create_directories(root / "101" / "fd");
  fs::create_directories(root / "103" / "fd");
  fs::create_symlink("/dev/null", root / "100" / "fd" / "0");
  fs::create_symlink("/dev/nvidia1", root / "100" / "fd" / "3");
  fs::create_symlink("/dev/nvidiactl", root / "101" / "fd" / "3");
  fs::create_symlink("/dev/nvidia0", root / "101" / "fd" / "4");
  fs::create_symlink("/dev/nvidia10", root / "103" / "fd" / "5");
  // 102 has no folder: a process that ended or whose descriptors cannot be read holds nothing.
  const std::vector<unsigned> pids = {100, 101, 102, 103};
  EXPECT_EQ(holding_device(pids, 1, root.string()), 1u);
  EXPECT_EQ(holding_device(pids, 0, root.string()), 1u);
  EXPECT_EQ(holding_device(pids, 10, root.string()), 1u);
  EXPECT_EQ(holding_device(pids, 2, root.string()), 0u);
  fs::remove_all(root);
}

TEST(GpuProcesses, AncestorsAreNotOthersWhereTheIdsAreOurs) {
  const auto never = []() -> size_t {
    ADD_FAILURE() << "descriptors read where the ids already say";
    return 0;
  };
  // shapescope.record(): the Python process that recorded the step holds a context and runs us.
  EXPECT_EQ(other_processes_on_gpu({400, 300}, 400, {300, 200, 1}, never), 0u);
  EXPECT_EQ(other_processes_on_gpu({400, 300, 999}, 400, {300, 200, 1}, never), 1u);
  EXPECT_EQ(other_processes_on_gpu({400}, 400, {}, never), 0u);
  EXPECT_EQ(other_processes_on_gpu({400, 999, 998}, 400, {}, never), 2u);
}

TEST(GpuProcesses, InAContainerAncestorsHoldingTheGpuAreNotOthers) {
  size_t holding = 1;
  const auto ancestors_holding = [&] { return holding; };
  // Host ids: none is 400. This process is one of them, its parent holding the GPU another.
  EXPECT_EQ(other_processes_on_gpu({81001, 81000}, 400, {300, 1}, ancestors_holding), 0u);
  EXPECT_EQ(other_processes_on_gpu({81001, 81000, 90000}, 400, {300, 1}, ancestors_holding), 1u);
  holding = 0;
  EXPECT_EQ(other_processes_on_gpu({81001, 81000}, 400, {300, 1}, ancestors_holding), 1u);
  holding = 5;
  EXPECT_EQ(other_processes_on_gpu({81001, 81000}, 400, {300, 1}, ancestors_holding), 0u);
  EXPECT_EQ(other_processes_on_gpu({}, 400, {300, 1}, ancestors_holding), 0u);
}

}  // namespace
}  // namespace shapescope
