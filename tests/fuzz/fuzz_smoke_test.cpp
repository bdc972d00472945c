// The fast fuzz pass: seeded corpora, a fixed-seed mutator, a few thousand cases per parser.
// Asserts that every input is accepted or refused with the documented UsageError, nothing else.
// Reproduce a failure with the printed case number (the seed is fixed). docs/FUZZING.md.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "fuzz_targets.h"
#include "mutator.h"
#include "tests/common/temp_dir.h"

namespace pg::fuzz {
namespace {
namespace fs = std::filesystem;

constexpr uint64_t kSeed = 20151;

int cases() {
  const char* env = std::getenv("PERFGATE_FUZZ_CASES");
  return env ? std::atoi(env) : 3000;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> seeds_in(const std::vector<fs::path>& dirs, const std::string& ext) {
  std::vector<std::string> seeds;
  for (const auto& dir : dirs)
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ext) seeds.push_back(slurp(e.path()));
  std::sort(seeds.begin(), seeds.end());  // directory order is not deterministic
  return seeds;
}

// Runs `target` on `n` mutants; the first input that escapes with anything but UsageError fails.
template <typename F>
void fuzz(const std::vector<std::string>& seeds, std::vector<std::string> dict, F target) {
  ASSERT_FALSE(seeds.empty());
  for (const auto& s : seeds) ASSERT_NO_THROW(target(s)) << "a seed itself fails";
  Mutator m(kSeed, std::move(dict));
  const int n = cases();
  for (int i = 0; i < n; ++i) {
    const std::string input = m.mutate(seeds);
    try {
      target(input);
    } catch (const std::exception& e) {
      FAIL() << "case " << i << " (seed " << kSeed << "): " << typeid(e).name() << ": " << e.what()
             << "\ninput (" << input.size() << " bytes): " << input.substr(0, 400);
    }
  }
}

TEST(Fuzz, TomlSweepFile) {
  const fs::path src = PERFGATE_SOURCE_DIR;
  fuzz(seeds_in({src / "tests/fuzz/corpus/toml", src / "ci/sweeps"}, ".toml"),
       {"=",
        "[",
        "]",
        "[[",
        "]]",
        "{",
        "}",
        "\"",
        "'''",
        "\"\"\"",
        ",",
        "\n",
        "#",
        ".",
        "-",
        "1e999",
        "-1",
        "0",
        "99999999999999999999",
        "nan",
        "inf",
        "true",
        "1979-05-27T07:32:00Z",
        "\\u0000",
        "\\uD800",
        "model",
        "batch-sizes",
        "seq-lens",
        "peak-tflops",
        "gen-tokens",
        "device",
        "\"cuda:9\"",
        "\"file:\"",
        "[[]]",
        "x.y.z"},
       [](const std::string& in) { toml_sweep(in); });
}

TEST(Fuzz, SafetensorsModelFile) {
  pg::testing::TempDir dir;
  const std::string scratch = dir.file("model.safetensors");
  const auto seeds = safetensors_seeds(scratch);
  fuzz(seeds,
       {"\"h.1000000000.ln_1.weight\"",
        "\"h.99999999999999999999999.mlp.c_fc.bias\"",
        "\"shape\":[]",
        "[18446744073709551615]",
        "[-1]",
        "\"dtype\":\"F64\"",
        "\"BF16\"",
        "\"data_offsets\":[0,0]",
        "[4294967296,0]",
        "\"__metadata__\":{}",
        "\"n_head\":\"0\"",
        "{",
        "}",
        "\"",
        ",",
        ":",
        "1e400",
        "null",
        std::string("\xff\xff\xff\xff", 4),
        std::string(8, '\0')},
       [&](const std::string& in) { safetensors_model(in, scratch); });
}

TEST(Fuzz, IngestJson) {
  const fs::path src = PERFGATE_SOURCE_DIR;
  fuzz(seeds_in({src / "tests/fuzz/corpus/ingest"}, ".json"),
       {"{",
        "}",
        "[",
        "]",
        "\"",
        ",",
        ":",
        "null",
        "true",
        "-0",
        "1e999",
        "-1e999",
        "NaN",
        "9223372036854775808",
        "-9223372036854775809",
        "0.5",
        "\"\\u0000\"",
        "\"\\ud800\"",
        "\"status\":\"complete\"",
        "\"samples\":{}",
        "\"cells\":[]",
        "\"runs\":[]",
        "[[[[[[[[[[[[[[[[",
        "\"git\":{\"commit\":\"abc\"}",
        "\"gen_tokens\":1"},
       [](const std::string& in) { ingest_json(in); });
}

}  // namespace
}  // namespace pg::fuzz
