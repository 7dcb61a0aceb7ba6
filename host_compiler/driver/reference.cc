#include "driver/reference.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "npy.h"

extern char** environ;

namespace edgec {

namespace {

// Runs in the interpreter: argv = model, output dir, number of feeds, (name, .npy) pairs,
// output names. Writes out_<i>.npy per output; exit 3 when onnxruntime cannot be imported.
// Graph optimizations off and one thread, as the tests' onnxruntime references.
const char* kOrtScript = R"(
import sys
try:
    import numpy as np
    import onnxruntime as ort
except Exception as e:
    sys.stderr.write("edgec: %s\n" % e)
    sys.exit(3)
model, out_dir, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
feeds = {sys.argv[4 + 2 * i]: np.load(sys.argv[5 + 2 * i]) for i in range(n)}
names = sys.argv[4 + 2 * n:]
so = ort.SessionOptions()
so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
so.intra_op_num_threads = 1
sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
for i, value in enumerate(sess.run(names, feeds)):
    np.save("%s/out_%d.npy" % (out_dir, i), np.ascontiguousarray(value))
)";

std::string describe(DType dtype, const Shape& shape) { return std::string(dtype_name(dtype)) + " " + shape_str(shape); }

void check_fits(const HostTensor& t, const TensorSpec& spec, const std::string& what) {
  if (t.dtype != spec.dtype || t.shape != spec.shape)
    throw CompileError(what + " '" + spec.name + "' is " + describe(t.dtype, t.shape) + ", the bundle's is " +
                       describe(spec.dtype, spec.shape));
}

void check_names(const std::map<std::string, HostTensor>& given, const std::vector<TensorSpec>& specs,
                 const char* flag, const char* what) {
  for (const auto& [name, t] : given) {
    bool found = false;
    for (const TensorSpec& s : specs) found = found || s.name == name;
    if (!found) {
      std::string names;
      for (const TensorSpec& s : specs) names += (names.empty() ? "" : ", ") + s.name;
      throw CompileError(std::string(flag) + ": the bundle has no " + what + " '" + name + "' (its " + what +
                         "s: " + names + ")");
    }
  }
}

// Deterministic samples (splitmix64), so a bundle compiles to the same bytes every time.
HostTensor random_tensor(const TensorSpec& spec, uint64_t seed) {
  const int64_t n = numel(spec.shape);
  auto next = [&seed]() {
    uint64_t z = (seed += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  if (is_float(spec.dtype)) {
    std::vector<double> v(static_cast<size_t>(n));
    for (double& x : v) x = static_cast<double>(next() >> 11) * 0x1p-52 - 1.0;  // [-1, 1)
    return HostTensor::from_doubles(spec.dtype, spec.shape, v);
  }
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t& x : v) x = static_cast<int64_t>(next() >> (spec.dtype == DType::Bool ? 63 : 62));
  return HostTensor::from_ints(spec.dtype, spec.shape, v);
}

void write_tensor(const std::string& path, const HostTensor& t) {
  std::string error;
  if (!edgert_tools::write_npy(path.c_str(), static_cast<edgert_dtype>(t.dtype), t.shape.data(),
                               static_cast<int>(t.shape.size()), t.bytes.data(), t.bytes.size(), &error))
    throw CompileError("--embed-reference: " + error);
}

HostTensor read_tensor(const std::string& path, const std::string& what) {
  edgert_tools::NpyArray a;
  std::string error;
  if (!edgert_tools::read_npy(path.c_str(), &a, &error)) throw CompileError(what + ": " + error);
  HostTensor t;
  t.dtype = static_cast<DType>(a.dtype);  // the two enums share their values
  t.shape = a.shape;
  t.bytes.assign(a.data.data(), a.data.data() + edgert_dtype_size(a.dtype) * numel(a.shape));
  return t;
}

// A temporary directory, removed with everything in it.
struct TempDir {
  std::string path;
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/edgec-reference-XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data())) throw CompileError("--embed-reference: cannot create " + pattern + ": " + std::strerror(errno));
    path = buf.data();
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

// Runs the model in onnxruntime on `inputs` (+ the frozen constants); one tensor per name in
// `wanted`. `missing` names the first output that needs it, for the error messages.
std::vector<HostTensor> run_onnxruntime(const std::string& model_path, const std::vector<TensorSpec>& inputs,
                                        const std::vector<HostTensor>& values,
                                        const std::map<std::string, HostTensor>& constant_inputs,
                                        const std::vector<std::string>& wanted) {
  TempDir dir;
  const char* env = std::getenv("EDGE_PYTHON");
  const std::string python = env && *env ? env : "python3";
  std::vector<std::string> args = {python, "-c", kOrtScript, model_path, dir.path, ""};
  size_t feeds = 0;
  auto feed = [&](const std::string& name, const HostTensor& t) {
    std::string path = dir.path + "/in_" + std::to_string(feeds++) + ".npy";
    write_tensor(path, t);
    args.push_back(name);
    args.push_back(path);
  };
  for (size_t i = 0; i < inputs.size(); ++i) feed(inputs[i].name, values[i]);
  for (const auto& [name, t] : constant_inputs) feed(name, t);
  args[5] = std::to_string(feeds);
  args.insert(args.end(), wanted.begin(), wanted.end());

  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string hint = "; pass --reference-output " + wanted[0] + "=FILE.npy (and one for every other output)";
  pid_t pid = 0;
  int err = posix_spawnp(&pid, python.c_str(), nullptr, nullptr, argv.data(), environ);
  if (err != 0)
    throw CompileError("--embed-reference: output '" + wanted[0] + "' needs onnxruntime, but " + python +
                       " cannot be run (" + std::strerror(err) + ")" + hint);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw CompileError("--embed-reference: output '" + wanted[0] + "' needs onnxruntime, but " +
                       (WIFEXITED(status) && WEXITSTATUS(status) == 3
                            ? python + " cannot import it (set EDGE_PYTHON to an interpreter that can)"
                            : "running the model in it with " + python + " failed (its message is above)") +
                       hint);
  std::vector<HostTensor> out;
  for (size_t i = 0; i < wanted.size(); ++i)
    out.push_back(read_tensor(dir.path + "/out_" + std::to_string(i) + ".npy", "onnxruntime's output '" + wanted[i] + "'"));
  return out;
}

}  // namespace

ReferenceData make_reference(const std::string& model_path, const std::vector<TensorSpec>& inputs,
                             const std::vector<TensorSpec>& outputs,
                             const std::map<std::string, HostTensor>& constant_inputs, bool fp16,
                             const ReferenceOptions& options) {
  check_names(options.inputs, inputs, "--reference-input", "input");
  check_names(options.outputs, outputs, "--reference-output", "output");
  ReferenceData r;
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto given = options.inputs.find(inputs[i].name);
    r.inputs.push_back(given != options.inputs.end() ? given->second : random_tensor(inputs[i], 0x5eed0000 + i));
    check_fits(r.inputs.back(), inputs[i], "--reference-input");
  }
  std::vector<std::string> wanted;
  for (const TensorSpec& o : outputs)
    if (!options.outputs.count(o.name)) wanted.push_back(o.name);
  std::vector<HostTensor> computed;
  if (!wanted.empty()) computed = run_onnxruntime(model_path, inputs, r.inputs, constant_inputs, wanted);
  for (size_t i = 0, k = 0; i < outputs.size(); ++i) {
    auto given = options.outputs.find(outputs[i].name);
    const bool supplied = given != options.outputs.end();
    r.outputs.push_back(supplied ? given->second : computed[k++]);
    check_fits(r.outputs.back(), outputs[i], supplied ? "--reference-output" : "onnxruntime's output");
  }
  // The tolerances the project's own tests hold edgec to against onnxruntime (fp32 and fp16
  // driving model): fp32 accumulates in another order, fp16 rounds every stored value.
  r.rtol = static_cast<float>(options.rtol >= 0 ? options.rtol : fp16 ? 1e-2 : 1e-3);
  r.atol = static_cast<float>(options.atol >= 0 ? options.atol : fp16 ? 2e-2 : 1e-4);
  return r;
}

}  // namespace edgec
