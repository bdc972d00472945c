// `perfgate serve`: the dashboard and JSON API (web/server.h).
#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "web/server.h"

namespace pg::cli {

void add_serve_command(CLI::App& root, Action& action) {
  auto opt = std::make_shared<web::ServeOptions>();
  auto token_file = std::make_shared<std::string>();
  CLI::App* cmd = root.add_subcommand(
      "serve",
      "serve the trend dashboard and JSON API over a perfgate database (read while runners write)");
  cmd->add_option("--db", opt->db_path, "perfgate database to serve (must exist)")
      ->capture_default_str();
  cmd->add_option("--host", opt->host, "address to bind")->capture_default_str();
  cmd->add_option("--port", opt->port, "TCP port (0: any free port)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--token-file", *token_file,
                  "file whose first line is the bearer token POST /api/v1/runs requires; without "
                  "it, ingest is off");
  cmd->add_option("--threads", opt->threads, "worker threads (each holds one SQLite connection)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--alpha", opt->alpha,
                  "the gate's alpha for the chart's flags and badges (use your CI gate's)")
      ->capture_default_str()
      ->check(CLI::Range(1e-12, 1.0 - 1e-12));
  cmd->add_option("--min-effect", opt->min_effect,
                  "the gate's minimum relative effect for flags and badges (use your CI gate's)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 10.0));
  cmd->add_option("--main-branch", opt->main_branch,
                  "branch the trends show by default (default: main, else master, else the "
                  "branch with most runs)");
  cmd->add_option("--repo-url", opt->repo_url,
                  "repository web URL; commit SHAs link to URL/commit/SHA");
  cmd->add_flag(
      "--quiet", [opt](int64_t) { opt->log_requests = false; }, "do not log one line per request");
  cmd->callback([&action, opt, token_file] {
    action = [opt, token_file] {
      if (!token_file->empty()) opt->token = web::read_token_file(*token_file);
      return web::run_serve(*opt);
    };
  });
}

}  // namespace pg::cli
