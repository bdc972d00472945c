// libFuzzer entry points for the long run (run_libfuzzer.sh); one binary per target, chosen at
// compile time with -DPG_FUZZ_TARGET_TOML / _SAFETENSORS / _INGEST. Only UsageError may escape a
// target (the targets catch it); anything else aborts and libFuzzer saves the input.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

#include "fuzz_targets.h"

namespace {
std::string scratch_file() {
  static const std::string path = "/tmp/perfgate-fuzz-" + std::to_string(getpid()) + ".safetensors";
  return path;
}
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // PG_FUZZ_WRITE_SEEDS=DIR: write the generated seed files there, then carry on.
  if (const char* dir = std::getenv("PG_FUZZ_WRITE_SEEDS")) {
    int i = 0;
    for (const auto& seed : pg::fuzz::safetensors_seeds(scratch_file())) {
      std::ofstream out(std::string(dir) + "/seed" + std::to_string(i++) + ".safetensors",
                        std::ios::binary);
      out << seed;
    }
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
#if defined(PG_FUZZ_TARGET_TOML)
  pg::fuzz::toml_sweep(in);
#elif defined(PG_FUZZ_TARGET_SAFETENSORS)
  pg::fuzz::safetensors_model(in, scratch_file());
#elif defined(PG_FUZZ_TARGET_INGEST)
  pg::fuzz::ingest_json(in);
#else
#error "define PG_FUZZ_TARGET_TOML, PG_FUZZ_TARGET_SAFETENSORS or PG_FUZZ_TARGET_INGEST"
#endif
  return 0;
}
