#include "app/revision.h"

#include <git2.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <mutex>

#include "common/errors.h"
#include "store/store.h"

namespace pg::app {
namespace {

// libgit2 keeps global state; initialise once per process and never shut down (other threads, e.g.
// the web server's, may still be resolving).
void ensure_libgit2() {
  static std::once_flag once;
  std::call_once(once, [] { git_libgit2_init(); });
}

std::string last_git_error() {
  const git_error* e = git_error_last();
  return e && e->message ? e->message : "unknown libgit2 error";
}

struct RepoCloser {
  void operator()(git_repository* r) const { git_repository_free(r); }
};
struct ObjectCloser {
  void operator()(git_object* o) const { git_object_free(o); }
};
using RepoPtr = std::unique_ptr<git_repository, RepoCloser>;
using ObjectPtr = std::unique_ptr<git_object, ObjectCloser>;

// Messages name compare's settings (repo, base, main); the CLI spells them as its flags.
std::string setting(const char* name) { return SettingError::setting(name); }

// Null when `path` is not inside a git repository; `why` then says so.
RepoPtr open_repo(const std::string& path, std::string* why) {
  ensure_libgit2();
  git_repository* raw = nullptr;
  if (git_repository_open_ext(&raw, path.c_str(), 0, nullptr) != 0) {
    *why = setting("repo") + " " + path + " is not a git repository (" + last_git_error() + ")";
    return nullptr;
  }
  return RepoPtr(raw);
}

std::string oid_hex(const git_oid* oid) {
  char buf[GIT_OID_HEXSZ + 1];
  git_oid_tostr(buf, sizeof buf, oid);
  return buf;
}

bool is_hex(const std::string& s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isxdigit(c) != 0; });
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Resolves through git and peels to a commit: branches, tags (annotated too), HEAD~1, short SHAs.
// Returns false with `why` set when git cannot.
bool git_resolve(git_repository* repo, const std::string& rev, std::string* sha, std::string* why) {
  git_object* raw = nullptr;
  int rc = git_revparse_single(&raw, repo, rev.c_str());
  if (rc != 0) {
    *why = rc == GIT_EAMBIGUOUS ? "ambiguous in the git repository: " + last_git_error()
                                : last_git_error();
    return false;
  }
  ObjectPtr obj(raw);
  git_object* peeled = nullptr;
  if (git_object_peel(&peeled, obj.get(), GIT_OBJECT_COMMIT) != 0) {
    *why = "does not name a commit (" + last_git_error() + ")";
    return false;
  }
  ObjectPtr commit(peeled);
  *sha = oid_hex(git_object_id(commit.get()));
  return true;
}

// Shortest hex prefix git accepts; shorter strings are more likely words than SHAs.
constexpr size_t kMinPrefix = 4;

}  // namespace

bool is_full_sha(const std::string& s) { return s.size() == GIT_OID_HEXSZ && is_hex(s); }

ResolvedRevision resolve_revision(const std::string& rev, const RevisionContext& ctx) {
  if (rev.empty()) throw UsageError("empty revision");
  if (rev == kMergeBaseRevision) {
    throw SettingError("'merge-base' is only valid for " + setting("base") +
                       " (it needs the head to be resolved)");
  }
  // (a) a stored commit: full SHA or unique prefix.
  if (ctx.store && is_hex(rev) && rev.size() >= kMinPrefix && rev.size() <= GIT_OID_HEXSZ) {
    std::vector<std::string> hits = ctx.store->commits_with_prefix(lower(rev));
    if (hits.size() == 1) return {lower(hits.front()), rev, "database"};
    if (hits.size() > 1) {
      std::sort(hits.begin(), hits.end());
      std::string msg = "revision '" + rev + "' is ambiguous: " + std::to_string(hits.size()) +
                        " stored commits start with it:";
      for (const auto& h : hits) msg += "\n  " + h;
      throw UsageError(msg + "\nuse a longer prefix");
    }
  }
  // (b) anything git resolves in --repo.
  std::string why;
  RepoPtr repo = open_repo(ctx.repo, &why);
  if (repo) {
    std::string sha;
    if (git_resolve(repo.get(), rev, &sha, &why)) return {sha, rev, "git"};
  }
  // A full SHA is unambiguous even when nothing knows it: the gate then reports no stored run.
  if (is_full_sha(rev)) return {lower(rev), rev, "sha"};
  throw SettingError("unknown revision '" + rev + "': not a stored commit" +
                     (ctx.store ? "" : " (no database)") + ", and git cannot resolve it: " + why);
}

ResolvedRevision resolve_merge_base(const std::string& head_sha, const RevisionContext& ctx) {
  std::string why;
  RepoPtr repo = open_repo(ctx.repo, &why);
  const std::string merge_base = setting("base") + " merge-base";
  if (!repo) throw SettingError(merge_base + " needs a git repository: " + why);

  git_oid head_oid;
  if (git_oid_fromstr(&head_oid, head_sha.c_str()) != 0) {
    throw SettingError(merge_base + ": head '" + head_sha + "' is not a SHA");
  }
  {
    git_object* raw = nullptr;
    if (git_object_lookup(&raw, repo.get(), &head_oid, GIT_OBJECT_COMMIT) != 0) {
      throw SettingError(merge_base + ": head commit " + head_sha + " is not in " +
                         setting("repo") + " " + ctx.repo + " (" + last_git_error() + ")");
    }
    git_object_free(raw);
  }

  std::vector<std::string> candidates = {ctx.main_branch};
  if (ctx.main_branch.rfind("origin/", 0) != 0) candidates.push_back("origin/" + ctx.main_branch);
  std::string main_sha, tried;
  for (const auto& c : candidates) {
    std::string err;
    if (git_resolve(repo.get(), c, &main_sha, &err)) break;
    main_sha.clear();
    tried += "\n  " + c + ": " + err;
  }
  if (main_sha.empty()) {
    throw SettingError(merge_base + ": cannot resolve the main branch (" + setting("main") + " " +
                       ctx.main_branch + "):" + tried);
  }
  git_oid main_oid, base_oid;
  git_oid_fromstr(&main_oid, main_sha.c_str());
  int rc = git_merge_base(&base_oid, repo.get(), &head_oid, &main_oid);
  if (rc == GIT_ENOTFOUND) {
    throw SettingError(merge_base + ": " + head_sha + " and " + ctx.main_branch +
                       " have no common ancestor");
  }
  if (rc != 0) throw RuntimeFailure("git merge-base failed: " + last_git_error());
  return {oid_hex(&base_oid), kMergeBaseRevision, "merge-base"};
}

}  // namespace pg::app
