// The one way perfgate writes an output file (run exports, compare reports): a reader sees the old
// content or the new, never half a file, and nothing but a regular file is ever replaced.
// See docs/STORE.md ("Output files").
#pragma once
#include <string>
#include <string_view>

namespace pg::store {

// Writes `text` to `path` through a fresh temporary file in the same directory, flushed to disk
// and then renamed over the target (its permissions kept when it existed).
// - A symlink is followed deliberately: the file it finally points to is replaced, the link stays.
// - A target that exists but is not a regular file (a directory, /dev/full, a FIFO) is refused
//   with UsageError before anything is written.
// `what` names the file in messages: a flag cli/ spelled ("--json") or what the file is ("JSON
// export"); a refusal is a SettingError (common/errors.h), so `what` may also be a marked setting.
// Throws RuntimeFailure naming the path when writing fails (disk full, file size limit, ...); the
// target is then untouched and the temporary removed. That message is not spelled by any front
// end: `what` must not be a marked setting there.
void write_file_atomically(const std::string& path, std::string_view text, const std::string& what);

// Where write_file_atomically(path) will write: symlinks resolved (relative ones against their
// directory), at most 40 levels. Throws SettingError naming `what` (a flag, a marked setting or
// file:line: key) for a loop or a target that is not a regular file. Callers may check this up
// front, before an hour-long sweep.
std::string resolve_output_target(const std::string& path, const std::string& what);

}  // namespace pg::store
