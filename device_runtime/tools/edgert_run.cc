// edgert-run — runs a bundle once on .npy inputs and writes every output as .npy; with
// --self-test, on the bundle's reference inputs, comparing with its expected outputs.
#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "edgert.h"
#include "npy.h"
#include "tool_common.h"

using namespace edgert_tools;

namespace {

const char* kTool = "edgert-run";

const char* kUsage =
    "usage: edgert-run BUNDLE --input NAME=FILE.npy ... --output-dir DIR [options]\n"
    "       edgert-run BUNDLE --self-test [options]\n"
    "\n"
    "Runs the bundle on the given inputs and writes DIR/<output name>.npy for every\n"
    "output ('/' in names becomes '_'). Every input must be given, with exactly the\n"
    "dtype and shape the bundle declares. Where two outputs would share a file ('a/b'\n"
    "and 'a_b'), the output whose name has no '/' keeps its file and the other gets the\n"
    "first free name with _1, _2, ... added (a_b_1.npy), in output order; a line on\n"
    "stderr names each such output and its file. BUNDLE and every FILE.npy must be\n"
    "regular files.\n"
    "\n"
    "--self-test runs the bundle on the sample inputs that edgec compile --embed-reference\n"
    "stored in it (no --input) and compares every output with the expected value stored\n"
    "with them: it prints each output's max abs and max relative error and the tolerance\n"
    "(an element passes when |got - expected| <= atol + rtol * |expected|; integer and bool\n"
    "outputs must be equal, NaN where NaN is expected) and exits 0 when all pass, 1 when one\n"
    "fails or the bundle has no reference data.\n"
    "\n"
    "options:\n"
    "  --input NAME=FILE.npy  an input (repeat for each input)\n"
    "  --output-dir DIR       where to write outputs (created if missing; optional with --print)\n"
    "  --threads N            worker threads (cpu port; 1 to 1024, default 1)\n"
    "  --device N             OpenCL device index over all platforms (opencl port; default 0,\n"
    "                         EDGERT_OPENCL_DEVICE overrides it)\n"
    "  --require-prepared     refuse an OpenCL bundle that edgert-prepare did not prepare for\n"
    "                         this device (default: build its programs from source, and say so)\n"
    EDGERT_TOOLS_OPEN_USAGE
    "  --repeat K             run K times and check that every run gives bit-identical\n"
    "                         outputs (1 to 10000000, default 1)\n"
    "  --print                print each output's dtype, shape and first values\n"
    "  --self-test            check the outputs against the bundle's reference data (above)\n"
    "  --serve                (alone) read one command line per line of stdin, arguments\n"
    "                         separated by tabs, run each as above, and end its output with\n"
    "                         a line of \\x1e and its exit code on stdout: one process for many\n"
    "                         bundles (test harnesses), so a driver is loaded once\n"
    "  --help                 this text\n";

// mkdir -p.
bool make_dirs(const std::string& dir, std::string* error) {
  for (size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos != dir.size() && dir[pos] != '/') continue;
    std::string prefix = dir.substr(0, pos);
    if (mkdir(prefix.c_str(), 0777) != 0 && errno != EEXIST) {
      *error = "cannot create directory " + prefix + ": " + std::strerror(errno);
      return false;
    }
  }
  struct stat st;
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    *error = dir + " is not a directory";
    return false;
  }
  return true;
}

std::string sanitized(const char* output_name) {
  std::string s = output_name;
  for (char& c : s)
    if (c == '/') c = '_';
  return s;
}

// The file name of every output in --output-dir: <name>.npy with '/' made '_'. Output names
// are unique, but 'a/b' and 'a_b' would share a_b.npy: names without '/' keep their file
// (they need no mapping), the others take the first free _1, _2, ... in output order, so the
// result depends only on the bundle.
std::vector<std::string> output_file_names(const std::vector<edgert_tensor_info>& infos) {
  std::vector<std::string> names(infos.size());
  std::set<std::string> taken;
  for (size_t i = 0; i < infos.size(); ++i)
    if (!std::strchr(infos[i].name, '/')) taken.insert(names[i] = std::string(infos[i].name) + ".npy");
  for (size_t i = 0; i < infos.size(); ++i) {
    if (!names[i].empty()) continue;
    const std::string base = sanitized(infos[i].name);
    std::string name = base + ".npy";
    for (unsigned k = 1; taken.count(name); ++k) name = base + "_" + std::to_string(k) + ".npy";
    taken.insert(names[i] = name);
  }
  return names;
}

struct Options : CommonOptions {
  std::string output_dir;
  long repeat = 1;
  bool print = false;
  bool self_test = false;
};

// Returns -1 to go on, else the exit code.
int parse_args(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (a == "--output-dir") {
      const char* v = value();
      if (!v) return fail(kTool, "--output-dir needs a directory");
      o->output_dir = v;
    } else if (a == "--repeat") {
      std::string error;
      if (!parse_int_option("--repeat", value(), 1, kMaxRuns, &o->repeat, &error)) return fail(kTool, error);
    } else if (a == "--print") {
      o->print = true;
    } else if (a == "--self-test") {
      o->self_test = true;
    } else if (int r = parse_common_option(kTool, kUsage, argc, argv, &i, o); r != -1) {
      return r;
    }
  }
  if (o->bundle.empty()) return fail(kTool, "no bundle given (see --help)");
  if (o->self_test && !o->inputs.empty())
    return fail(kTool, "--self-test runs on the bundle's own reference inputs: leave out --input");
  if (o->output_dir.empty() && !o->print && !o->self_test) return fail(kTool, "no --output-dir given (see --help)");
  return -1;
}

// How far an output is from its expected value, element by element.
struct Deviation {
  double max_abs = 0, max_rel = 0;  // rel: over elements whose expected value is not 0
  size_t failed = 0, worst = 0;     // elements out of tolerance; the one with the largest excess
  double worst_excess = -1;
};

Deviation compare(edgert_dtype dtype, const void* got, const void* expected, size_t n, double rtol, double atol) {
  const bool floating = dtype == EDGERT_F32 || dtype == EDGERT_F16 || dtype == EDGERT_F64;
  const size_t width = edgert_dtype_size(dtype);
  Deviation d;
  for (size_t i = 0; i < n; ++i) {
    const double g = element_value(dtype, got, i), e = element_value(dtype, expected, i);
    double err = std::fabs(g - e), excess;
    if (!floating) {  // exact: the bytes, so 64-bit integers past 2^53 are compared too
      const bool same = std::memcmp(static_cast<const uint8_t*>(got) + i * width,
                                    static_cast<const uint8_t*>(expected) + i * width, width) == 0;
      excess = same ? 0 : err > 0 ? err : 1;
      err = same ? 0 : excess;
    } else if (std::isnan(g) || std::isnan(e) || std::isinf(g) || std::isinf(e)) {
      const bool same = (std::isnan(g) && std::isnan(e)) || g == e;
      err = same ? 0 : INFINITY;
      excess = same ? 0 : INFINITY;
    } else {
      excess = err - (atol + rtol * std::fabs(e));
    }
    if (err > d.max_abs) d.max_abs = err;
    if (e != 0 && !std::isnan(e) && err / std::fabs(e) > d.max_rel) d.max_rel = err / std::fabs(e);
    if (excess > 0) {
      ++d.failed;
      if (excess > d.worst_excess) d.worst_excess = excess, d.worst = i;
    }
  }
  return d;
}

// Prints one line per output; returns the exit code.
int report_self_test(const edgert_bundle* bundle, const std::vector<edgert_tensor_info>& infos,
                     const std::vector<AlignedBuffer>& outputs) {
  double rtol = 0, atol = 0;
  edgert_status st = edgert_bundle_reference_tolerance(bundle, &rtol, &atol);
  if (st != EDGERT_OK) return fail(kTool, status_text(st));
  std::string failed;
  for (size_t i = 0; i < infos.size(); ++i) {
    const edgert_tensor_info& info = infos[i];
    const void* expected = nullptr;
    size_t size = 0;
    st = edgert_bundle_reference(bundle, 1, static_cast<int32_t>(i), &expected, &size);
    if (st != EDGERT_OK) return fail(kTool, status_text(st));
    const size_t n = info.size_bytes / edgert_dtype_size(info.dtype);
    const Deviation d = compare(info.dtype, outputs[i].data(), expected, n, rtol, atol);
    std::printf("self-test: %s %s: max abs error %.3g, max rel error %.3g (rtol %g, atol %g): ", info.name,
                tensor_type(info.dtype, info.shape, info.rank).c_str(), d.max_abs, d.max_rel, rtol, atol);
    if (d.failed == 0) {
      std::printf("ok\n");
      continue;
    }
    std::printf("FAILED, %zu of %zu elements out of tolerance; worst: element %zu is %s, expected %s\n", d.failed, n,
                d.worst, element_text(info.dtype, outputs[i].data(), d.worst).c_str(),
                element_text(info.dtype, expected, d.worst).c_str());
    failed += (failed.empty() ? "'" : ", '") + std::string(info.name) + "'";
  }
  if (!failed.empty())
    return fail(kTool, "self-test failed: output " + failed + " differs from the bundle's expected value");
  std::printf("self-test passed: %zu of %zu outputs within tolerance\n", infos.size(), infos.size());
  return 0;
}

int run(const Options& o) {
  Session h;
  std::vector<NpyArray> inputs;
  std::vector<bool> given;
  std::string error;
  if (!open_with_inputs(o, &h, &inputs, &given, &error)) return fail(kTool, error);
  const int32_t num_inputs = edgert_bundle_input_count(h.bundle);
  edgert_status st = EDGERT_OK;
  // --self-test: the bundle's reference inputs, bound in place (no copy). The verifier made
  // sure a bundle has reference data for every input and output or none.
  std::vector<const void*> reference(static_cast<size_t>(num_inputs));
  std::vector<size_t> reference_size(static_cast<size_t>(num_inputs));
  double rtol, atol;
  if (o.self_test && edgert_bundle_reference_tolerance(h.bundle, &rtol, &atol) != EDGERT_OK)
    return fail(kTool, "--self-test: " + o.bundle + " has no reference data (compile it with edgec compile --embed-reference)");
  for (int32_t i = 0; o.self_test && i < num_inputs; ++i) {
    st = edgert_bundle_reference(h.bundle, 0, i, &reference[i], &reference_size[i]);
    if (st != EDGERT_OK) return fail(kTool, "--self-test: " + status_text(st));
  }
  for (int32_t i = 0; i < num_inputs; ++i) {
    if (given[i] || o.self_test) continue;
    edgert_tensor_info info;
    edgert_bundle_input_info(h.bundle, i, &info);
    return fail(kTool, std::string("missing input '") + info.name + "' (expected " +
                           tensor_type(info.dtype, info.shape, info.rank) + "; pass --input " +
                           info.name + "=FILE.npy)");
  }

  const edgert_context_options options = context_options(o);
  st = edgert_context_create(h.bundle, &options, &h.context);
  if (st != EDGERT_OK) return fail(kTool, "cannot create context: " + status_text(st));
  note_source_builds(h.context);
  for (int32_t i = 0; i < num_inputs; ++i) {
    st = o.self_test ? edgert_bind_input(h.context, i, reference[i], reference_size[i])
                     : edgert_bind_input(h.context, i, inputs[i].data.data(), inputs[i].data.size());
    if (st != EDGERT_OK) return fail(kTool, "cannot bind input: " + status_text(st));
  }

  const int32_t num_outputs = edgert_bundle_output_count(h.bundle);
  std::vector<edgert_tensor_info> infos(static_cast<size_t>(num_outputs));
  std::vector<AlignedBuffer> outputs(static_cast<size_t>(num_outputs));
  std::vector<AlignedBuffer> first(static_cast<size_t>(num_outputs));
  for (int32_t i = 0; i < num_outputs; ++i) {
    edgert_bundle_output_info(h.bundle, i, &infos[i]);
    if (!outputs[i].allocate(infos[i].size_bytes) ||
        (o.repeat > 1 && !first[i].allocate(infos[i].size_bytes)))
      return fail(kTool, std::string("out of memory for output '") + infos[i].name + "'");
    st = edgert_bind_output(h.context, i, outputs[i].data(), infos[i].size_bytes);
    if (st != EDGERT_OK) return fail(kTool, "cannot bind output: " + status_text(st));
  }

  for (long r = 0; r < o.repeat; ++r) {
    st = edgert_run(h.context);
    if (st != EDGERT_OK) return fail(kTool, "run failed: " + status_text(st));
    for (int32_t i = 0; o.repeat > 1 && i < num_outputs; ++i) {
      const size_t n = infos[i].size_bytes;
      if (r == 0) {
        if (n) std::memcpy(first[i].data(), outputs[i].data(), n);
      } else if (n && std::memcmp(first[i].data(), outputs[i].data(), n) != 0) {
        return fail(kTool, std::string("output '") + infos[i].name + "' of run " +
                               std::to_string(r + 1) + " differs from run 1 (not deterministic)");
      }
    }
  }
  if (o.repeat > 1) std::printf("%ld runs, outputs bit-identical across runs\n", o.repeat);

  if (!o.output_dir.empty() && !make_dirs(o.output_dir, &error)) return fail(kTool, error);
  const std::vector<std::string> files = output_file_names(infos);
  for (int32_t i = 0; i < num_outputs; ++i) {
    const edgert_tensor_info& info = infos[i];
    if (!o.output_dir.empty()) {
      std::string path = o.output_dir + "/" + files[i];
      if (files[i] != sanitized(info.name) + ".npy")
        std::fprintf(stderr, "%s: output '%s' written to %s (%s.npy is another output's file)\n", kTool,
                     info.name, path.c_str(), sanitized(info.name).c_str());
      if (!write_npy(path.c_str(), info.dtype, info.shape, info.rank, outputs[i].data(),
                     info.size_bytes, &error))
        return fail(kTool, error);
    }
    if (o.print) {
      const size_t n = info.size_bytes / edgert_dtype_size(info.dtype);
      std::string values;
      for (size_t k = 0; k < n && k < 8; ++k)
        values += (k ? ", " : "") + element_text(info.dtype, outputs[i].data(), k);
      if (n > 8) values += ", ...";
      std::printf("%s: %s = [%s]\n", info.name,
                  tensor_type(info.dtype, info.shape, info.rank).c_str(), values.c_str());
    }
  }
  return o.self_test ? report_self_test(h.bundle, infos, outputs) : 0;
}

int run_command_line(int argc, char** argv) {
  Options o;
  const int code = parse_args(argc, argv, &o);
  return code >= 0 ? code : run(o);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--serve") == 0) {
    // Each command line opens, runs and closes its bundle as a process of its own would.
    return serve_command_lines(kTool, [](std::vector<std::string>& words) {
      std::vector<char*> args;
      for (std::string& w : words) args.push_back(w.data());
      args.push_back(nullptr);
      return run_command_line(static_cast<int>(words.size()), args.data());
    });
  }
  return run_command_line(argc, argv);
}
