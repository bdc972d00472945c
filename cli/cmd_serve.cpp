// `perfgate serve`: the dashboard and JSON API (web/server.h).
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "cli/commands.h"
#include "common/token_file.h"
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
                  "legacy credential: a file holding a bearer token that may ingest and triage "
                  "(mode 600, as ssh keys); named ones: perfgate token add");
  cmd->add_option("--auth-header", opt->auth_header,
                  "header an SSO proxy names the logged-in user in (e.g. X-Forwarded-User): a "
                  "triage identity, believed only from --trusted-proxy addresses");
  cmd->add_option("--trusted-proxy", opt->trusted_proxy,
                  "comma-separated addresses and CIDR networks of the proxy (e.g. 127.0.0.1); "
                  "the header from any other peer is ignored");
  cmd->add_option("--threads", opt->threads, "worker threads (each holds one SQLite connection)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  // Checked by the gate settings' own rules (app/gate_settings.h) when serve starts.
  cmd->add_option("--alpha", opt->gate_settings.gate.alpha,
                  "the gate's alpha for the chart's flags and badges (use your CI gate's)")
      ->capture_default_str();
  cmd->add_option("--min-effect", opt->gate_settings.gate.min_effect,
                  "the gate's minimum relative effect for flags and badges (use your CI gate's)")
      ->capture_default_str();
  cmd->add_option("--main-branch", opt->main_branch,
                  "branch the trends show by default (default: main, else master, else the "
                  "branch with most runs)");
  cmd->add_option("--repo-url", opt->repo_url,
                  "repository web URL; commit SHAs link to URL/commit/SHA");
  cmd->add_option("--max-body", opt->max_body_bytes,
                  "largest ingest body in bytes, chunked or not (413 beyond)")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1}, size_t{1} << 32));
  auto seconds = [cmd](const char* name, std::chrono::milliseconds& field, const char* what) {
    cmd->add_option_function<double>(
           name,
           [&field, name](double s) {
             if (!(s > 0 && s <= 3600))
               throw CLI::ValidationError(name, "must be a number of seconds in (0, 3600]");
             field = std::chrono::milliseconds(static_cast<int64_t>(s * 1000));
           },
           what)
        ->default_str(std::to_string(field.count() / 1000));
  };
  seconds("--header-timeout", opt->limits.header_timeout,
          "seconds a client has to send a whole request head (408 beyond)");
  seconds("--request-timeout", opt->limits.request_timeout,
          "seconds a client has to send a whole request, head and body (408 beyond)");
  seconds("--idle-timeout", opt->limits.idle_timeout,
          "seconds a kept-alive connection may wait for its next request");
  cmd->add_option("--max-connections", opt->limits.max_connections,
                  "open connections in all (503 beyond)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--max-connections-per-client", opt->limits.max_connections_per_client,
                  "open connections per client address (503 beyond; raise it behind a proxy)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  cmd->add_flag(
      "--quiet", [opt](int64_t) { opt->log_requests = false; }, "do not log one line per request");
  cmd->callback([&action, opt, token_file] {
    action = [opt, token_file]() -> int {
      app::validate(opt->gate_settings);
      if (!token_file->empty()) {
        opt->token = read_token_file(*token_file, "--token-file");
        if (opt->token->size() < 16)
          std::fprintf(stderr,
                       "perfgate serve: warning: the ingest token in %s is only %zu characters\n",
                       token_file->c_str(), opt->token->size());
      }
      const int rc = web::run_serve(*opt);
      // The server is down and its database closed. Skip the exit-time teardown of the libraries
      // the binary links (in perfgate-runner, which serves too, LibTorch's takes 0.5 s or more),
      // so a signal ends the process within a second.
      std::fflush(nullptr);
      std::_Exit(rc);
    };
  });
}

}  // namespace pg::cli
