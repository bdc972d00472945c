// `perfgate init`: creates an empty perfgate database (the schema, no runs), so a central server
// can start `perfgate serve --db FILE --token-file ...` before any runner has submitted. serve
// itself never creates a database: a mistyped --db must fail loudly, not show an empty dashboard.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>

#include "cli/commands.h"
#include "common/errors.h"
#include "store/store.h"

namespace pg::cli {

void add_init_command(CLI::App& root, Action& action) {
  auto db = std::make_shared<std::string>();
  CLI::App* cmd = root.add_subcommand(
      "init", "create an empty perfgate database (e.g. for a central `perfgate serve`)");
  cmd->add_option("--db", *db, "database file to create")->required();
  cmd->callback([&action, db] {
    action = [db] {
      if (db->empty()) throw UsageError("--db: empty path");
      namespace fs = std::filesystem;
      const fs::path parent = fs::absolute(*db).parent_path();
      std::error_code ec;
      if (!fs::is_directory(parent, ec))
        throw UsageError("--db " + *db + ": directory " + parent.string() + " does not exist");
      const bool existed = fs::exists(*db, ec) && fs::file_size(*db, ec) > 0;
      // Creates and migrates; an existing database is only migrated. A file that is not ours is a
      // UsageError and stays untouched (the store's check).
      store::Store store(*db);
      std::printf("%s %s (schema version %d, %lld runs)\n",
                  existed ? "already a perfgate database:" : "created", db->c_str(),
                  store::Store::schema_version(), static_cast<long long>(store.run_count()));
      return kExitOk;
    };
  });
}

}  // namespace pg::cli
