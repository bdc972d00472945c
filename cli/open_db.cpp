#include <cstdlib>
#include <filesystem>
#include <memory>

#include "cli/commands.h"
#include "common/errors.h"
#include "store/store.h"

namespace pg::cli {

std::unique_ptr<store::Store> open_existing_db(const std::string& path, const std::string& flag) {
  if (!std::filesystem::exists(path))
    throw UsageError(flag + " " + path + ": no such database file");
  return std::make_unique<store::Store>(path, /*read_only=*/true);
}

std::string default_user_name() {
  for (const char* var : {"GITHUB_ACTOR", "USER", "LOGNAME"})
    if (const char* v = std::getenv(var); v && *v) return v;
  return "perfgate";
}

std::unique_ptr<store::Store> open_existing_db_for_write(const std::string& path,
                                                         const std::string& flag) {
  if (path.empty()) throw UsageError(flag + ": empty path");
  if (!std::filesystem::exists(path))
    throw UsageError(flag + " " + path +
                     ": no such database file (create one with `perfgate init " + flag + " " +
                     path + "`)");
  return std::make_unique<store::Store>(path);
}

}  // namespace pg::cli
