// gpu_probe FILE_STEM: asks CUDA once how many devices this process sees and what device 0 is, and
// writes the answer to gpu_probe_file(FILE_STEM) (tests/step_runner.h, GpuProbe). ctest runs it as
// the fixture every test requires, so that the test processes read the answer instead of each
// starting CUDA to ask. Always exits 0: no device (or no driver) is an answer too.
#include "tests/step_runner.h"

#include <cstdio>
#include <filesystem>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: gpu_probe FILE_STEM\n");
    return 2;
  }
  const ladder_test::GpuProbe p = ladder_test::probe_gpu();
  const std::string path = ladder_test::gpu_probe_file(argv[1]);
  std::error_code ignored;  // a missing folder is reported by the write below
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ignored);
  if (!ladder_test::write_gpu_probe(path, p)) {
    std::fprintf(stderr, "error: cannot write %s\n", path.c_str());
    return 1;
  }
  std::printf("%d CUDA device(s) visible (CUDA_VISIBLE_DEVICES %s)%s%s: %s\n", p.device_count, p.visible.c_str(),
              p.device_count > 0 ? "; device 0: " : "", p.name.c_str(), path.c_str());
  return 0;
}
