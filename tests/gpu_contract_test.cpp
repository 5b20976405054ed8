// The step contract on a GPU machine, for every registered step of every folder: a size too large
// for the machine exits 3 naming the bytes (checked before anything is allocated: never an OOM
// kill or a hang, the managed and zero-copy steps included), and a device index that does not
// exist exits 2.
#include "tests/step_runner.h"

#include <gtest/gtest.h>

#include <map>

namespace {

using Args = std::vector<std::string>;

// Per folder: arguments that ask for more memory than any machine has. A new folder must add its
// own here; the test fails until it does.
const std::map<std::string, std::vector<Args>>& oversized() {
  static const std::map<std::string, std::vector<Args>> sizes = {
      // 8e9 floats: 96 GB of x, y and r — more than the device, or more pinned/host memory than allowed.
      {"vector_add", {{"--n", "8000000000"}}},
      // 2 x 4e10 floats = 320 GB; and rows x cols x 8 past 64 bits, refused before it can wrap.
      {"transpose", {{"--rows", "200000", "--cols", "200000"}, {"--rows", "2^40", "--cols", "2^40"}}},
      // 2^40 values: 4 TiB of input; 2^62: past what the size arithmetic may hold.
      {"reduction", {{"--n", "2^40"}, {"--n", "2^62"}}},
  };
  return sizes;
}

std::string folder_of(const std::string& id) { return id.substr(0, id.find('/')); }

class GpuContract : public testing::TestWithParam<std::string> {};

TEST_P(GpuContract, HugeSizeExitsThreeNamingTheBytes) {
  REQUIRE_GPU();
  auto it = oversized().find(folder_of(GetParam()));
  ASSERT_NE(it, oversized().end()) << "add " << folder_of(GetParam()) << "'s oversized arguments";
  for (Args args : it->second) {
    args.push_back("--no-ceiling");
    auto r = ladder_test::run_step(GetParam(), args);
    EXPECT_EQ(r.exit_code, 3) << args[1] << "\n" << r.output;
    EXPECT_NE(r.output.find("bytes"), std::string::npos) << r.output;
  }
}

TEST_P(GpuContract, MissingDeviceIndexExitsTwo) {
  REQUIRE_GPU();
  auto r = ladder_test::run_step(GetParam(), {"--device", "7", "--no-ceiling"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--device 7"), std::string::npos) << r.output;
}

INSTANTIATE_TEST_SUITE_P(AllSteps, GpuContract, testing::ValuesIn(ladder_test::all_steps()),
                         [](const testing::TestParamInfo<std::string>& p) {
                           return ladder_test::param_name(p.param, folder_of(p.param));
                         });

}  // namespace
