// Every GPU a learner has, proven on the one at hand (docs/contract.md, "Device profiles"):
//   RunsExactlyWhereItsRequirementIsMet
//     every registered step at its small test size under every shipped profile (LADDER_DEVICE_PROFILE:
//     v100, t4, a100, rtx3060, l4, rtx4090, rtx5090). Where the profile's architecture meets the
//     step's declared requirement (add_step NEEDS) the step must verify, taking every decision
//     (tile, grid) as it would on that GPU; where it does not, the step must exit 2 with its
//     "unsupported: <id> needs ..." line. Nothing else passes: not a refusal on a GPU that meets
//     the requirement, not a run on one that lacks it.
//   DocumentedDefaults
//     the choices the chapters' "On other GPUs" tables show for the tunable steps at their default
//     sizes, under each profile, asserted (they were measured on an H100, whose occupancy calculator
//     the profiles cap, so the test runs where the real GPU is sm_90).
// A profile runs the kernels on the real GPU, so a step whose code used an instruction its
// declaration does not cover would still verify here: the CPU test
// StepContract.DeclaredRequirementCoversItsInstructions reads each step's SASS for that.
#include "tests/step_runner.h"

#include "common/device.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <tuple>

namespace {

std::vector<std::string> profile_keys() {
  std::vector<std::string> keys;
  for (const ladder::DeviceProfile* p : ladder::known_device_profiles()) keys.push_back(p->key);
  return keys;
}

bool is_cpu_step(const std::string& id) { return id.size() > 4 && id.substr(id.size() - 4) == "_cpu"; }

using Param = std::tuple<std::string, std::string>;  // step id, profile key
class DeviceProfiles : public testing::TestWithParam<Param> {};

TEST_P(DeviceProfiles, RunsExactlyWhereItsRequirementIsMet) {
  SKIP_UNDER_AN_OUTER_PROFILE();  // first: a skip that needs no CUDA start
  REQUIRE_GPU();
  const auto& [id, key] = GetParam();
  const std::vector<std::string> env = {"LADDER_DEVICE_PROFILE=" + key};
  auto args = ladder_test::test_size(id);
  args.insert(args.end(), {"--json", "--no-ceiling", "--reps", "1", "--warmup", "0", "--seed",
                           std::to_string(ladder_test::fresh_seed())});
  const auto r = ladder_test::run_step(id, args, env);
  const ladder_test::Verdict v = ladder_test::judge(id, r, env);
  const ladder_test::SeenDevice dev = ladder_test::seen_device(env);
  const ladder::Requirement needs = ladder_test::requirement_of(id);
  if (needs.met_by(dev.cc_major, dev.cc_minor)) {
    ASSERT_EQ(v.kind, ladder_test::Verdict::verified)
        << id << " must run under " << key << " (" << dev.sm() << " meets " << needs.text() << "): " << v.reason
        << r.output;
    if (!is_cpu_step(id)) {
      EXPECT_NE(r.json.find("\"device_profile\":\"" + key + "\""), std::string::npos) << r.json;
    }
  } else {
    EXPECT_EQ(v.kind, ladder_test::Verdict::skipped)
        << id << " must exit 2 naming " << needs.arch() << " under " << key << " (" << dev.sm() << ")\n"
        << v.reason << r.output;
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllSteps, DeviceProfiles,
    testing::Combine(testing::ValuesIn(ladder_test::all_steps()), testing::ValuesIn(profile_keys())),
    [](const testing::TestParamInfo<Param>& p) {
      const std::string& id = std::get<0>(p.param);
      return ladder_test::param_name(id, ladder_test::folder_of(id) + "_" + std::get<1>(p.param));
    });

// What the tunable steps choose at their default sizes, per profile ("" = the H100 itself): the
// chapters' "On other GPUs" tables (scripts/profile_matrix.sh), as choice names (the record's
// "choice" up to its first ':' or " (").
struct Documented {
  const char* step;
  const char* profile;
  const char* choice;
};
const Documented kDocumented[] = {
    {"sgemm/06_2d_retuned", "", "64x128x8_4x4"},
    {"sgemm/06_2d_retuned", "t4", "64x128x8_4x4"},
    {"sgemm/09_pipelined", "", "128x256x32_8x16_w64x64_s3"},
    {"sgemm/09_pipelined", "a100", "128x256x32_8x16_w64x64_s3"},
    {"sgemm/09_pipelined", "rtx3060", "128x256x16_8x16_w64x64_s2"},
    {"sgemm/09_pipelined", "l4", "128x256x16_8x16_w64x64_s2"},
    {"sgemm/09_pipelined", "rtx4090", "128x256x16_8x16_w64x64_s2"},
    {"sgemm/09_pipelined", "rtx5090", "128x256x16_8x16_w64x64_s2"},
    {"sgemm/tf32_02_mma_sync", "", "128x128x32_s3"},
    {"sgemm/tf32_02_mma_sync", "a100", "128x128x32_s2"},
    {"sgemm/tf32_02_mma_sync", "rtx3060", "128x128x32_s3"},
    {"sgemm/tf32_02_mma_sync", "rtx5090", "128x128x32_s3"},
    {"sgemm/tf32_03_wgmma_tma", "", "128x128x32_s3"},
    {"sgemm/tf32_04_wgmma_specialized", "", "256x128x32_s4"},
    {"transpose/07_sector_aligned", "", "64x128_a16"},
    {"transpose/07_sector_aligned", "t4", "64x64_a16"},
    {"transpose/07_sector_aligned", "a100", "64x128_a16"},
    {"transpose/08_grid_order", "", "64x128_a16"},
    {"transpose/08_grid_order", "t4", "64x64_a16"},
    {"transpose/08_grid_order", "rtx3060", "64x128_a16"},
    {"separable_conv/08_register_blocked", "", "128x32_p4"},
    {"separable_conv/08_register_blocked", "v100", "128x64_p4"},
    {"separable_conv/08_register_blocked", "t4", "128x32_p4"},
    {"separable_conv/08_register_blocked", "a100", "128x32_p4"},
    {"separable_conv/08_register_blocked", "rtx3060", "128x64_p4"},
    {"separable_conv/09_fused", "", "128x32_p4"},
    {"separable_conv/09_fused", "t4", "128x32_p4"},
    {"separable_conv/09_fused", "rtx3060", "128x64_p4"},
    {"separable_conv/09_fused", "rtx5090", "128x64_p4"},
    {"separable_conv/10_strip_pipeline", "", "128x32_p4"},
    {"separable_conv/10_strip_pipeline", "a100", "128x32_p4"},
    {"separable_conv/11_compiled_taps", "", "K = 17 compiled in"},
};

class DocumentedDefaults : public testing::TestWithParam<Documented> {};

TEST_P(DocumentedDefaults, TheChapterTablesChoice) {
  SKIP_UNDER_AN_OUTER_PROFILE();  // first: a skip that needs no CUDA start
  REQUIRE_GPU();
  const Documented& d = GetParam();
  const ladder_test::SeenDevice real = ladder_test::seen_device({"LADDER_DEVICE_PROFILE="});
  if (real.cc_major != 9 || real.cc_minor != 0)
    GTEST_SKIP() << "the documented choices were measured on an sm_90 GPU; this one is " << real.sm();
  if (ladder_test::step_path(d.step).empty()) GTEST_SKIP() << d.step << " is not in this build";
  const std::vector<std::string> env = {std::string("LADDER_DEVICE_PROFILE=") + d.profile};
  const auto r = ladder_test::run_step(d.step, {"--json", "--no-ceiling", "--no-verify", "--reps", "1", "--warmup", "0"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(ladder_test::choice_name(r.json), d.choice)
      << d.step << " under " << (*d.profile ? d.profile : "no profile") << " chose otherwise than its chapter says ("
      << d.choice << "): " << r.json;
}

INSTANTIATE_TEST_SUITE_P(Chapters, DocumentedDefaults, testing::ValuesIn(kDocumented),
                         [](const testing::TestParamInfo<Documented>& p) {
                           return ladder_test::param_name(p.param.step, *p.param.profile ? p.param.profile : "h100");
                         });

}  // namespace
