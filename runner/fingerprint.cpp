#include "runner/fingerprint.h"

#include <fmt/format.h>
#include <git2.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <thread>

#include "common/errors.h"
#include "common/git_remote.h"
#include "common/utc_time.h"
#include "common/version.h"
#include "runner/lm/measure.h"
#include "runner/text.h"

namespace pg::runner {
namespace {

void init_libgit2() {
  static std::once_flag once;
  std::call_once(once, [] { git_libgit2_init(); });
}

template <typename T, void (*Free)(T*)>
struct GitDeleter {
  void operator()(T* p) const { Free(p); }
};
using RepoPtr = std::unique_ptr<git_repository, GitDeleter<git_repository, git_repository_free>>;
using RefPtr = std::unique_ptr<git_reference, GitDeleter<git_reference, git_reference_free>>;
using CommitPtr = std::unique_ptr<git_commit, GitDeleter<git_commit, git_commit_free>>;
using StatusPtr =
    std::unique_ptr<git_status_list, GitDeleter<git_status_list, git_status_list_free>>;

std::string last_git_error() {
  const git_error* e = git_error_last();
  return e && e->message ? e->message : "unknown libgit2 error";
}

std::string first_line(const char* message) {
  std::string m = message ? message : "";
  const auto start = m.find_first_not_of("\r\n");
  if (start == std::string::npos) return "";
  m = m.substr(start);
  m = m.substr(0, m.find('\n'));
  while (!m.empty() && (m.back() == '\r' || m.back() == ' ')) m.pop_back();
  return m;
}

std::string strip_trailing_slash(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

bool tracked_changes(git_repository* repo) {
  if (git_repository_is_bare(repo)) return false;
  git_status_options opts;
  git_status_options_init(&opts, GIT_STATUS_OPTIONS_VERSION);
  opts.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
  opts.flags = 0;  // neither untracked nor ignored files: only changes to tracked content count
  git_status_list* raw = nullptr;
  if (git_status_list_new(&raw, repo, &opts) != 0)
    throw UsageError("cannot read the git status: " + last_git_error());
  StatusPtr list(raw);
  return git_status_list_entrycount(list.get()) > 0;
}

// remote.origin.url without credentials; none when there is no origin (a local repository).
std::optional<std::string> origin_url(git_repository* repo) {
  git_remote* remote = nullptr;
  if (git_remote_lookup(&remote, repo, "origin") != 0) {
    git_error_clear();
    return std::nullopt;
  }
  const char* url = git_remote_url(remote);
  std::optional<std::string> out;
  if (url && *url) out = redact_remote_url(to_valid_utf8(url));
  git_remote_free(remote);
  return out;
}

}  // namespace

GitInfo read_git_info(const std::string& path, const std::string& setting) {
  init_libgit2();
  GitInfo info;
  std::error_code ec;
  const auto absolute = std::filesystem::absolute(path, ec);
  info.repo_path = to_valid_utf8(ec ? path : absolute.lexically_normal().string());
  info.repo_path = strip_trailing_slash(info.repo_path);

  git_repository* raw_repo = nullptr;
  const int rc = git_repository_open_ext(&raw_repo, path.c_str(), 0, nullptr);
  if (rc == GIT_ENOTFOUND) {
    info.state = "not-a-repository";
    return info;
  }
  if (rc == GIT_EOWNER)
    throw SettingError(fmt::format(
        "{}: {} (git's safe.directory check refuses a repository owned by another user; if you "
        "trust it: git config --global --add safe.directory <its path>)",
        setting, last_git_error()));
  if (rc != 0)
    throw SettingError(fmt::format("{}: cannot open the git repository at '{}': {}", setting, path,
                                   last_git_error()));
  RepoPtr repo(raw_repo);
  const char* root = git_repository_workdir(repo.get());
  if (!root) root = git_repository_path(repo.get());
  info.repo_path = strip_trailing_slash(to_valid_utf8(root));
  info.remote = origin_url(repo.get());

  const int unborn = git_repository_head_unborn(repo.get());
  if (unborn == 1) {
    info.state = "no-commit";
    info.dirty = tracked_changes(repo.get());
    return info;
  }
  git_reference* raw_head = nullptr;
  if (unborn < 0 || git_repository_head(&raw_head, repo.get()) != 0)
    throw SettingError(
        fmt::format("{}: cannot read HEAD of '{}': {}", setting, info.repo_path, last_git_error()));
  RefPtr head(raw_head);
  git_object* obj = nullptr;
  if (git_reference_peel(&obj, head.get(), GIT_OBJECT_COMMIT) != 0)
    throw SettingError(fmt::format("{}: HEAD of '{}' is not a commit: {}", setting, info.repo_path,
                                   last_git_error()));
  CommitPtr commit(reinterpret_cast<git_commit*>(obj));

  char sha[GIT_OID_HEXSZ + 1];
  git_oid_tostr(sha, sizeof sha, git_commit_id(commit.get()));
  info.commit = sha;
  info.branch = git_repository_head_detached(repo.get()) == 1
                    ? std::string("detached")
                    : to_valid_utf8(git_reference_shorthand(head.get()));
  info.subject = to_valid_utf8(first_line(git_commit_message(commit.get())));
  info.time = iso8601_utc(static_cast<std::time_t>(git_commit_time(commit.get())));
  info.dirty = tracked_changes(repo.get());
  return info;
}

namespace {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  // x86 says "model name"; some ARM kernels only give "Hardware" or "Processor".
  for (const char* wanted : {"model name", "Hardware", "Processor", "cpu model"}) {
    in.clear();
    in.seekg(0);
    while (std::getline(in, line)) {
      if (!line.starts_with(wanted)) continue;
      const auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      const auto v = line.find_first_not_of(" \t", colon + 1);
      if (v != std::string::npos) return to_valid_utf8(line.substr(v));
    }
  }
  return "unknown";
}

std::string os_description() {
  std::string pretty;
  std::ifstream in("/etc/os-release");
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with("PRETTY_NAME=")) continue;
    pretty = line.substr(12);
    if (pretty.size() >= 2 && pretty.front() == '"' && pretty.back() == '"')
      pretty = pretty.substr(1, pretty.size() - 2);
  }
  struct utsname u {};
  std::string kernel = "unknown";
  if (uname(&u) == 0) kernel = fmt::format("{} {} {}", u.sysname, u.release, u.machine);
  return to_valid_utf8(pretty.empty() ? kernel : pretty + ", " + kernel);
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return to_valid_utf8(buf);
}

}  // namespace

Environment host_environment() {
  return {
      {"cpu", cpu_model()},
      {"logical_cpus", std::to_string(std::thread::hardware_concurrency())},
      {"hostname", host_name()},
      {"os", os_description()},
      {"compiler", kCompiler},
      {"build_type", kBuildType},
      {"perfgate", kVersion},
  };
}

Environment run_environment(const std::string& device) {
  Environment env = host_environment();
  for (const auto& [k, v] : lm::device_environment(device)) env[k] = v;
  return env;
}

}  // namespace pg::runner
