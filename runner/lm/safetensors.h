// Reading the header of a .safetensors file: 8-byte little-endian header length, a JSON header
// {name: {dtype, shape, data_offsets}, "__metadata__": {...}}, then the raw tensor bytes.
// LibTorch-free; every defect is a UsageError that names the file (and the tensor, if any).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace pg::lm {

// UsageError "model file 'PATH': WHAT" (exit 2), shared by the loader and the GPT-2 mapping.
[[noreturn]] void fail_model_file(const std::string& path, const std::string& what);
std::string shape_string(const std::vector<int64_t>& shape);  // "[3, 4]"

struct SafetensorsEntry {
  std::string dtype;  // as written: "F32", "F16", "BF16", ...
  std::vector<int64_t> shape;
  uint64_t offset = 0;  // absolute byte offset of the data in the file
  uint64_t nbytes = 0;
};

struct SafetensorsFile {
  std::string path;
  std::map<std::string, SafetensorsEntry> tensors;
  std::map<std::string, std::string> metadata;  // "__metadata__", string -> string
};

// Bytes per element of a safetensors dtype string; 0 for one this reader does not know.
int safetensors_dtype_size(const std::string& dtype);

// Parses and validates the header: each tensor's byte range must match its shape and dtype and
// lie inside the file. Reads no tensor data.
SafetensorsFile read_safetensors_header(const std::string& path);

// Writes a file in the same format (used by tests and tools); `data` holds each tensor's bytes.
struct SafetensorsBlob {
  std::string dtype;
  std::vector<int64_t> shape;
  std::string data;
};
void write_safetensors(const std::string& path, const std::map<std::string, SafetensorsBlob>& t,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace pg::lm
