// CPU-only tests of common/: the CLI, statistics and the timing loop, the verifier, the JSON record,
// the .npy writer, the seeded fills, the memory guard and the exit-code mapping.
#include "common/activity.h"
#include "common/buffers.h"
#include "common/check.h"
#include "common/cli.h"
#include "common/npy.h"
#include "common/random.h"
#include "common/report.h"
#include "common/run.h"
#include "common/step.h"
#include "common/tile_order.h"
#include "common/timing.h"
#include "common/verify.h"
#include "tests/step_runner.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <set>
#include <utility>

namespace {

using ladder::Cli;
using ladder::UsageError;

struct Parsed {
  Cli cli{"prog", "test"};
  int64_t n = 100;
  int64_t rows = 7;
  std::string init = "random";
  Parsed() {
    cli.add_size("n", &n, "elements");
    cli.add_size("rows", &rows, "rows");
    cli.add_choice("init", &init, {"random", "analytic"}, "inputs");
  }
  bool parse(std::vector<std::string> args) {
    std::vector<const char*> argv{"prog"};
    for (auto& a : args) argv.push_back(a.c_str());
    return cli.parse(static_cast<int>(argv.size()), argv.data());
  }
};

// The grouped tile order (common/tile_order.h) in 32 bits, as transpose 08 uses it: every tile once
// for any band (taller than the grid, a short last band), bands of one line walk line after line,
// and inside a band the lines go fastest. (sgemm's CPU tests check the 64-bit form through
// grouped_tile_origin.)
TEST(TileOrder, GroupedVisitsEveryTileOnceIn32Bits) {
  for (unsigned lines : {1u, 2u, 15u, 257u})
    for (unsigned across : {1u, 3u, 17u})
      for (unsigned band : {1u, 4u, 15u, 300u}) {
        std::set<std::pair<unsigned, unsigned>> seen;
        for (unsigned i = 0; i < lines * across; ++i) {
          const ladder::GroupedTile<unsigned> t = ladder::grouped_tile<unsigned>(i, band, lines, across);
          ASSERT_LT(t.line, lines);
          ASSERT_LT(t.along, across);
          seen.insert({t.line, t.along});
          if (band == 1) {
            EXPECT_EQ(t.line, i / across);
            EXPECT_EQ(t.along, i % across);
          }
        }
        EXPECT_EQ(seen.size(), size_t(lines) * across) << lines << " x " << across << ", band " << band;
      }
  const ladder::GroupedTile<unsigned> a = ladder::grouped_tile<unsigned>(0, 15, 257, 17);
  const ladder::GroupedTile<unsigned> b = ladder::grouped_tile<unsigned>(1, 15, 257, 17);
  EXPECT_EQ(b.line, a.line + 1);
  EXPECT_EQ(b.along, a.along);
}

TEST(ParseInt64, AcceptsPlainExponentAndPowerForms) {
  int64_t v = 0;
  EXPECT_TRUE(ladder::parse_int64("123", &v));
  EXPECT_EQ(v, 123);
  EXPECT_TRUE(ladder::parse_int64("1e8", &v));
  EXPECT_EQ(v, 100000000);
  EXPECT_TRUE(ladder::parse_int64("2^28", &v));
  EXPECT_EQ(v, 268435456);
  EXPECT_TRUE(ladder::parse_int64("2^24+5", &v));
  EXPECT_EQ(v, 16777221);
  EXPECT_TRUE(ladder::parse_int64("8000000000", &v));
  EXPECT_EQ(v, 8000000000LL);
  EXPECT_TRUE(ladder::parse_int64("9223372036854775807", &v));
  EXPECT_EQ(v, std::numeric_limits<int64_t>::max());
}

TEST(ParseInt64, RejectsJunkSignsFractionsAndOverflow) {
  int64_t v = 0;
  for (const char* bad : {"", "abc", "-5", "+5", "1.5", "1e", "2^", "12x", "9223372036854775808",
                          "99999999999999999999", "2^64", "1e19", "3+", " 3"})
    EXPECT_FALSE(ladder::parse_int64(bad, &v)) << bad;
}

TEST(Cli, ParsesSizesCommonFlagsAndInlineValues) {
  Parsed p;
  EXPECT_TRUE(p.parse({"--n", "2^20", "--rows=33", "--reps", "5", "--warmup", "0", "--seed", "9",
                       "--device", "1", "--json", "--no-verify", "--no-ceiling", "--dump", "/tmp/x",
                       "--init", "analytic"}));
  EXPECT_EQ(p.n, 1 << 20);
  EXPECT_EQ(p.rows, 33);
  EXPECT_EQ(p.init, "analytic");
  EXPECT_EQ(p.cli.common.reps, 5);
  EXPECT_EQ(p.cli.common.warmup, 0);
  EXPECT_EQ(p.cli.common.seed, 9u);
  EXPECT_EQ(p.cli.common.device, 1);
  EXPECT_TRUE(p.cli.common.json);
  EXPECT_FALSE(p.cli.common.verify);
  EXPECT_FALSE(p.cli.common.ceiling);
  EXPECT_EQ(p.cli.common.dump_dir, "/tmp/x");
}

TEST(Cli, DefaultsStayWhenFlagsAreAbsent) {
  Parsed p;
  EXPECT_TRUE(p.parse({}));
  EXPECT_EQ(p.n, 100);
  EXPECT_EQ(p.rows, 7);
  EXPECT_TRUE(p.cli.common.verify);
  EXPECT_TRUE(p.cli.common.ceiling);
  EXPECT_FALSE(p.cli.common.json);
}

TEST(Cli, HelpReturnsFalse) {
  Parsed p;
  testing::internal::CaptureStdout();
  EXPECT_FALSE(p.parse({"--help"}));
  std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("--n N"), std::string::npos);
  EXPECT_NE(out.find("exit codes"), std::string::npos);
}

TEST(Cli, BadArgumentsAreUsageErrors) {
  const std::vector<std::vector<std::string>> bad = {
      {"--n", "0"},     {"--n", "-5"},       {"--n", "abc"},     {"--n"},
      {"--bogus"},      {"--n", "1.5"},      {"--reps", "0"},    {"--json=1"},
      {"stray"},        {"--init", "zeros"}, {"--dump", ""},     {"--rows", "99999999999999999999"},
      {"--warmup", "-1"}, {"--seed", "x"},   {"--device", "-1"}};
  for (const auto& args : bad) {
    Parsed p;
    EXPECT_THROW(p.parse(args), UsageError) << args[0];
  }
}

// An index past any machine's GPUs is refused as typed (it was once clamped, and the message named
// 1048576 for --device 2000000).
TEST(Cli, HugeDeviceIndexIsRefusedAsTyped) {
  Parsed p;
  try {
    p.parse({"--device", "2000000"});
    FAIL() << "no throw";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--device 2000000 does not exist"), std::string::npos) << e.what();
  }
  Parsed q;
  q.parse({"--device", "1048576"});
  EXPECT_EQ(q.cli.common.device, 1 << 20);
}

TEST(Cli, UsageErrorMessageIsOneLine) {
  Parsed p;
  try {
    p.parse({"--n", "abc"});
    FAIL() << "no throw";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("--n"), std::string::npos);
  }
}

TEST(Stats, MedianMinMaxOddEvenEmpty) {
  auto s = ladder::summarize({5, 1, 3});
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_EQ(s.reps, 3);
  s = ladder::summarize({4, 1, 2, 3});
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_EQ(ladder::summarize({}).reps, 0);
}

TEST(TimingLoop, WarmsUpThenStopsAtRepsOrBudget) {
  int calls = 0, before = 0;
  auto fixed = [&](double ms) { return [&calls, ms] { ++calls; return ms; }; };
  ladder::TimingPlan plan{2, 10, 1000.0};
  auto s = ladder::time_loop(fixed(1.0), plan, [&] { ++before; });
  EXPECT_EQ(s.reps, 10);
  EXPECT_EQ(calls, 12);       // 2 warm-up + 10 timed
  EXPECT_EQ(before, 12);      // before_each precedes every run, warm-up included
  calls = 0;
  s = ladder::time_loop(fixed(400.0), plan, {});
  EXPECT_EQ(s.reps, 3);       // 400 + 400 + 400 >= 1000 ms budget
  EXPECT_EQ(calls, 4);        // warm-up stopped after one run (a quarter of the budget)
  calls = 0;
  s = ladder::time_loop(fixed(5000.0), plan.after_first_run(5000.0), {});
  EXPECT_EQ(s.reps, 1);       // a run longer than the budget is timed once...
  EXPECT_EQ(calls, 1);        // ...with no warm-up after a slow checked run
  EXPECT_DOUBLE_EQ(s.median, 5000.0);
}

TEST(TimingHelpers, BandwidthAndOneShotRun) {
  EXPECT_DOUBLE_EQ(ladder::gbps(1.2e9, 0.5), 2400.0);  // 1.2 GB in 0.5 ms
  int calls = 0;
  double ms = ladder::time_once_ms([&] { ++calls; });
  EXPECT_EQ(calls, 1);  // no warm-up, one run
  EXPECT_GE(ms, 0.0);
}

TEST(Verify, ExactPassesIdenticalAndReportsFirstMismatches) {
  std::vector<float> want(100), got(100);
  for (int i = 0; i < 100; ++i) want[i] = got[i] = 0.5f * i;
  auto r = ladder::verify_exact(got.data(), want.data(), 100, {10, 10});
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.checked, 100);
  for (int i : {13, 57, 58, 59, 60, 61, 99}) got[i] += 1;
  r = ladder::verify_exact(got.data(), want.data(), 100, {10, 10});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.mismatches, 7);
  ASSERT_EQ(r.first_bad.size(), static_cast<size_t>(ladder::VerifyReport::kMaxReported));
  EXPECT_NE(r.first_bad[0].find("[1,3]"), std::string::npos) << r.first_bad[0];
}

TEST(Verify, NaNAndPoisonedOutputsNeverPass) {
  std::vector<float> want(8, 1.0f), got(8, 1.0f);
  got[3] = std::nanf("");
  EXPECT_FALSE(ladder::verify_exact(got.data(), want.data(), 8, {8}).ok);
  std::memset(got.data(), 0xFF, sizeof(float) * 8);  // what DeviceBuffer::poison writes
  EXPECT_EQ(ladder::verify_exact(got.data(), want.data(), 8, {8}).mismatches, 8);
  std::vector<float> nan_want(1, std::nanf("")), nan_got(1, std::nanf(""));
  EXPECT_FALSE(ladder::verify_exact(nan_got.data(), nan_want.data(), 1, {1}).ok);
  got.assign(8, std::numeric_limits<float>::infinity());
  want.assign(8, std::numeric_limits<float>::infinity());
  EXPECT_FALSE(ladder::verify_exact(got.data(), want.data(), 8, {8}).ok);
}

TEST(Verify, ExactIntegersIncludingPoisonSentinel) {
  std::vector<int64_t> want{1, 2, 3}, got{1, 2, 3};
  EXPECT_TRUE(ladder::verify_exact(got.data(), want.data(), 3, {3}).ok);
  got[2] = -1;  // the 0xFF poison of an integer output
  auto r = ladder::verify_exact(got.data(), want.data(), 3, {3});
  EXPECT_FALSE(r.ok);
  EXPECT_DOUBLE_EQ(r.max_err, 4.0);
}

TEST(Verify, BoundedUsesTermMagnitudesNotTheResult) {
  // A dot product that cancels to ~0: its error is bounded by K * eps * sum|terms|, not by |ref|.
  const double ref = 1e-3, magnitude = 1e4;
  const ladder::ErrorBound bound{1000, ladder::kFloatEps, 2.0};
  const double allowed = 2.0 * 1000 * ladder::kFloatEps * magnitude;  // ~1.19
  float within = static_cast<float>(ref + 0.9 * allowed);
  float outside = static_cast<float>(ref + 1.1 * allowed);
  EXPECT_TRUE(ladder::verify_bounded(&within, &ref, &magnitude, 1, bound, {1}).ok);
  auto r = ladder::verify_bounded(&outside, &ref, &magnitude, 1, bound, {1});
  EXPECT_FALSE(r.ok);
  EXPECT_NEAR(r.max_err, 1.1 * allowed, 1e-3);
  float nan = std::nanf("");
  EXPECT_FALSE(ladder::verify_bounded(&nan, &ref, &magnitude, 1, bound, {1}).ok);
  // Zero magnitude (all terms zero) demands an exact zero.
  const double zero = 0;
  float tiny = 1e-30f;
  EXPECT_FALSE(ladder::verify_bounded(&tiny, &zero, &zero, 1, bound, {1}).ok);
}

TEST(Verify, MergeCombinesTwoChecks) {
  ladder::VerifyReport a, b;
  a.checked = 5;
  b.checked = 5;
  b.ok = false;
  b.mismatches = 1;
  b.max_err = 2;
  a.merge(b);
  EXPECT_FALSE(a.ok);
  EXPECT_EQ(a.checked, 10);
  EXPECT_EQ(a.mismatches, 1);
}

TEST(Verify, FormatIndex) {
  EXPECT_EQ(ladder::format_index(7, {10}), "[7]");
  EXPECT_EQ(ladder::format_index(23, {4, 10}), "[2,3]");
  EXPECT_EQ(ladder::format_index(23, {2, 3, 4}), "[1,2,3]");
}

TEST(StepInfo, ParsesMainAndSideLadderIds) {
  auto s = ladder::StepInfo::from_id("sgemm/05_2d_blocktiling");
  EXPECT_EQ(s.folder, "sgemm");
  EXPECT_EQ(s.name, "05_2d_blocktiling");
  EXPECT_EQ(s.series, "main");
  EXPECT_EQ(s.index, 5);
  s = ladder::StepInfo::from_id("sgemm/aat_03_padded");
  EXPECT_EQ(s.series, "aat");
  EXPECT_EQ(s.index, 3);
  for (const char* bad : {"sgemm", "/05_x", "sgemm/", "sgemm/xx", "sgemm/05", "sgemm/aat_x"})
    EXPECT_THROW(ladder::StepInfo::from_id(bad), std::invalid_argument) << bad;
}

TEST(Json, RecordHasTheSchemaFieldsAndNullsForMissingValues) {
  ladder::Result r;
  r.step = ladder::StepInfo::from_id("vector_add/04_grid_stride");
  r.device.name = "Test \"GPU\"";
  r.size = {{"n", 100000000}};
  r.check.checked = 10;
  r.kernel = ladder::summarize({0.5, 0.4, 0.6});
  r.metric_value = 2400;
  r.metric_unit = "GB/s";
  r.ceiling = ladder::Ceiling{"copy", 3000, "GB/s", ""};
  r.extras.push_back({"transfer_floor_ms", 12.5, "ms"});
  r.min_bytes = 536870912;  // 2 x 8192^2 floats: a whole number, written exactly (not 5.36871e+08)
  r.flops = 2.0 * 4096.0 * 4096.0 * 4096.0;
  std::string j = ladder::to_json(r);
  EXPECT_EQ(j.front(), '{');
  EXPECT_EQ(j.back(), '}');
  EXPECT_EQ(j.find('\n'), std::string::npos);
  for (const char* k : {"\"step\":\"vector_add/04_grid_stride\"", "\"folder\":\"vector_add\"",
                        "\"series\":\"main\"", "\"index\":4", "\"device\":\"Test \\\"GPU\\\"\"",
                        "\"size\":{\"n\":100000000}", "\"verified\":true", "\"max_err\":0",
                        "\"kernel_ms\":{\"median\":0.5,\"min\":0.4,\"max\":0.6,\"reps\":3}",
                        "\"total_ms\":null", "\"metric\":{\"value\":2400,\"unit\":\"GB/s\"}",
                        "\"metric_from\":\"kernel_ms\"",
                        "\"ceiling\":{\"name\":\"copy\",\"value\":3000,\"unit\":\"GB/s\"}",
                        "\"pct_of_ceiling\":80", "\"extra\":{\"transfer_floor_ms\":12.5}",
                        "\"work\":{\"min_bytes\":536870912,\"flops\":137438953472}"})
    EXPECT_NE(j.find(k), std::string::npos) << k << " in " << j;
  r.ceiling.reset();
  r.verify_skipped = true;
  j = ladder::to_json(r);
  EXPECT_NE(j.find("\"pct_of_ceiling\":null"), std::string::npos) << j;
  EXPECT_NE(j.find("\"verified\":null"), std::string::npos) << j;
  EXPECT_NE(j.find("\"ceiling\":null"), std::string::npos) << j;
}

// The tests read a record's string fields (a step's "choice") through ladder_test::json_string:
// whatever the writer escapes, the reader gives back; choice_name cuts the choice at ':' or " (".
TEST(Json, TestReaderUndoesTheWritersEscapes) {
  const std::string tricky = "a \"b\": c\\d\n\te\r\x01" "f (g)";
  ladder::JsonWriter w;
  w.begin_object().field("choice", tricky).null_field("none").field("n", int64_t(3)).end_object();
  EXPECT_EQ(ladder_test::json_string(w.str(), "choice"), tricky) << w.str();
  EXPECT_EQ(ladder_test::json_string(w.str(), "none"), "");
  EXPECT_EQ(ladder_test::json_string(w.str(), "n"), "");
  EXPECT_EQ(ladder_test::json_string(w.str(), "absent"), "");
  EXPECT_EQ(ladder_test::choice_name(w.str()), "a \"b\"");
  EXPECT_EQ(ladder_test::choice_name(R"j({"choice":"64x128x8_4x4 (the default): 2 blocks"})j"), "64x128x8_4x4");
  EXPECT_EQ(ladder_test::choice_name(R"j({"choice":"K = 17 compiled in: taps as operands (x)"})j"),
            "K = 17 compiled in");
  EXPECT_EQ(ladder_test::choice_name(R"({"choice":"fixed"})"), "fixed");
  EXPECT_EQ(ladder_test::choice_name(R"({"choice":null})"), "");
}

// A refusal is a line of its own; --help's exit-code text mentions such lines in quotes, and a test
// that took that for a refusal once failed every tunable step's candidate list.
TEST(StepRunner, UnsupportedLineIsALineOfItsOwn) {
  EXPECT_EQ(ladder_test::unsupported_line("unsupported: s needs sm_90a; this GPU is sm_80\n"),
            "s needs sm_90a; this GPU is sm_80");
  EXPECT_EQ(ladder_test::unsupported_line("a note\nunsupported: t needs 9 bytes\n"), "t needs 9 bytes");
  EXPECT_EQ(ladder_test::unsupported_line("error: unknown --tile\nexit codes: ... (\"unsupported: ...\"), 3\n"), "");
  EXPECT_EQ(ladder_test::unsupported_line("x (\"unsupported: ...\")\nunsupported: u\n"), "u");
}

TEST(Json, FinishReturnsOneOnFailureAndZeroOnSuccess) {
  ladder::Result r;
  r.step = ladder::StepInfo::from_id("vector_add/01_single_thread");
  ladder::CommonOptions opts;
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  EXPECT_EQ(ladder::finish(r, opts), 0);
  r.check.ok = false;
  r.check.mismatches = 1;
  EXPECT_EQ(ladder::finish(r, opts), 1);
  r.verify_skipped = true;
  EXPECT_EQ(ladder::finish(r, opts), 0);
  testing::internal::GetCapturedStdout();
  testing::internal::GetCapturedStderr();
}

TEST(Npy, HeaderIsAlignedAndDescribesTheArray) {
  for (auto shape : std::vector<std::vector<int64_t>>{{3}, {2, 3}, {1}, {1000003}}) {
    std::string h = ladder::npy_header("<f4", shape);
    EXPECT_EQ(h.size() % 64, 0u);
    EXPECT_EQ(h.substr(0, 6), "\x93NUMPY");
    EXPECT_EQ(h.back(), '\n');
  }
  EXPECT_NE(ladder::npy_header("<f4", {3}).find("'shape': (3,)"), std::string::npos);
  EXPECT_NE(ladder::npy_header("<i8", {2, 3}).find("'shape': (2, 3)"), std::string::npos);
}

TEST(Npy, RoundTripsThroughTheTestReader) {
  ladder_test::TempDir tmp;
  const std::string& dir = tmp.path();
  std::vector<float> f{1.5f, -2.f, 3.25f, 0.f, 7.f, 8.f};
  std::vector<int64_t> i{1, -2, 1LL << 40};
  ladder::write_npy(dir, "f", f.data(), {2, 3});
  ladder::write_npy(dir, "i", i.data(), {3});
  auto a = ladder_test::read_npy(dir + "/f.npy");
  EXPECT_EQ(a.descr, "<f4");
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(std::vector<float>(a.as<float>(), a.as<float>() + 6), f);
  auto b = ladder_test::read_npy(dir + "/i.npy");
  EXPECT_EQ(b.descr, "<i8");
  EXPECT_EQ(std::vector<int64_t>(b.as<int64_t>(), b.as<int64_t>() + 3), i);
}

TEST(Random, DeterministicIndependentAndInRange) {
  const int64_t n = 100000;
  std::vector<float> a(n), b(n), c(n);
  ladder::fill_uniform(a.data(), n, 42, 1, -1.f, 1.f);
  ladder::fill_uniform(b.data(), n, 42, 1, -1.f, 1.f);
  ladder::fill_uniform(c.data(), n, 42, 2, -1.f, 1.f);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  std::set<float> distinct(a.begin(), a.end());
  EXPECT_GT(distinct.size(), static_cast<size_t>(n * 0.99));
  double mean = 0;
  for (float v : a) {
    ASSERT_GE(v, -1.f);
    ASSERT_LT(v, 1.f);
    mean += v / n;
  }
  EXPECT_NEAR(mean, 0.0, 0.02);
  std::vector<int32_t> k(n);
  ladder::fill_uniform_int(k.data(), n, 7, 0, 0, 255);
  std::set<int32_t> seen(k.begin(), k.end());
  EXPECT_EQ(seen.size(), 256u);  // 0..255 inclusive, all hit
  EXPECT_EQ(*seen.begin(), 0);
  EXPECT_EQ(*seen.rbegin(), 255);
}

TEST(MemoryGuard, RefusesMoreHostMemoryThanAvailableNamingTheBytes) {
  ladder::MemoryNeeds needs;
  needs.host = size_t(1) << 62;
  try {
    ladder::require_memory(needs, "a huge step");
    FAIL() << "no throw";
  } catch (const ladder::CudaError& e) {
    EXPECT_NE(std::string(e.what()).find("bytes"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("a huge step"), std::string::npos) << e.what();
  }
  ladder::MemoryNeeds pinned;
  pinned.pinned = ladder::host_bytes_total() / 2 + (size_t(1) << 20);
  EXPECT_THROW(ladder::require_memory(pinned, "too much pinned"), ladder::CudaError);
  ladder::MemoryNeeds small;
  small.host = 1 << 20;
  EXPECT_NO_THROW(ladder::require_memory(small, "small"));
}

TEST(CheckedSizes, ByteCountsThatWouldWrapAreRefusedNamingTheBytes) {
  EXPECT_EQ(ladder::bytes_of<float>(1000), 4000u);
  EXPECT_EQ(ladder::checked_bytes(int64_t(1) << 58, 4), size_t(1) << 60);  // the limit itself
  for (int64_t count : {int64_t(1) << 62, int64_t(4e18), std::numeric_limits<int64_t>::max()}) {
    try {
      ladder::bytes_of<float>(count);
      FAIL() << count << ": no throw";
    } catch (const ladder::CudaError& e) {
      EXPECT_NE(std::string(e.what()).find("bytes"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("e+18"), std::string::npos) << e.what();  // not wrapped
    }
  }
  EXPECT_EQ(ladder::checked_count({8192, 8192}, 4), 8192 * 8192);
  EXPECT_THROW(ladder::checked_count({int64_t(1) << 40, int64_t(1) << 40}, 4), ladder::CudaError);
  EXPECT_THROW(ladder::checked_count({int64_t(1) << 29, int64_t(1) << 29, 16}, 8), ladder::CudaError);
}

TEST(CheckedSizes, MemoryGuardSumsSaturateInsteadOfWrapping) {
  EXPECT_EQ(ladder::saturating_add(1, 2), 3u);
  EXPECT_EQ(ladder::saturating_add(SIZE_MAX - 1, 5), SIZE_MAX);
  ladder::MemoryNeeds needs;  // three buffers at the limit: 3 * 2^60 does not wrap; the sum saturates
  needs.host = needs.pinned = needs.managed = size_t(3) << 62;
  EXPECT_THROW(ladder::require_memory(needs, "wrapping sums"), ladder::CudaError);
}

TEST(Verify, FloatMismatchesReportTheirError) {
  std::vector<float> want{1.f, 2.f, 3.f}, got{1.f, 2.5f, 3.f};
  auto r = ladder::verify_exact(got.data(), want.data(), 3, {3});
  EXPECT_FALSE(r.ok);
  EXPECT_DOUBLE_EQ(r.max_err, 0.5);
  got[0] = std::nanf("");
  r = ladder::verify_exact(got.data(), want.data(), 3, {3});
  EXPECT_TRUE(std::isinf(r.max_err));
  ladder::Result res;
  res.step = ladder::StepInfo::from_id("vector_add/04_grid_stride");
  res.check = r;
  EXPECT_NE(ladder::to_json(res).find("\"max_err\":null"), std::string::npos);
}

TEST(Dump, UnwritableDirectoryIsAUsageErrorAtParseTime) {
  Parsed p;
  EXPECT_THROW(p.parse({"--dump", "/proc/ladder_cannot_write_here"}), UsageError);
  ladder_test::TempDir tmp;
  Parsed q;
  EXPECT_TRUE(q.parse({"--dump", tmp.path() + "/sub"}));
  EXPECT_TRUE(std::filesystem::is_directory(tmp.path() + "/sub"));
}

// Once the run has started, a .npy file that cannot be written is a run-time error (exit 3, not a
// usage error): here its name is taken by a directory.
TEST(Dump, FileThatCannotBeWrittenIsARunTimeError) {
  ladder_test::TempDir tmp;
  std::filesystem::create_directory(tmp.path() + "/out.npy");
  const float x[2] = {1.0f, 2.0f};
  try {
    ladder::write_npy(tmp.path(), "out", x, {2});
    FAIL() << "no throw";
  } catch (const UsageError&) {
    FAIL() << "a usage error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("out.npy"), std::string::npos) << e.what();
  }
  testing::internal::CaptureStderr();
  EXPECT_EQ(ladder::guarded([&] { ladder::write_npy(tmp.path(), "out", x, {2}); return 0; }, nullptr),
            ladder::kExitCudaError);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("error: --dump: cannot open"), std::string::npos);
}

// The skeleton of every harness on the host clock: both checks run on poisoned outputs, the final
// one after the timed runs, so a step that only gets its first run right fails.
TEST(MeasurePhase, FinalCheckCatchesAStepThatGoesWrongAfterItsFirstRun) {
  ladder::CommonOptions opt;
  opt.reps = 3;
  opt.warmup = 1;
  for (bool breaks_later : {false, true}) {
    ladder::Result res;
    res.step = ladder::StepInfo::from_id("reduction/08_grid_stride_int4");
    int output = 0, runs = 0, poisons = 0, prepares = 0;
    ladder::Phase p;
    p.name = "kernel";
    p.clock = ladder::Clock::host;
    p.poison = [&] { output = -1; ++poisons; };
    p.prepare = [&] { ++prepares; };
    // Like a device-finish step that forgets to reset its counter: right once, then wrong.
    p.run = [&] { output = (breaks_later && runs > 0) ? 41 : 42; ++runs; };
    p.check = [&] {
      ladder::VerifyReport v;
      const int64_t got = output, want = 42;
      v.merge(ladder::verify_exact(&got, &want, 1, {1}));
      return v;
    };
    int dumps = 0;
    testing::internal::CaptureStderr();
    ladder::Stats t = ladder::measure_phase(res, p, opt, [&] { ++dumps; });
    testing::internal::GetCapturedStderr();
    EXPECT_EQ(res.check.ok, !breaks_later);
    EXPECT_EQ(res.check.checked, 2);  // the checked run and the final run
    EXPECT_EQ(poisons, 2);
    EXPECT_EQ(dumps, 1);
    EXPECT_EQ(t.reps, 3);
    EXPECT_EQ(runs, 1 + 1 + 3 + 1);   // checked, warm-up, reps, final
    EXPECT_EQ(prepares, runs);        // before every run, timed or not
  }
}

TEST(MeasurePhase, WrongLibraryCeilingIsAnError) {
  ladder::VerifyReport good, bad;
  bad.ok = false;
  bad.mismatches = 1;
  bad.first_bad.push_back("[3] got 1 want 2");
  EXPECT_NO_THROW(ladder::require_correct_ceiling(good, "cuBLAS"));
  try {
    ladder::require_correct_ceiling(bad, "cuBLAS");
    FAIL() << "no throw";
  } catch (const ladder::CudaError& e) {
    EXPECT_NE(std::string(e.what()).find("cuBLAS"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[3] got 1 want 2"), std::string::npos) << e.what();
  }
}

TEST(ExitCodes, GuardedMapsEachErrorToItsCode) {
  testing::internal::CaptureStderr();
  EXPECT_EQ(ladder::guarded([] { return 0; }, nullptr), 0);
  EXPECT_EQ(ladder::guarded([] { return 1; }, nullptr), 1);
  EXPECT_EQ(ladder::guarded([]() -> int { throw ladder::UsageError("bad"); }, [] { return std::string("usage\n"); }), 2);
  EXPECT_EQ(ladder::guarded([]() -> int { throw ladder::CudaError("oom"); }, nullptr), 3);
  EXPECT_EQ(ladder::guarded([]() -> int { throw ladder::NoDeviceError("none"); }, nullptr), 77);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("error: bad\nusage"), std::string::npos) << err;
}

TEST(ExitCodes, CudaCheckThrowsNamingTheCall) {
  try {
    CUDA_CHECK(cudaErrorInvalidValue);
    FAIL() << "no throw";
  } catch (const ladder::CudaError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("cudaErrorInvalidValue"), std::string::npos) << what;
    EXPECT_NE(what.find("cpu_common_test.cpp"), std::string::npos) << what;
  }
}

// kernel_ms is the union of a region's activity intervals (common/activity.h): overlapping work
// (streams) counts once, gaps between launches not at all.
TEST(GpuActivity, UnionOfIntervals) {
  EXPECT_EQ(ladder::union_ns({}), 0u);
  EXPECT_EQ(ladder::union_ns({{10, 20}}), 10u);
  EXPECT_EQ(ladder::union_ns({{10, 20}, {30, 45}}), 25u);        // a gap: not counted
  EXPECT_EQ(ladder::union_ns({{10, 30}, {20, 40}}), 30u);        // overlap: counted once
  EXPECT_EQ(ladder::union_ns({{20, 40}, {10, 15}, {12, 25}}), 30u);  // unsorted, chained
  EXPECT_EQ(ladder::union_ns({{10, 50}, {20, 30}}), 40u);        // nested
  EXPECT_EQ(ladder::union_ns({{10, 10}, {5, 4}}), 0u);           // empty and reversed ignored
}

}  // namespace
