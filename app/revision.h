// Resolving the --base / --head revisions of `perfgate compare` to full commit SHAs.
// Order (docs/CLI.md): a full SHA or a unique prefix stored in the database; else any revision the
// git repository resolves (branch, tag, HEAD~1, short SHA); `merge-base` = merge-base of head and
// the main branch. Unknown or ambiguous revisions throw UsageError (exit 2), a SettingError where
// the message names compare's settings (repo, base, main: common/errors.h).
#pragma once
#include <string>
#include <vector>

namespace pg::store {
class Store;
}

namespace pg::app {

struct RevisionContext {
  store::Store* store = nullptr;     // stored commits; may be null (git only)
  std::string repo = ".";            // git repository (--repo)
  std::string main_branch = "main";  // for `merge-base`; "origin/<main>" is tried after it
};

// Where a revision was found, for messages and reports.
struct ResolvedRevision {
  std::string sha;      // 40 lower-case hex
  std::string spelled;  // what the user typed
  std::string source;   // "database" | "git" | "merge-base"
};

inline constexpr const char* kMergeBaseRevision = "merge-base";

// Resolves a revision other than `merge-base`.
ResolvedRevision resolve_revision(const std::string& rev, const RevisionContext& ctx);

// The merge-base of `head_sha` and ctx.main_branch (tried as given, then as origin/<main>).
ResolvedRevision resolve_merge_base(const std::string& head_sha, const RevisionContext& ctx);

// True for 40 hex digits.
bool is_full_sha(const std::string& s);

}  // namespace pg::app
