// sgemm step 13: the assembler's choices — step 11's source, assembled by ptxas with
// --register-usage-level=0.
// Steps 09-12 write the FFMA loop in CUDA C; ptxas, the assembler that turns PTX into the GPU's
// machine code (SASS), picks which physical register holds each of 09's 128 accumulators and 48
// fragment values, in what order the loop's 4,600 instructions issue and where they sit in its
// 73 KB. Those choices move the speed without a change to the loop: step 12's first finish function
// cost a point, 32-bit tile counters cost step 12 2.5 points and 09 nothing (the chapter's step 12
// and appendix). --register-usage-level (0-10, default 5; "lower values inhibit optimizations that
// aggressively increase register usage", ptxas --help) is ptxas's own knob for one of them.
// At level 0 step 09's kernel takes 245 registers instead of 247, executes the same instructions
// (2.314 against 2.313 billion warp instructions at 4096^3), waits less for instructions to arrive
// (no_instruction stalls 0.22 per issue against 0.31-0.37) and takes 4-7% fewer cycles: 96.2-96.5% of
// cuBLAS at 4096^3 against 92.4-92.9% (H100, CUDA 13.0, 2026-11-27, three processes each). Which part
// of the new assembly does it is not pinned down: the loop holds the same instructions but for a
// few integer ones, and its FFMAs read no fewer operands from one register bank.
// Changes from step 11: nothing in the source; one compile option (sgemm/CMakeLists.txt), applied
// where the toolkit's ptxas accepts it (the choice line says which). Why not step 12's kernel: the
// same option makes it slower (88% of cuBLAS at 4096^3 against 94.6%), so this step drops 12's
// dynamic tail and runs step 11's plan — step 09's kernel wherever C has waves of tiles.
// Flags, limits and refusals are step 11's (not tunable; sm_80 or newer, exit 2 otherwise).
// Costs: nothing at run time. The option is marked BETA in ptxas --help ("no guarantee that the
// implementation stays consistent between ptxas releases"), and its effect belongs to one kernel and
// one ptxas, not to the source: it helped 09's kernel here and hurt 12's, and levels 6, 7, 8 and 10
// (9 was not run) make 09 slower (89-90%). Re-measure after a toolkit update (scripts/run_all.sh sgemm).
// Source: ptxas --help; the measurements in the chapter and its appendix ("The assembler's register
// level"). Run: build/bin/sgemm_13_ptxas_registers --m 4096
#include "11_shape_classes.cu"  // steps 09-11: the plan and every kernel, unchanged

#include <string>

namespace sgemm::ptxas_registers {

// Set by sgemm/CMakeLists.txt where ptxas accepts the flag.
#ifdef SGEMM_PTXAS_REGISTER_USAGE_LEVEL
constexpr const char* kAssembled = "ptxas --register-usage-level=0";
#else
constexpr const char* kAssembled = "ptxas defaults (this toolkit's ptxas has no --register-usage-level)";
#endif

constexpr const char* kId = "sgemm/13_ptxas_registers";

std::string describe(const Gemm& g) { return std::string(kAssembled) + ": " + shape_classes::describe(g); }

const Step kStep{kId, shape_classes::launch, nullptr, /*tunable=*/false, shape_classes::workspace_bytes, describe};
LADDER_STEP(kStep);

}  // namespace sgemm::ptxas_registers
