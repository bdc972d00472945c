#include "runner/lm/checkpoint_load.h"

#include <fstream>

#include "common/errors.h"
#include "runner/lm/gpt2_checkpoint.h"

namespace pg::lm {
namespace {

at::ScalarType scalar_type_of(const SafetensorsFile& f, const std::string& name,
                              const std::string& dtype) {
  if (dtype == "F32") return at::kFloat;
  if (dtype == "F16") return at::kHalf;
  if (dtype == "BF16") return at::kBFloat16;
  if (dtype == "I64") return at::kLong;
  if (dtype == "I32") return at::kInt;
  throw UsageError("model file '" + f.path + "': tensor '" + name + "' has unsupported dtype " +
                   dtype);
}

}  // namespace

at::Tensor read_tensor(const SafetensorsFile& file, const std::string& name) {
  auto it = file.tensors.find(name);
  if (it == file.tensors.end())
    throw UsageError("model file '" + file.path + "': missing tensor '" + name + "'");
  const auto& e = it->second;
  auto t = at::empty(e.shape, at::TensorOptions().dtype(scalar_type_of(file, name, e.dtype)));
  std::ifstream in(file.path, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(e.offset));
  in.read(static_cast<char*>(t.data_ptr()), static_cast<std::streamsize>(e.nbytes));
  if (!in)
    throw UsageError("model file '" + file.path + "': cannot read the data of tensor '" + name +
                     "' (file changed or truncated?)");
  return t;
}

Model load_gpt2_checkpoint(const std::string& path, at::ScalarType dtype,
                           const at::Device& device) {
  const auto ckpt = inspect_gpt2_checkpoint(path);
  const auto opts = at::TensorOptions().dtype(dtype).device(device);
  auto get = [&](const std::string& canonical) {
    return read_tensor(ckpt.file, ckpt.names.at(canonical)).to(opts);
  };
  // Conv1D stores [in, out]; at::linear wants [out, in].
  auto get_conv1d = [&](const std::string& canonical) { return get(canonical).t().contiguous(); };

  Model m;
  m.cfg = ckpt.config;
  m.wte = get("wte.weight");
  m.wpe = get("wpe.weight");
  m.lnf_w = get("ln_f.weight");
  m.lnf_b = get("ln_f.bias");
  for (int64_t i = 0; i < m.cfg.n_layer; ++i) {
    const std::string h = "h." + std::to_string(i) + ".";
    m.layers.push_back({get(h + "ln_1.weight"), get(h + "ln_1.bias"),
                        get_conv1d(h + "attn.c_attn.weight"), get(h + "attn.c_attn.bias"),
                        get_conv1d(h + "attn.c_proj.weight"), get(h + "attn.c_proj.bias"),
                        get(h + "ln_2.weight"), get(h + "ln_2.bias"),
                        get_conv1d(h + "mlp.c_fc.weight"), get(h + "mlp.c_fc.bias"),
                        get_conv1d(h + "mlp.c_proj.weight"), get(h + "mlp.c_proj.bias")});
  }
  return m;
}

}  // namespace pg::lm
