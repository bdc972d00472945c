// Sweep settings: flags, the TOML file, defaults, validation messages, and the Cartesian product.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "e2e_process.h"
#include "runner/config.h"
#include "runner/lm/measure.h"
#include "runner/sweep.h"

namespace pg {
namespace {

using pgtest::TempDir;

runner::RunFlags flags(std::map<std::string, std::string> values) {
  runner::RunFlags f;
  f.values = std::move(values);
  return f;
}

// The message of resolving `f` as the CLI prints it (settings spelled as flags), or "" when it
// resolves.
std::string error_of(const runner::RunFlags& f) {
  try {
    runner::resolve_sweep_config(f);
  } catch (const SettingError& e) {
    return e.spelled("--");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

std::string toml_error(const std::string& text, const runner::RunFlags& f = {}) {
  try {
    runner::sweep_config_from_toml(text, "sweep.toml", f);
  } catch (const SettingError& e) {
    return e.spelled("--");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(ConfigDefaults, FollowTheSpecAndTheMachine) {
  const runner::SweepConfig c = runner::resolve_sweep_config({});
  const bool gpu = lm::cuda_available();
  EXPECT_EQ(c.models, std::vector<std::string>{"tiny"});
  EXPECT_EQ(c.device, gpu ? "cuda" : "cpu");
  EXPECT_EQ(c.dtypes, std::vector<std::string>{gpu ? "bf16" : "fp32"});
  EXPECT_EQ(c.attention, std::vector<std::string>{lm::default_attention()});
  EXPECT_EQ(c.batch_sizes, (std::vector<int>{1, 4, 8, 16}));
  EXPECT_EQ(c.seq_lens, (std::vector<int>{64, 256, 512}));
  EXPECT_EQ(c.gen_tokens, 32);
  EXPECT_EQ(c.warmup, 3);
  EXPECT_EQ(c.reps, 10);
  EXPECT_EQ(c.kv_cache, std::vector<bool>{true});
  EXPECT_EQ(c.cuda_graphs, std::vector<bool>{false});
  EXPECT_EQ(c.db, "perfgate.db");
  EXPECT_FALSE(c.quiet);
  EXPECT_FALSE(c.peak_bw_gbps.has_value());
}

TEST(ConfigFlags, ListsAndScalarsParse) {
  const runner::SweepConfig c = runner::resolve_sweep_config(flags({{"batch-sizes", "1, 2,3"},
                                                                    {"seq-lens", "8,16"},
                                                                    {"gen-tokens", "4"},
                                                                    {"warmup", "0"},
                                                                    {"reps", "3"},
                                                                    {"device", "cpu"},
                                                                    {"dtype", "fp32,bf16"},
                                                                    {"kv-cache", "on,off"},
                                                                    {"attention", "math,sdpa"},
                                                                    {"cuda-graphs", "off"},
                                                                    {"seed", "42"},
                                                                    {"peak-bw-gbps", "3350.5"},
                                                                    {"peak-tflops", "989"}}));
  EXPECT_EQ(c.batch_sizes, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(c.seq_lens, (std::vector<int>{8, 16}));
  EXPECT_EQ(c.gen_tokens, 4);
  EXPECT_EQ(c.warmup, 0);
  EXPECT_EQ(c.reps, 3);
  EXPECT_EQ(c.dtypes, (std::vector<std::string>{"fp32", "bf16"}));
  EXPECT_EQ(c.kv_cache, (std::vector<bool>{true, false}));
  EXPECT_EQ(c.attention, (std::vector<std::string>{"math", "sdpa"}));
  EXPECT_EQ(c.seed, 42);
  EXPECT_DOUBLE_EQ(*c.peak_bw_gbps, 3350.5);
  EXPECT_DOUBLE_EQ(*c.peak_tflops, 989.0);
}

TEST(ConfigFlags, EachBadValueNamesItsFlag) {
  const std::vector<std::pair<std::map<std::string, std::string>, std::string>> cases = {
      {{{"batch-sizes", "0"}}, "--batch-sizes: '0' is not a positive integer"},
      {{{"batch-sizes", "1,,2"}}, "--batch-sizes: '' is not a positive integer"},
      {{{"batch-sizes", "4,x"}}, "--batch-sizes: 'x' is not a positive integer"},
      {{{"batch-sizes", "1,1"}}, "--batch-sizes: '1' is listed twice"},
      {{{"seq-lens", "-3"}}, "--seq-lens: '-3' is not a positive integer"},
      {{{"seq-lens", "99999999999"}}, "--seq-lens: '99999999999' is not a positive integer"},
      {{{"gen-tokens", "1"}}, "--gen-tokens: '1' is too small"},
      {{{"gen-tokens", "1,2"}}, "--gen-tokens: '1,2' is not a positive integer"},
      {{{"warmup", "-1"}}, "--warmup: '-1' is not a non-negative integer"},
      {{{"reps", "0"}}, "--reps: '0' is not a positive integer"},
      {{{"reps", "2.5"}}, "--reps: '2.5' is not a positive integer"},
      {{{"dtype", "fp64"}}, "--dtype: 'fp64' is not one of fp32, fp16, bf16"},
      {{{"device", "gpu"}}, "--device: 'gpu' is not cpu, cuda or cuda:N"},
      {{{"device", "cuda:x"}}, "--device: 'x' is not a CUDA device index"},
      {{{"kv-cache", "yes"}}, "--kv-cache: 'yes' is not on or off"},
      {{{"cuda-graphs", "true"}}, "--cuda-graphs: 'true' is not on or off"},
      {{{"attention", "flash"}}, "--attention: 'flash' is not one of sdpa, math"},
      {{{"model", "gpt5"}}, "--model: 'gpt5' is not a model preset"},
      {{{"model", "file:/nonexistent/x.safetensors"}},
       "--model: 'file:/nonexistent/x.safetensors' names a file that does not exist"},
      {{{"model", "file:"}}, "--model: 'file:' names no file"},
      {{{"seed", "-1"}}, "--seed: '-1' is not a non-negative integer"},
      {{{"repo", "/nonexistent/dir"}}, "--repo: '/nonexistent/dir' is not a directory"},
      {{{"db", "/nonexistent/dir/x.db"}}, "--db: '/nonexistent/dir/x.db' is in a directory that"},
      {{{"db", "/"}}, "--db: '/' is a directory"},
      {{{"csv", "/nonexistent/x.csv"}}, "--csv: '/nonexistent/x.csv' is in a directory"},
      {{{"json", ""}}, "--json: '' is empty"},
      {{{"peak-bw-gbps", "0"}}, "--peak-bw-gbps: '0' is not a number from 0.001 to 1e+07"},
      {{{"peak-tflops", "fast"}}, "--peak-tflops: 'fast' is not a number from 0.001 to 1e+07"},
      // Positive and finite, yet MFU would overflow to inf after the run row is written.
      {{{"peak-tflops", "1e-320"}}, "--peak-tflops: '1e-320' is not a number from"},
      {{{"peak-tflops", "1e308"}}, "--peak-tflops: '1e308' is not a number from"},
      {{{"peak-bw-gbps", "nan"}}, "--peak-bw-gbps: 'nan' is not a number from"},
      {{{"peak-bw-gbps", "inf"}}, "--peak-bw-gbps: 'inf' is not a number from"},
      {{{"json", "/dev/full"}}, "--json '/dev/full' is not a regular file"},
      {{{"exec", "x"}, {"model", "m"}, {"exec-timeout", "1e308"}},
       "--exec-timeout: '1e308' is larger than 1e+06"},
      {{{"csv", "/tmp"}}, "--csv: '/tmp' is a directory"},
      {{{"submit", "ftp://x"}}, "--submit: 'ftp://x' is not an http:// or https:// URL"},
      {{{"submit", "http://127.0.0.1:8080"}}, "--submit: needs --token-file"},
      {{{"token-file", "/etc/hostname"}}, "--token-file: only makes sense with --submit"},
      {{{"submit", "http://h:8080"}, {"token-file", "/nonexistent/token"}},
       "--token-file /nonexistent/token: cannot open"},
      {{{"model", "gpt2"}, {"seq-lens", "64,1000"}},
       "--seq-lens: prompt length 1000 + gen-tokens 32 = 1032 exceeds the context length 1024 "
       "of model 'gpt2'"},
  };
  for (const auto& [values, expected] : cases) {
    const std::string msg = error_of(flags(values));
    EXPECT_TRUE(msg.starts_with(expected)) << "got: " << msg << "\nexpected: " << expected;
  }
}

TEST(ConfigFlags, CudaWithoutGpuIsAUsageError) {
  if (lm::cuda_available()) GTEST_SKIP() << "this machine has a GPU";
  for (const char* dev : {"cuda", "cuda:0"}) {
    const std::string msg = error_of(flags({{"device", dev}}));
    EXPECT_TRUE(msg.starts_with(std::string("--device: '") + dev + "' asks for a GPU")) << msg;
  }
}

TEST(ConfigFlags, TokenFileMustHoldAToken) {
  TempDir dir;
  pgtest::write_file(dir / "empty", " \n");
  pgtest::write_file(dir / "token", "s3cret\n");
  for (const char* f : {"empty", "token"})  // token files are refused when others may read them
    std::filesystem::permissions(dir / f, std::filesystem::perms::owner_read,
                                 std::filesystem::perm_options::replace);
  EXPECT_TRUE(error_of(flags({{"submit", "http://h:1"}, {"token-file", (dir / "empty").string()}}))
                  .ends_with("is empty"));
  const runner::SweepConfig c = runner::resolve_sweep_config(flags(
      {{"submit", "https://perf.example.org/pg/"}, {"token-file", (dir / "token").string()}}));
  EXPECT_EQ(c.submit_url, "https://perf.example.org/pg/");
}

TEST(ConfigFlags, ExistingModelFileIsAccepted) {
  TempDir dir;
  pgtest::write_file(dir / "m.safetensors", "x");
  const std::string model = "file:" + (dir / "m.safetensors").string();
  EXPECT_EQ(runner::resolve_sweep_config(flags({{"model", model}})).models,
            std::vector<std::string>{model});
}

TEST(ConfigToml, KeysAreTheFlagNames) {
  const runner::SweepConfig c = runner::sweep_config_from_toml(R"(
model = ["tiny"]
dtype = "fp32"
batch-sizes = [1, 2]
seq-lens = 8
gen-tokens = 4
warmup = 1
reps = 3
device = "cpu"
kv-cache = [true, "off"]
attention = "math"
cuda-graphs = false
seed = 7
db = "x.db"
quiet = true
peak-bw-gbps = 100
peak-tflops = 1.5
)",
                                                               "sweep.toml");
  EXPECT_EQ(c.batch_sizes, (std::vector<int>{1, 2}));
  EXPECT_EQ(c.seq_lens, std::vector<int>{8});
  EXPECT_EQ(c.gen_tokens, 4);
  EXPECT_EQ(c.kv_cache, (std::vector<bool>{true, false}));
  EXPECT_EQ(c.cuda_graphs, std::vector<bool>{false});
  EXPECT_EQ(c.attention, std::vector<std::string>{"math"});
  EXPECT_EQ(c.seed, 7);
  EXPECT_EQ(c.db, "x.db");
  EXPECT_TRUE(c.quiet);
  EXPECT_DOUBLE_EQ(*c.peak_bw_gbps, 100.0);
  EXPECT_DOUBLE_EQ(*c.peak_tflops, 1.5);
}

TEST(ConfigToml, MessagesNameFileAndLine) {
  EXPECT_EQ(toml_error("model = \"tiny\"\n\nbatch-sizes = [1, 0]\n"),
            "sweep.toml:3: batch-sizes: '0' is not a positive integer");
  // An element on its own line is reported on that line.
  EXPECT_EQ(toml_error("seq-lens = [\n  8,\n  16,\n  0,\n]\n"),
            "sweep.toml:4: seq-lens: '0' is not a positive integer");
  EXPECT_EQ(toml_error("reps = 3\nbatch_sizes = [1]\n"),
            "sweep.toml:2: unknown key 'batch_sizes' (did you mean 'batch-sizes'?)");
  EXPECT_TRUE(
      toml_error("\nfrobnicate = 1\n").starts_with("sweep.toml:2: unknown key 'frobnicate'"));
  EXPECT_TRUE(toml_error("[run]\nreps = 3\n").starts_with("sweep.toml:1: unknown key 'run'"));
  EXPECT_EQ(toml_error("reps = \"ten\"\n"),
            "sweep.toml:1: reps: expected an integer, got a string");
  EXPECT_EQ(toml_error("\n\nreps = 1.5\n"),
            "sweep.toml:3: reps: expected an integer, got a floating-point number");
  EXPECT_EQ(toml_error("batch-sizes = [1, \"2\"]\n"),
            "sweep.toml:1: batch-sizes: expected an integer or an array of integers, got a string");
  EXPECT_EQ(toml_error("model = 5\n"),
            "sweep.toml:1: model: expected a string or an array of strings, got an integer");
  EXPECT_EQ(toml_error("quiet = \"yes\"\n"),
            "sweep.toml:1: quiet: expected a boolean, got a string");
  EXPECT_EQ(toml_error("dtype = []\n"), "sweep.toml:1: dtype: empty list");
  EXPECT_EQ(toml_error("dtype = \"fp8\"\n"),
            "sweep.toml:1: dtype: 'fp8' is not one of fp32, fp16, bf16");
  EXPECT_EQ(toml_error("kv-cache = \"maybe\"\n"),
            "sweep.toml:1: kv-cache: 'maybe' is not on or off");
  EXPECT_EQ(toml_error("reps = 3\nseq-lens = [64, 2000]\nmodel = \"gpt2\"\n"),
            "sweep.toml:2: seq-lens: prompt length 2000 + gen-tokens 32 = 2032 exceeds the context "
            "length 1024 of model 'gpt2'");
  // Syntax errors carry the line of toml++'s parser.
  EXPECT_TRUE(toml_error("reps = 3\nwarmup = \n").starts_with("sweep.toml:2: "))
      << toml_error("reps = 3\nwarmup = \n");
  EXPECT_TRUE(toml_error("reps = 3\nreps = 4\n").starts_with("sweep.toml:2: "));
}

TEST(ConfigToml, FlagsOverrideTheFile) {
  const runner::SweepConfig c = runner::sweep_config_from_toml(
      "batch-sizes = [1, 2]\nreps = 5\n", "sweep.toml", flags({{"batch-sizes", "4"}}));
  EXPECT_EQ(c.batch_sizes, std::vector<int>{4});
  EXPECT_EQ(c.reps, 5);
  // A bad file value is not reported when a flag replaced it; a bad flag names the flag.
  EXPECT_EQ(toml_error("reps = 0\n", flags({{"reps", "2"}})), "");
  EXPECT_EQ(toml_error("reps = 2\n", flags({{"reps", "0"}})),
            "--reps: '0' is not a positive integer");
}

TEST(ConfigToml, ReadFromAFileByPath) {
  TempDir dir;
  pgtest::write_file(dir / "sweep.toml", "reps = 4\nwarmup = 0\n");
  runner::RunFlags f;
  f.config_path = (dir / "sweep.toml").string();
  EXPECT_EQ(runner::resolve_sweep_config(f).reps, 4);
  pgtest::write_file(dir / "bad.toml", "reps = 4\n\nwarmup = -2\n");
  f.config_path = (dir / "bad.toml").string();
  EXPECT_EQ(error_of(f), f.config_path + ":3: warmup: '-2' is not a non-negative integer");
  f.config_path = (dir / "missing.toml").string();
  EXPECT_EQ(error_of(f), "--config: cannot read '" + f.config_path + "'");
  f.config_path = dir.str();
  EXPECT_EQ(error_of(f), "--config: '" + dir.str() + "' is a directory");
}

TEST(Expand, CartesianProductInDocumentedOrder) {
  runner::SweepConfig c = runner::resolve_sweep_config(flags({{"model", "tiny,gpt2"},
                                                              {"dtype", "fp32,bf16"},
                                                              {"attention", "sdpa,math"},
                                                              {"kv-cache", "on,off"},
                                                              {"batch-sizes", "1,2"},
                                                              {"seq-lens", "8,16,32"},
                                                              {"gen-tokens", "4"},
                                                              {"device", "cpu"}}));
  const auto cells = runner::expand(c);
  ASSERT_EQ(cells.size(), 2u * 2 * 2 * 2 * 2 * 3);
  // Prompt length varies fastest, then batch, then kv, attention, dtype; model slowest.
  EXPECT_EQ(cells[0].seq_len, 8);
  EXPECT_EQ(cells[1].seq_len, 16);
  EXPECT_EQ(cells[3].batch_size, 2);
  EXPECT_FALSE(cells[6].kv_cache);
  EXPECT_EQ(cells[12].attention, "math");
  EXPECT_EQ(cells[24].dtype, "bf16");
  EXPECT_EQ(cells[48].model, "gpt2");
  std::set<CellKey> unique(cells.begin(), cells.end());
  EXPECT_EQ(unique.size(), cells.size());
  for (const auto& k : cells) {
    EXPECT_EQ(k.device, "cpu");
    EXPECT_EQ(k.gen_tokens, 4);
    EXPECT_FALSE(k.cuda_graphs);
  }
}

TEST(ConfigJson, RecordsTheResolvedSweep) {
  const runner::SweepConfig c =
      runner::resolve_sweep_config(flags({{"batch-sizes", "1,2"}, {"kv-cache", "off"}}));
  const auto j = nlohmann::json::parse(runner::sweep_config_json(c));
  EXPECT_EQ(j["batch-sizes"], nlohmann::json({1, 2}));
  EXPECT_EQ(j["kv-cache"], nlohmann::json({"off"}));
  EXPECT_EQ(j["device"], c.device);
  EXPECT_EQ(j["dtype"], nlohmann::json(c.dtypes));
  EXPECT_EQ(j["reps"], 10);
}

}  // namespace
}  // namespace pg
