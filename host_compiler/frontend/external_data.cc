// external_data.cc — tensors whose bytes live in a file beside the model (data_location
// EXTERNAL: onnx.save(save_as_external_data=True), torch.onnx past 2 GB, optimum). Read into
// raw_data before the import, from files inside the model's folder only: a model is untrusted
// input, and its `location` must not make the compiler read /etc/shadow or a device.
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>

#include "frontend/lowering.h"

namespace edgec::onnx_frontend {
namespace {

namespace fs = std::filesystem;

struct ExternalDataLoader {
  const std::string* model_dir;  // null: the model came as bytes, with no folder
  fs::path root;                 // model_dir, canonical
  std::map<fs::path, uint64_t> file_sizes;
  uint64_t files_bytes = 0, bytes_read = 0;

  static uint64_t parse_count(const std::string& label, const std::string& key, const std::string& value) {
    uint64_t v = 0;
    const char* end = value.data() + value.size();
    auto [ptr, ec] = std::from_chars(value.data(), end, v);
    if (value.empty() || ec != std::errc() || ptr != end)
      throw CompileError(label + ": external data key '" + key + "' is '" + value + "', not a byte count");
    return v;
  }

  // The data file, checked to be a regular file inside the model's folder.
  fs::path resolve(const std::string& label, const std::string& location) {
    const std::string what = label + ": external data key 'location' ('" + location + "')";
    if (location.empty() || location.find('\0') != std::string::npos) throw CompileError(what + " is not a file name");
    fs::path rel(location);
    if (rel.is_absolute() || rel.has_root_name() || rel.has_root_directory())
      throw CompileError(what + " is an absolute path; it must name a file in the model's folder");
    for (const fs::path& part : rel)
      if (part == "..") throw CompileError(what + " leaves the model's folder ('..')");
    std::error_code ec;
    if (root.empty()) {
      root = fs::canonical(model_dir->empty() ? fs::path(".") : fs::path(*model_dir), ec);
      if (ec) throw CompileError(what + ": cannot resolve the model's folder: " + ec.message());
    }
    fs::path file = fs::canonical(root / rel, ec);
    if (ec) throw CompileError(what + ": cannot open it: " + ec.message());
    fs::path inside = file.lexically_relative(root);
    if (inside.empty() || *inside.begin() == "..")
      throw CompileError(what + " leads outside the model's folder (a symbolic link to " + file.string() + ")");
    if (!fs::is_regular_file(file, ec)) throw CompileError(what + " is not a regular file");
    return file;
  }

  void load(onnx::TensorProto& t) {
    const std::string label = "tensor '" + t.name() + "'";
    if (t.data_location() != onnx::TensorProto::EXTERNAL) {
      if (t.external_data_size() > 0)
        throw CompileError(label + ": has external_data entries, but its data_location is not EXTERNAL");
      return;
    }
    if (!model_dir)
      throw CompileError(label + ": its data is external, which edgec reads only when given the model as a file");
    std::string location;
    uint64_t offset = 0;
    bool has_length = false;
    uint64_t length = 0;
    for (const auto& kv : t.external_data()) {
      if (kv.key() == "location") location = kv.value();
      else if (kv.key() == "offset") offset = parse_count(label, "offset", kv.value());
      else if (kv.key() == "length") {
        has_length = true;
        length = parse_count(label, "length", kv.value());
      }
      else if (kv.key() == "checksum") continue;  // optional SHA-1 that onnx and onnxruntime do not verify either
      else throw CompileError(label + ": unknown external data key '" + kv.key() + "'");
    }
    if (location.empty()) throw CompileError(label + ": external data key 'location' is missing");
    if (t.has_raw_data()) throw CompileError(label + ": has both external data and raw_data");
    const DType dtype = dtype_from_onnx(t.data_type());
    Shape shape(t.dims().begin(), t.dims().end());
    const uint64_t bytes = uint64_t(checked_numel(shape, label)) * dtype_size(dtype);
    if (has_length && length != bytes)
      throw CompileError(label + ": external data key 'length' is " + std::to_string(length) + " bytes; " +
                         dtype_name(dtype) + " " + shape_str(shape) + " takes " + std::to_string(bytes));
    fs::path file = resolve(label, location);
    std::ifstream in(file, std::ios::binary);
    if (!in) throw CompileError(label + ": cannot open external data file '" + location + "'");
    in.seekg(0, std::ios::end);
    const uint64_t size = uint64_t(in.tellg());
    if (offset > size || bytes > size - offset)
      throw CompileError(label + ": external data key 'offset' " + std::to_string(offset) + " + " +
                         std::to_string(bytes) + " bytes runs past the end of '" + location + "' (" +
                         std::to_string(size) + " bytes)");
    // Tensors that share bytes could make a small model allocate a file's size many times
    // over; exporters write each tensor once, so the bytes read are bounded by the files.
    if (file_sizes.emplace(file, size).second) files_bytes += size;
    bytes_read += bytes;
    if (bytes_read > files_bytes)
      throw CompileError(label + ": the model's external tensors add up to more bytes than their files hold "
                         "(tensors overlap)");
    std::string data(bytes, '\0');
    in.seekg(std::streamoff(offset));
    in.read(data.data(), std::streamsize(bytes));
    if (!in || uint64_t(in.gcount()) != bytes)
      throw CompileError(label + ": reading " + std::to_string(bytes) + " bytes of '" + location + "' failed");
    *t.mutable_raw_data() = std::move(data);
    t.clear_external_data();
    t.clear_data_location();
  }

  void load(onnx::GraphProto& g) {
    for (auto& t : *g.mutable_initializer()) load(t);
    for (auto& node : *g.mutable_node())
      for (auto& a : *node.mutable_attribute()) {
        if (a.has_t()) load(*a.mutable_t());
        for (auto& t : *a.mutable_tensors()) load(t);
        if (a.has_g()) load(*a.mutable_g());
        for (auto& sub : *a.mutable_graphs()) load(sub);
      }
  }
};

}  // namespace

void load_external_data(onnx::GraphProto& graph, const std::string* model_dir) {
  ExternalDataLoader loader{model_dir, {}, {}, 0, 0};
  loader.load(graph);
}

}  // namespace edgec::onnx_frontend
