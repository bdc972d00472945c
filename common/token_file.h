// The one reader of secret token files, shared by `perfgate serve --token-file` (the ingest token
// it requires) and `perfgate run --submit --token-file` (the token it sends). Dependency-free, so
// every layer may link it (common/CMakeLists.txt: pg_token_file).
#pragma once
#include <cstddef>
#include <string>

#include "common/errors.h"

namespace pg {

// Largest token file read: a bearer token is a few dozen bytes; anything bigger is a mistake (the
// wrong file, or a device such as /dev/zero that would never end).
inline constexpr size_t kMaxTokenFileBytes = 4096;

// Reads the token from `path`: the file's content without surrounding whitespace, one word.
// Refused with a SettingError naming `setting` (a marked setting, common/errors.h, or a flag that
// cli/ spelled) and the path (exit 2):
// - a file that cannot be opened, or is not a regular file (a FIFO or device would block or never
//   end);
// - a file that group or others may access (mode & 077), like ssh refuses a private key: the fix
//   is `chmod 600 FILE`;
// - a file larger than kMaxTokenFileBytes; an empty file or one holding more than one word.
std::string read_token_file(const std::string& path,
                            const std::string& setting = SettingError::setting("token-file"));

}  // namespace pg
