// A stand-in for a runner in a separate process: opens the store, begins a run and writes cells,
// holding the write transaction of each cell open until told (a line on stdin) to commit it.
// Protocol on stdout: "run <id>", then per cell "holding <k>" and "committed <k>", then "finished".
// Usage: store_writer DB CELLS
#include <sqlite3.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "store/store.h"
#include "test_util.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: store_writer DB CELLS\n");
    return 2;
  }
  pg::store::Store store(argv[1]);
  const int cells = std::atoi(argv[2]);
  const int64_t id = store.begin_run(pg::test::sample_git(), pg::test::sample_env(), "{}");
  std::cout << "run " << id << std::endl;
  std::string line;
  for (int k = 0; k < cells; ++k) {
    // The outer transaction holds the write lock; add_cell nests inside it as a savepoint.
    if (sqlite3_exec(store.handle(), "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) != SQLITE_OK)
      return 4;
    store.add_cell(id, pg::test::sample_cell(k + 1, 16, 3, 9, 1.0 + k));
    std::cout << "holding " << k << std::endl;
    if (!std::getline(std::cin, line)) return 3;  // the test went away: roll back, exit
    if (sqlite3_exec(store.handle(), "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) return 4;
    std::cout << "committed " << k << std::endl;
  }
  store.finish_run(id, pg::RunStatus::complete);
  std::cout << "finished" << std::endl;
  return 0;
}
