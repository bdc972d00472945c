#include <filesystem>
#include <memory>

#include "cli/commands.h"
#include "common/errors.h"
#include "store/store.h"

namespace pg::cli {

std::unique_ptr<Store> open_existing_db(const std::string& path, const std::string& flag) {
  if (!std::filesystem::exists(path))
    throw UsageError(flag + " " + path + ": no such database file");
  return std::make_unique<Store>(path, /*read_only=*/true);
}

}  // namespace pg::cli
