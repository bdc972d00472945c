// `perfgate run`'s command line (cli/run_flags.h): a flag per setting, and messages that name each
// setting as it was given, flag or sweep-file key.
#include "cli/run_flags.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <algorithm>

namespace pg::cli {
namespace {

TEST(ConfigCli, FlagsRegisterAndHelpShowsDefaults) {
  CLI::App app;
  runner::RunFlags f;
  add_run_flags(app, f);
  const std::string help = app.help();
  for (const auto& s : runner::run_settings()) {
    EXPECT_NE(help.find("--" + s.name), std::string::npos) << s.name;
    if (!s.default_text.empty()) {
      EXPECT_NE(help.find(s.default_text), std::string::npos) << s.name;
    }
  }
  EXPECT_NE(help.find("--config"), std::string::npos);
  std::vector<std::string> args = {"--quiet",  "--batch-sizes", "1,2",
                                   "--reps=3", "--config",      "x.toml"};
  std::reverse(args.begin(), args.end());
  app.parse(args);
  EXPECT_TRUE(f.quiet);
  EXPECT_EQ(f.values.at("batch-sizes"), "1,2");
  EXPECT_EQ(f.values.at("reps"), "3");
  EXPECT_EQ(f.values.count("seq-lens"), 0u);  // not given stays absent
  EXPECT_EQ(f.config_path, "x.toml");
}

// The help names other settings as flags too ("relative paths resolve against --repo").
TEST(ConfigCli, HelpNamesOtherSettingsAsFlags) {
  CLI::App app;
  runner::RunFlags f;
  add_run_flags(app, f);
  const std::string help = app.help();
  EXPECT_NE(help.find("bearer token for --submit"), std::string::npos) << help;
  EXPECT_EQ(help.find('\x1f'), std::string::npos) << help;
}

// A setting the sweep file gave is its key there, led by the key's file and line; the rest are
// flags (a sweep file's AOTInductor cell never says --kv-cache off).
TEST(ConfigCli, MessagesNameTheFilesKeysAndTheFlags) {
  const runner::SweepConfig cfg =
      sweep_config_from_toml("reps = 2\nkv-cache = \"off\"\n", "sweep.toml",
                             runner::RunFlags{{}, {{"device", "cpu"}}, false});
  ASSERT_EQ(cfg.given_in_file.at("kv-cache"), "sweep.toml:2");
  EXPECT_EQ(cfg.given_in_file.count("device"), 0u);
  const SettingError e = SettingError(SettingError::setting("kv-cache") + " off: x (use " +
                                      SettingError::setting("kv-cache") + " on, " +
                                      SettingError::setting("device") + " cpu)")
                             .with_context("cell c: ");
  EXPECT_EQ(run_error_message(e, cfg),
            "sweep.toml:2: cell c: kv-cache off: x (use kv-cache on, --device cpu)");
  const SettingError flag(SettingError::setting("device") + " cuda: no GPU");
  EXPECT_EQ(run_error_message(flag, cfg), "--device cuda: no GPU");
}

}  // namespace
}  // namespace pg::cli
