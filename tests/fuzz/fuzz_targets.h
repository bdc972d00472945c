// The parsers that read untrusted bytes, as fuzz targets shared by the fast pass in ctest
// (fuzz_smoke_test.cpp) and the long libFuzzer run (run_libfuzzer.sh). Each returns normally when
// the input was accepted or refused with the documented error (UsageError, exit 2); anything else
// escaping (another exception, a crash, a sanitizer report) is a finding. docs/FUZZING.md.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace pg::fuzz {

// The TOML sweep file (`perfgate run --config`), through the same validation as the flags.
void toml_sweep(std::string_view bytes);
// A .safetensors file given as `--model file:PATH`: header, then the GPT-2 mapping.
// `scratch` is a file path the target may overwrite.
void safetensors_model(std::string_view bytes, const std::string& scratch);
// Seeds for safetensors_model: a small valid GPT-2 checkpoint (two layers, zero weights), with and
// without the "transformer." prefix, so mutations reach the mapping and not only the header.
std::vector<std::string> safetensors_seeds(const std::string& scratch);
// The body of POST /api/v1/runs (and `perfgate import`-style documents).
void ingest_json(std::string_view bytes);

}  // namespace pg::fuzz
