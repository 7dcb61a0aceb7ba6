// edgert-prepare — builds an OpenCL bundle's programs on this device, once, and writes the
// bundle with the program binaries (edgert_prepare), so contexts on it compile nothing.
#include <cstdio>
#include <string>

#include "edgert_prepare.h"
#include "tool_common.h"

using namespace edgert_tools;

namespace {

const char* kTool = "edgert-prepare";

const char* kUsage =
    "usage: edgert-prepare BUNDLE -o PREPARED [--device N]\n"
    "\n"
    "Builds the OpenCL programs of BUNDLE with this device's driver and writes PREPARED: the\n"
    "same bundle plus the program binaries and the platform, device and driver version that\n"
    "built them. A context on PREPARED loads the binaries instead of compiling OpenCL C; on\n"
    "another device or driver version it is refused (edgert-run --require-prepared) or built\n"
    "from source again. Run it on the device itself, e.g. at install time. PREPARED may be\n"
    "BUNDLE (written to PREPARED.tmp, then renamed). PREPARED is not signed, whether BUNDLE\n"
    "was or not: sign it again (edgec sign) for a runtime with --trusted-key.\n"
    "\n"
    "options:\n"
    "  -o, --output PREPARED  where to write the prepared bundle\n"
    "  --device N             OpenCL device index over all platforms (default 0;\n"
    "                         EDGERT_OPENCL_DEVICE overrides it, EDGERT_OPENCL_PLATFORM=TEXT\n"
    "                         keeps only the platforms whose name contains TEXT)\n"
    "  --help                 this text\n";

struct Options {
  std::string bundle, output;
  long device = 0;
};

// Returns -1 to go on, else the exit code.
int parse_args(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "-o" || a == "--output") {
      const char* v = value();
      if (!v) return fail(kTool, a + " needs a file name");
      o->output = v;
    } else if (a == "--device") {
      if (!parse_count(value(), &o->device) || o->device > INT32_MAX)
        return fail(kTool, "--device needs a device index (0, 1, ...)");
    } else if (!a.empty() && a[0] == '-') {
      return fail(kTool, "unknown option " + a + " (see --help)");
    } else if (!o->bundle.empty()) {
      return fail(kTool, "more than one bundle given: " + o->bundle + " and " + a);
    } else {
      o->bundle = a;
    }
  }
  if (o->bundle.empty()) return fail(kTool, "no bundle given (see --help)");
  if (o->output.empty()) return fail(kTool, "no -o PREPARED given (see --help)");
  return -1;
}

int prepare(const Options& o) {
  edgert_context_options options{};
  options.device_index = static_cast<int32_t>(o.device);
  edgert_status st = edgert_prepare(o.bundle.c_str(), o.output.c_str(), &options);
  if (st != EDGERT_OK) return fail(kTool, "cannot prepare " + o.bundle + ": " + status_text(st));
  // A context on the result, binaries only: proves it loads here, and says on what.
  Session h;
  st = edgert_bundle_open(o.output.c_str(), &h.bundle);
  if (st != EDGERT_OK)
    return fail(kTool, "cannot open the prepared bundle " + o.output + ": " + status_text(st));
  options.allow_source_build = 0;
  st = edgert_context_create(h.bundle, &options, &h.context);
  if (st != EDGERT_OK)
    return fail(kTool, "the prepared bundle " + o.output + " does not load: " + status_text(st));
  edgert_context_stats stats;
  edgert_context_get_stats(h.context, &stats);
  std::printf("prepared %s for %s: %d program(s) -> %s\n", o.bundle.c_str(), stats.device,
              stats.programs_loaded, o.output.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  int code = parse_args(argc, argv, &o);
  if (code >= 0) return code;
  return prepare(o);
}
