// Every GPU a learner has, proven on the one at hand: every registered step of every folder runs at
// its small test size under the device profiles of a T4, an RTX 3060 and an A100
// (LADDER_DEVICE_PROFILE, docs/contract.md "Device profiles"), and either verifies — taking every
// decision (tile, grid, features) as it would on that GPU — or exits 2 with one line naming what it
// needs and what the device has. Never a launch failure, a wrong result or a hang.
//
// A profile runs the kernels on the real GPU, so a step that forgot to check for a feature would
// still verify here and then fail on the real old GPU. The second assertion closes that hole: the
// step's own SASS (cuobjdump, where installed) says which instructions it contains, and a step
// with an instruction the profile's architecture lacks must have refused to run.
#include "tests/step_runner.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>
#include <sys/wait.h>
#include <tuple>

namespace {

struct Profile {
  const char* key;
  int cc;  // major * 10 + minor
};
const Profile kProfiles[] = {{"t4", 75}, {"rtx3060", 86}, {"a100", 80}};

// SASS opcodes that only newer architectures have: the oldest compute capability that runs each,
// and whether it runs on that architecture alone (sm_90a's instructions run on no later GPU).
struct NeedsArch {
  const char* opcode;
  int cc;
  bool exact;
};
const NeedsArch kArchOpcodes[] = {
    {"LDGSTS", 80, false},      // cp.async
    {"HMMA.1684.F32.TF32", 80, false},  // TF32 tensor cores (wmma, mma.sync)
    {"HMMA.1688.F32.TF32", 80, false},
    {"HGMMA", 90, true},        // wgmma
    {"UTMALDG", 90, false},     // TMA loads
};

// The step executable's SASS ("" when cuobjdump is not installed), read once per step.
const std::string& step_sass(const std::string& id) {
  static std::map<std::string, std::string> cache;
  auto it = cache.find(id);
  if (it != cache.end()) return it->second;
  std::string out;
  const std::string cmd = "cuobjdump -sass '" + ladder_test::step_path(id) + "' 2>/dev/null";
  if (std::FILE* p = popen(cmd.c_str(), "r")) {
    char buf[65536];
    size_t got;
    while ((got = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, got);
    const int status = pclose(p);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) out.clear();
  }
  return cache[id] = out;
}

// The first instruction in the step's SASS that `cc` cannot run, or nullptr.
const NeedsArch* missing_instruction(const std::string& id, int cc) {
  const std::string& sass = step_sass(id);
  for (const NeedsArch& n : kArchOpcodes)
    if ((n.exact ? cc != n.cc : cc < n.cc) && sass.find(n.opcode) != std::string::npos) return &n;
  return nullptr;
}

using Param = std::tuple<std::string, int>;  // step id, index into kProfiles
class DeviceProfiles : public testing::TestWithParam<Param> {};

TEST_P(DeviceProfiles, VerifiesOrExitsTwoWithItsReason) {
  REQUIRE_GPU();
  const std::string& id = std::get<0>(GetParam());
  const Profile& profile = kProfiles[std::get<1>(GetParam())];
  auto args = ladder_test::test_size(id);
  args.insert(args.end(), {"--json", "--no-ceiling", "--reps", "1", "--warmup", "0", "--seed",
                           std::to_string(ladder_test::fresh_seed())});
  const auto r = ladder_test::run_step(id, args, {std::string("LADDER_DEVICE_PROFILE=") + profile.key});

  if (r.exit_code == 2) {
    // One line ("error: ..."), before the usage, naming the requirement and what this device has.
    const size_t at = r.output.find("error: ");
    ASSERT_NE(at, std::string::npos) << "exit 2 without an error line:\n" << r.output;
    const std::string first = r.output.substr(at, r.output.find('\n', at) - at);
    EXPECT_TRUE(first.find("needs") != std::string::npos || first.find("runs on") != std::string::npos)
        << "exit 2 without a reason naming the requirement:\n" << r.output;
    EXPECT_NE(first.find("profile " + std::string(profile.key)), std::string::npos)
        << "the reason does not name the device (profile) it refused:\n" << r.output;
    return;
  }
  ASSERT_TRUE(ladder_test::verified_run(r));
  EXPECT_NE(r.json.find(std::string("\"device_profile\":\"") + profile.key + "\""), std::string::npos)
      << r.json;
  if (step_sass(id).empty()) {
    std::printf("note: cuobjdump not found; %s's instructions not checked against sm_%d\n", id.c_str(),
                profile.cc);
    return;
  }
  const NeedsArch* missing = missing_instruction(id, profile.cc);
  EXPECT_EQ(missing, nullptr) << id << " verified under the " << profile.key << " profile (sm_"
                              << profile.cc << ") but its code has " << (missing ? missing->opcode : "")
                              << ", which that GPU cannot run: it must exit 2 there";
}

INSTANTIATE_TEST_SUITE_P(
    AllSteps, DeviceProfiles,
    testing::Combine(testing::ValuesIn(ladder_test::all_steps()),
                     testing::Range(0, static_cast<int>(std::size(kProfiles)))),
    [](const testing::TestParamInfo<Param>& p) {
      const std::string& id = std::get<0>(p.param);
      return ladder_test::param_name(id, ladder_test::folder_of(id) + "_" + kProfiles[std::get<1>(p.param)].key);
    });

}  // namespace
