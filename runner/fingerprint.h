// The environment fingerprint stored with every run: which code (git) ran where (host, device).
#pragma once
#include <string>

#include "common/errors.h"
#include "core/run.h"

namespace pg::runner {

// The git state of the repository containing `path` (searched upward, like git does).
// - not inside a repository: state "not-a-repository", commit/branch/subject/time null;
// - a repository whose HEAD has no commit yet: state "no-commit", the same fields null;
// - otherwise: full 40-hex SHA, branch name or "detached", commit time as ISO 8601 UTC,
//   subject = first line of the message (invalid UTF-8 replaced, never raw bytes).
// `dirty` is true when a TRACKED file differs from HEAD, in the index or the work tree; untracked
// files do not count (build folders and the perfgate.db a run writes would make every run dirty).
// repo_path is the work tree (the git dir for a bare repository), or `path` made absolute
// outside a repository. A repository that exists but cannot be read (corrupt, or refused by
// git's safe.directory ownership check) throws SettingError naming `setting` (common/errors.h).
GitInfo read_git_info(const std::string& path,
                      const std::string& setting = SettingError::setting("repo"));

// Host part: cpu, hostname, os, compiler, build_type, perfgate.
Environment host_environment();

// host_environment() merged with device_environment(device) from runner/lm.
Environment run_environment(const std::string& device);

}  // namespace pg::runner
