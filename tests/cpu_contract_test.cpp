// The step executable's contract (docs/contract.md), checked on every registered step of every folder by
// running it: bad usage -> one line and exit 2, --help -> 0, no device -> 77 (on machines without
// one). New steps are covered by being registered.
#include "tests/step_runner.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>

namespace {

using ladder_test::run_step;

// The folder's size flags, from its ladder_folder() declaration.
std::vector<std::string> size_flags(const std::string& id) {
  const auto v = ladder_test::folder_values(ladder_test::folder_of(id), "size_flags");
  return v.empty() ? std::vector<std::string>{} : ladder_test::split_args(v.front());
}

bool is_cpu_step(const std::string& id) { return id.size() > 4 && id.substr(id.size() - 4) == "_cpu"; }

class StepContract : public testing::TestWithParam<std::string> {};

TEST_P(StepContract, BadUsageExitsTwoWithOneLine) {
  const std::string& id = GetParam();
  std::vector<std::vector<std::string>> bad = {{"--bogus"}, {"--reps", "0"}, {"--seed", "abc"},
                                               {"extra"}, {"--json=yes"}};
  for (const std::string& flag : size_flags(id))
    for (const char* v : {"0", "-5", "abc", "1.5", "99999999999999999999"})
      bad.push_back({flag, v});
  for (const auto& args : bad) {
    auto r = run_step(id, args);
    EXPECT_EQ(r.exit_code, 2) << id << " " << args[0] << "\n" << r.output;
    EXPECT_EQ(r.output.rfind("error: ", 0), 0u) << r.output;
    // One line: the usage starts on the line right after the error line.
    const size_t first_newline = r.output.find('\n');
    ASSERT_NE(first_newline, std::string::npos) << r.output;
    EXPECT_EQ(r.output.compare(first_newline + 1, 6, "usage:"), 0) << id << " " << args[0] << "\n" << r.output;
  }
}

// --help names the step's declared requirement (add_step NEEDS): "requires: sm_80 or newer (cp.async)".
TEST_P(StepContract, HelpExitsZeroAndNamesTheRequirement) {
  auto r = run_step(GetParam(), {"--help"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("--no-ceiling"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("  requires: " + ladder_test::requirement_of(GetParam()).text() + "\n"), std::string::npos)
      << r.output;
}

// The declaration covers the code: every instruction in the step's machine code that not every GPU
// of the suite has (cp.async, TF32 HMMA, fp64 DMMA, TMA, wgmma, setmaxnreg) is one its declared
// requirement implies. A step that used cp.async without declaring NEEDS sm_80 would verify under a T4
// profile on an H100 and then trap on a real T4; here it fails on any machine with cuobjdump (the
// toolkit's full install has it; a CI image with only the compiler skips this test, saying so).
TEST_P(StepContract, DeclaredRequirementCoversItsInstructions) {
  const std::string& id = GetParam();
  if (!ladder_test::cuobjdump_installed()) GTEST_SKIP() << "cuobjdump is not installed: " << id << " not read";
  ASSERT_FALSE(ladder_test::step_sass(id).empty()) << id << ": cuobjdump -sass printed nothing";
  const ladder::Requirement declared = ladder_test::requirement_of(id);
  for (const ladder_test::ArchInstruction& in : ladder_test::arch_instructions_in(id)) {
    // Implied when every GPU that meets the declaration also meets the instruction's need, worked out
    // here rather than by Requirement::met_by, the steps' own run-time check.
    const int have = declared.cc_major * 10 + declared.cc_minor, need = in.needs.cc_major * 10 + in.needs.cc_minor;
    const bool implied = declared.any() && (in.needs.exact ? declared.exact && have == need : have >= need);
    EXPECT_TRUE(implied) << id << "'s code has " << in.opcode << " (" << in.needs.text() << ") but it declares "
                         << declared.text() << ": add NEEDS " << in.needs.arch() << " to its add_step line";
  }
}

// TUNABLE on a step's add_step line (build/ladder_folders.txt) is what the GPU tests read to try
// every candidate of a step (their tile and variant suites may be empty in a folder without tunable
// steps); the step's code decides whether it takes one. The two agree: a step takes --tile or
// --variant iff it is declared TUNABLE. A step that takes the flag refuses an unknown candidate by
// name (sgemm's tunable steps at their first launch, so 77 without a device); one that does not
// says "unknown flag" (or, in sgemm, "is not tunable").
TEST_P(StepContract, TakesACandidateFlagIffDeclaredTunable) {
  const std::string& id = GetParam();
  const auto tunable = ladder_test::tunable_steps(ladder_test::folder_of(id));
  const bool declared = std::find(tunable.begin(), tunable.end(), id) != tunable.end();
  bool takes = false;
  std::string seen;
  for (const std::string flag : {"--tile", "--variant"}) {
    std::vector<std::string> args = ladder_test::test_size(id);
    args.insert(args.end(), {flag, "no-such-candidate", "--no-ceiling", "--reps", "1", "--warmup", "0"});
    const auto r = run_step(id, args);
    seen += flag + ": " + r.output.substr(0, r.output.find('\n')) + "\n";
    const bool refused_flag = r.output.find("unknown flag '" + flag + "'") != std::string::npos ||
                              r.output.find("is not tunable") != std::string::npos;
    if (refused_flag) {
      EXPECT_EQ(r.exit_code, 2) << id << " " << flag << "\n" << r.output;
      continue;
    }
    takes = true;
    // Refused by name (sgemm's "unknown --tile '...'", the CLI's "does not accept '...'"), or the step
    // cannot get that far here: no device (77), or a GPU its declared requirement excludes.
    const bool named = r.exit_code == 2 && r.output.find("'no-such-candidate'") != std::string::npos;
    const bool cannot_run_here = (r.exit_code == 77 && !ladder_test::gpu_available()) ||
                                 ladder_test::judge(id, r).kind == ladder_test::Verdict::skipped;
    EXPECT_TRUE(named || cannot_run_here) << id << " " << flag << " no-such-candidate\n" << r.output;
  }
  EXPECT_EQ(takes, declared) << id << (declared ? " is declared TUNABLE but takes neither flag"
                                                : " takes a candidate flag but is not declared TUNABLE")
                             << ":\n" << seen;
}

// With every GPU hidden (CUDA_VISIBLE_DEVICES empty, so cudaGetDeviceCount reports no device) a GPU
// step exits 77 and says why, and a CPU step still runs. On a machine without a driver this is the
// same path; on a GPU machine it is the only way to reach it, so the test runs everywhere.
TEST_P(StepContract, NoDeviceExits77) {
  const std::string& id = GetParam();
  std::vector<std::string> args = ladder_test::test_size(id);
  args.insert(args.end(), {"--no-ceiling", "--reps", "1"});
  setenv("CUDA_VISIBLE_DEVICES", "", 1);
  auto r = run_step(id, args);
  args.insert(args.end(), {"--device", "7"});  // cannot be judged without devices: 77 as well
  auto r7 = run_step(id, args);
  unsetenv("CUDA_VISIBLE_DEVICES");
  if (is_cpu_step(id)) {
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(r7.exit_code, 0) << r7.output;
  } else {
    EXPECT_EQ(r.exit_code, 77) << r.output;
    EXPECT_NE(r.output.find("no CUDA"), std::string::npos) << r.output;
    EXPECT_EQ(r7.exit_code, 77) << r7.output;
    EXPECT_NE(r7.output.find("no CUDA"), std::string::npos) << r7.output;
  }
}

// A device profile that does not exist is a usage error everywhere, before any device is asked for
// (so a typo in LADDER_DEVICE_PROFILE never silently measures the real GPU instead).
TEST_P(StepContract, UnknownDeviceProfileExitsTwo) {
  const std::string& id = GetParam();
  std::vector<std::string> args = ladder_test::test_size(id);
  args.insert(args.end(), {"--no-ceiling", "--reps", "1"});
  auto r = run_step(id, args, {"LADDER_DEVICE_PROFILE=gtx480"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("LADDER_DEVICE_PROFILE=gtx480 is no known profile (known: v100, t4"),
            std::string::npos) << r.output;
}

// CPU steps run without a GPU, so here too: every OVERSIZED size exits 3 naming the bytes, before
// anything is allocated or filled (a byte count that would wrap 64 bits included: --n 2^62).
class CpuStepSizes : public testing::TestWithParam<std::string> {};

TEST_P(CpuStepSizes, OversizedExitsThreeNamingTheBytes) {
  const auto sizes = ladder_test::folder_values(ladder_test::folder_of(GetParam()), "oversized");
  ASSERT_FALSE(sizes.empty());
  for (const std::string& size : sizes) {
    auto args = ladder_test::split_args(size);
    args.push_back("--no-ceiling");
    auto r = run_step(GetParam(), args);
    EXPECT_EQ(r.exit_code, 3) << size << "\n" << r.output;
    EXPECT_NE(r.output.find("bytes"), std::string::npos) << size << "\n" << r.output;
  }
}

std::vector<std::string> cpu_steps() {
  std::vector<std::string> ids;
  for (const std::string& id : ladder_test::all_steps())
    if (is_cpu_step(id)) ids.push_back(id);
  return ids;
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CpuStepSizes);  // a build of folders without CPU steps
INSTANTIATE_TEST_SUITE_P(CpuSteps, CpuStepSizes, testing::ValuesIn(cpu_steps()),
                         [](const testing::TestParamInfo<std::string>& p) {
                           return ladder_test::param_name(p.param, ladder_test::folder_of(p.param));
                         });

TEST(FolderDeclarations, EveryFolderWithStepsDeclaresWhatTheSharedTestsNeed) {
  // An unreadable build/ladder_steps.txt gives no steps: the loop below would then check nothing.
  ASSERT_FALSE(ladder_test::all_steps().empty()) << "no registered steps (build/ladder_steps.txt missing or empty?)";
  for (const std::string& id : ladder_test::all_steps()) {
    const std::string folder = ladder_test::folder_of(id);
    EXPECT_FALSE(size_flags(id).empty()) << folder;
    EXPECT_FALSE(ladder_test::test_size(id).empty()) << folder;
    EXPECT_FALSE(ladder_test::folder_values(folder, "oversized").empty()) << folder;
    EXPECT_FALSE(ladder_test::folder_values(folder, "sanitize").empty()) << folder;
  }
}

INSTANTIATE_TEST_SUITE_P(AllSteps, StepContract, testing::ValuesIn(ladder_test::all_steps()),
                         [](const testing::TestParamInfo<std::string>& p) {
                           return ladder_test::param_name(p.param, p.param.substr(0, p.param.find('/')));
                         });

// The test processes learn which GPUs they see from the file ctest's fixture gpu_probe writes
// (tests/step_runner.h, GpuProbe); a wrong answer there would turn every GPU test into a skip, or
// run tests for a device that is not there.
TEST(GpuProbe, FileRoundTrips) {
  ladder_test::TempDir dir;
  ladder_test::GpuProbe p;
  p.device_count = 2;
  p.cc_major = 8;
  p.cc_minor = 6;
  p.sm_count = 28;
  p.smem_per_block_optin = 101376;
  p.name = "NVIDIA GeForce RTX 3060";
  p.visible = "1,0";
  const std::string path = dir.path() + "/probe.all";
  ASSERT_TRUE(ladder_test::write_gpu_probe(path, p));
  ladder_test::GpuProbe q;
  ASSERT_TRUE(ladder_test::read_gpu_probe(path, &q));
  EXPECT_EQ(q.device_count, 2);
  EXPECT_EQ(q.cc_major, 8);
  EXPECT_EQ(q.cc_minor, 6);
  EXPECT_EQ(q.sm_count, 28);
  EXPECT_EQ(q.smem_per_block_optin, 101376u);
  EXPECT_EQ(q.name, p.name);
  EXPECT_EQ(q.visible, "1,0");

  // No device, no name, and CUDA_VISIBLE_DEVICES set to nothing: an answer too.
  ladder_test::GpuProbe none;
  none.visible = "";
  ASSERT_TRUE(ladder_test::write_gpu_probe(path, none));
  ASSERT_TRUE(ladder_test::read_gpu_probe(path, &q));
  EXPECT_EQ(q.device_count, 0);
  EXPECT_EQ(q.name, "");
  EXPECT_EQ(q.visible, "");

  // A missing, truncated or foreign file is no answer: the process asks CUDA instead.
  EXPECT_FALSE(ladder_test::read_gpu_probe(dir.path() + "/absent", &q));
  { std::ofstream(path) << "device_count 1\n"; }
  EXPECT_FALSE(ladder_test::read_gpu_probe(path, &q));
  { std::ofstream(path) << "devices 1\ncc 9 0\nsm_count 132\nsmem_per_block_optin 1\nname x\nvisible 0\n"; }
  EXPECT_FALSE(ladder_test::read_gpu_probe(path, &q));
}

// One file per set of visible devices, so that runs on different GPUs of one machine (scripts/
// as_gpu.sh with AS_GPU_DEVICES) never read each other's answer.
TEST(GpuProbe, FileIsPerVisibleDevices) {
  const char* before = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::string saved = before ? before : "";
  unsetenv("CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(ladder_test::gpu_probe_file("/t/gpu_probe"), "/t/gpu_probe.all");
  EXPECT_EQ(ladder_test::visible_devices(), "(unset)");
  setenv("CUDA_VISIBLE_DEVICES", "0,1", 1);
  EXPECT_EQ(ladder_test::gpu_probe_file("/t/gpu_probe"), "/t/gpu_probe.cvd_0_1");
  EXPECT_EQ(ladder_test::visible_devices(), "0,1");
  setenv("CUDA_VISIBLE_DEVICES", "", 1);
  EXPECT_EQ(ladder_test::gpu_probe_file("/t/gpu_probe"), "/t/gpu_probe.cvd_");
  setenv("CUDA_VISIBLE_DEVICES", "GPU-60a7/../x", 1);
  EXPECT_EQ(ladder_test::gpu_probe_file("/t/gpu_probe"), "/t/gpu_probe.cvd_GPU_60a7____x");
  if (before) setenv("CUDA_VISIBLE_DEVICES", saved.c_str(), 1);
  else unsetenv("CUDA_VISIBLE_DEVICES");
}

// The probe program's file says what this process would find by asking CUDA itself.
TEST(GpuProbe, ProgramWritesWhatCudaSays) {
  ladder_test::TempDir dir;
  const std::string stem = dir.path() + "/sub/gpu_probe";  // a folder it must create
  const std::string cmd = std::string(LADDER_GPU_PROBE_EXE) + " " + stem + " > /dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  ladder_test::GpuProbe written;
  ASSERT_TRUE(ladder_test::read_gpu_probe(ladder_test::gpu_probe_file(stem), &written));
  // CUDA asked here directly, not through probe_gpu(), which the program itself calls.
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
  cudaGetLastError();
  EXPECT_EQ(written.device_count, count);
  if (count > 0) {
    cudaDeviceProp props{};
    ASSERT_EQ(cudaGetDeviceProperties(&props, 0), cudaSuccess);
    EXPECT_EQ(written.cc_major, props.major);
    EXPECT_EQ(written.cc_minor, props.minor);
    EXPECT_EQ(written.sm_count, props.multiProcessorCount);
    EXPECT_EQ(written.smem_per_block_optin, props.sharedMemPerBlockOptin);
    EXPECT_EQ(written.name, std::string(props.name));
  }
  EXPECT_EQ(written.visible, ladder_test::visible_devices());
}

}  // namespace
