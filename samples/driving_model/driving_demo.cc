// driving_demo — openpilot's modeld loop on edgert: a driving model compiled by edgec
// (samples/driving_model/build_model.py has the interface) runs on a 20 Hz schedule over
// synthetic camera frames, feeding each frame's hidden_state back into the next frame's
// features_buffer, and reports per-frame latency against the 20 ms budget openpilot
// holds modeld to.
//
// Everything is allocated and bound before the loop; a frame only writes into the bound
// input buffers (new camera frame, history shift), calls edgert_run, and copies the
// hidden_state. C++17, no exceptions; links nothing but edgert.
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "edgert.h"

namespace {

const char* kUsage =
    "usage: driving_demo BUNDLE [options]\n"
    "\n"
    "Runs a driving model compiled by edgec (inputs img, big_img: (1,12,128,256) uint8;\n"
    "features_buffer (1,24,512), desire_pulse (1,25,8), traffic_convention (1,2),\n"
    "action_t (1,2): float32 or float16; output outputs (1,N), whose last 512 values are\n"
    "the hidden_state) the way openpilot's modeld does: one frame every 50 ms (20 Hz) from\n"
    "two synthetic cameras (a deterministic road scene with noise, each frame shifted into\n"
    "the 12-channel previous+current YUV layout), the hidden_state of each frame pushed into\n"
    "the next frame's features_buffer. Prints each frame's edgert_run latency (and the\n"
    "calling thread's CPU time in it), the median and p99, and whether they meet the budget.\n"
    "\n"
    "options:\n"
    "  --frames N       timed frames (default 10)\n"
    "  --warmup W       untimed frames first (default 1); their hidden_state is fed back too\n"
    "  --threads N      split each kernel across N cores (default 1: the calling thread;\n"
    "                   more threads only pay off on otherwise idle cores)\n"
    "  --device N       OpenCL bundles: the N-th OpenCL device (default 0)\n"
    "  --allow-source-build  OpenCL bundles: compile the OpenCL C at start-up when the\n"
    "                   bundle was not prepared on this device (edgert-prepare); by\n"
    "                   default such a bundle is refused, as it would be in the car\n"
    "  --no-sleep       run frames back to back instead of on the 20 Hz schedule\n"
    "  --budget-ms MS   latency budget per frame (default 20: openpilot's modeld)\n"
    "  --seed S         synthetic camera noise seed (default 1)\n"
    "  --quiet          no per-frame lines, only the summary\n"
    "  --dump DIR       write every frame's inputs and output as DIR/frameNNN_<name>.npy\n"
    "                   (a test hook: file I/O, outside the timed region)\n"
    "  --help           this text\n"
    "\n"
    "Exit status: 0 after the loop ran (whether or not the budget was met), 1 on errors.\n";

constexpr double kPeriodMs = 50.0;  // modeld runs at 20 Hz

int fail(const char* what) {
  std::fprintf(stderr, "driving_demo: %s\n", what);
  return 1;
}

int fail_status(const char* what, edgert_status st) {
  std::fprintf(stderr, "driving_demo: %s: %s: %s\n", what, edgert_status_name(st), edgert_last_error());
  return 1;
}

bool parse_long(const char* s, long* out) {
  if (!s || !*s) return false;
  char* end = nullptr;
  long v = std::strtol(s, &end, 10);
  if (*end || v < 0) return false;
  *out = v;
  return true;
}

// ---- float16 <-> float32 (IEEE binary16, round to nearest even)

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u | (x > 0x7f800000u ? 0x200u : 0));
  if (x >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds past 65504
  if (x < 0x38800000u) {  // subnormal half (or zero): value / 2^-24, rounded
    float a;
    std::memcpy(&a, &x, 4);
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(a * 16777216.0f)));
  }
  const uint32_t mant = x & 0x1fffu;
  uint32_t h = ((x >> 13) - (112u << 10));
  if (mant > 0x1000u || (mant == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(sign | h);
}

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  float f;
  if (exp == 0) {
    f = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -f : f;
  }
  const uint32_t bits = sign | (exp == 31 ? 0x7f800000u | (mant << 13) : ((exp + 112u) << 23) | (mant << 13));
  std::memcpy(&f, &bits, 4);
  return f;
}

// A float tensor in the model's float type (F32 or F16).
struct FloatView {
  uint8_t* data = nullptr;
  edgert_dtype dtype = EDGERT_F32;
  size_t count = 0;
  void set(size_t i, float v) const {
    if (dtype == EDGERT_F32) {
      std::memcpy(data + 4 * i, &v, 4);
    } else {
      const uint16_t h = float_to_half(v);
      std::memcpy(data + 2 * i, &h, 2);
    }
  }
  float get(size_t i) const {
    if (dtype == EDGERT_F32) {
      float v;
      std::memcpy(&v, data + 4 * i, 4);
      return v;
    }
    uint16_t h;
    std::memcpy(&h, data + 2 * i, 2);
    return half_to_float(h);
  }
  size_t elem() const { return dtype == EDGERT_F32 ? 4 : 2; }
};

// ---- synthetic cameras

struct Rng {
  uint64_t s;
  uint32_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return static_cast<uint32_t>(s >> 32);
  }
};

uint8_t clamp_u8(float v) { return static_cast<uint8_t>(std::min(255.0f, std::max(0.0f, v + 0.5f))); }

// Writes one camera frame in openpilot's 6-channel YUV 4:2:0 layout into dst (6 planes of
// h x w): channels 0-3 are the full-resolution (2h x 2w) Y plane split 2x2 (Y[0::2,0::2],
// Y[1::2,0::2], Y[0::2,1::2], Y[1::2,1::2]), then U and V at h x w. The scene: sky, a road
// with dashed lane lines that move towards the car as `frame` advances, gentle curvature,
// sensor noise. `zoom` < 1 is the wide camera.
void render_camera(uint8_t* dst, int h, int w, long frame, float zoom, Rng* rng) {
  const int H = 2 * h, W = 2 * w;
  const float horizon = 0.40f * static_cast<float>(H);
  const float curve = 0.15f * std::sin(0.05f * static_cast<float>(frame));
  const float travel = 0.35f * static_cast<float>(frame);  // lane-dash phase
  const size_t plane = static_cast<size_t>(h) * static_cast<size_t>(w);
  for (int y = 0; y < H; ++y) {
    const float fy = static_cast<float>(y);
    const float depth = fy > horizon ? (fy - horizon) / (static_cast<float>(H) - horizon) : 0.0f;  // 0 far .. 1 near
    for (int x = 0; x < W; ++x) {
      const float u = (static_cast<float>(x) / static_cast<float>(W) - 0.5f) / zoom;  // -0.5 .. 0.5 at zoom 1
      float luma;
      if (fy <= horizon) {
        luma = 150.0f + 60.0f * (1.0f - fy / horizon);  // sky, brighter upwards
      } else {
        const float centre = curve * (1.0f - depth) * (1.0f - depth);
        const float half_road = 0.05f + 0.6f * depth;
        const float d = (u - centre) / half_road;  // -1 .. 1 across the road
        luma = std::fabs(d) < 1.2f ? 70.0f : 100.0f + 20.0f * std::sin(40.0f * u + fy * 0.1f);  // asphalt / verge
        const bool dash = std::fmod(1.0f / (depth + 0.05f) + travel, 2.0f) < 1.0f;
        const float line_w = 0.03f;
        if (std::fabs(std::fabs(d) - 1.0f) < line_w) luma = 220.0f;            // solid edges
        if (dash && std::fabs(d) < line_w * 1.5f) luma = 230.0f;               // dashed centre
      }
      const float noise = static_cast<float>(static_cast<int>(rng->next() % 17u) - 8);
      const int c = (y & 1) + 2 * (x & 1);  // which of the four Y planes
      dst[static_cast<size_t>(c) * plane + static_cast<size_t>(y / 2) * static_cast<size_t>(w) + static_cast<size_t>(x / 2)] =
          clamp_u8(luma + noise);
    }
  }
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const bool sky = static_cast<float>(2 * y) <= horizon;
      const size_t i = static_cast<size_t>(y) * static_cast<size_t>(w) + static_cast<size_t>(x);
      dst[4 * plane + i] = clamp_u8((sky ? 150.0f : 124.0f) + static_cast<float>(rng->next() % 5u) - 2.0f);  // U
      dst[5 * plane + i] = clamp_u8((sky ? 115.0f : 130.0f) + static_cast<float>(rng->next() % 5u) - 2.0f);  // V
    }
  }
}

// ---- .npy output for --dump (test hook)

bool write_npy(const char* dir, long frame, const char* name, const edgert_tensor_info& info, const void* data) {
  char path[4096];
  std::snprintf(path, sizeof(path), "%s/frame%03ld_%s.npy", dir, frame, name);
  const char* descr = info.dtype == EDGERT_U8 ? "|u1" : info.dtype == EDGERT_F16 ? "<f2" : "<f4";
  char header[256];
  int n = std::snprintf(header, sizeof(header), "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  for (int32_t d = 0; d < info.rank; ++d)
    n += std::snprintf(header + n, sizeof(header) - static_cast<size_t>(n), "%lld,%s",
                       static_cast<long long>(info.shape[d]), d + 1 < info.rank ? " " : "");
  n += std::snprintf(header + n, sizeof(header) - static_cast<size_t>(n), "), }");
  while ((10 + n + 1) % 64) header[n++] = ' ';
  header[n++] = '\n';
  FILE* f = std::fopen(path, "wb");
  if (!f) return false;
  const unsigned char magic[8] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  const uint16_t len = static_cast<uint16_t>(n);
  bool ok = std::fwrite(magic, 1, 8, f) == 8 && std::fwrite(&len, 2, 1, f) == 1 &&
            std::fwrite(header, 1, static_cast<size_t>(n), f) == static_cast<size_t>(n) &&
            std::fwrite(data, 1, info.size_bytes, f) == info.size_bytes;
  return std::fclose(f) == 0 && ok;
}

// ---- timing

double clock_ms(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

double now_ms() { return clock_ms(CLOCK_MONOTONIC); }

// The calling thread's CPU time: on a shared machine it leaves out the time the run spent
// preempted, which the wall-clock latency includes (drive.py reads the same clock).
double thread_cpu_ms() { return clock_ms(CLOCK_THREAD_CPUTIME_ID); }

void sleep_until_ms(double t) {
  timespec ts;
  ts.tv_sec = static_cast<time_t>(t / 1e3);
  ts.tv_nsec = static_cast<long>((t - static_cast<double>(ts.tv_sec) * 1e3) * 1e6);
  if (ts.tv_nsec >= 1000000000L) {
    ts.tv_sec += 1;
    ts.tv_nsec -= 1000000000L;
  }
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) != 0) {
  }
}

struct Options {
  const char* bundle = nullptr;
  long frames = 10, warmup = 1, threads = 1, seed = 1, device = 0;
  bool allow_source_build = false;
  double budget_ms = 20.0;
  bool sleep = true, quiet = false;
  const char* dump = nullptr;
};

int parse_args(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    auto is = [a](const char* s) { return std::strcmp(a, s) == 0; };
    if (is("--help") || is("-h")) {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (is("--frames")) {
      if (!parse_long(v, &o->frames) || o->frames < 1) return fail("--frames needs a positive integer");
      ++i;
    } else if (is("--warmup")) {
      if (!parse_long(v, &o->warmup)) return fail("--warmup needs an integer >= 0");
      ++i;
    } else if (is("--threads")) {
      if (!parse_long(v, &o->threads) || o->threads < 1) return fail("--threads needs a positive integer");
      ++i;
    } else if (is("--device")) {
      if (!parse_long(v, &o->device) || o->device > INT32_MAX) return fail("--device needs an integer >= 0");
      ++i;
    } else if (is("--allow-source-build")) {
      o->allow_source_build = true;
    } else if (is("--seed")) {
      if (!parse_long(v, &o->seed)) return fail("--seed needs an integer >= 0");
      ++i;
    } else if (is("--budget-ms")) {
      char* end = nullptr;
      o->budget_ms = v ? std::strtod(v, &end) : 0.0;
      if (!v || *end || !(o->budget_ms > 0)) return fail("--budget-ms needs a positive number");
      ++i;
    } else if (is("--no-sleep")) {
      o->sleep = false;
    } else if (is("--quiet")) {
      o->quiet = true;
    } else if (is("--dump")) {
      if (!v) return fail("--dump needs a directory");
      o->dump = v;
      ++i;
    } else if (a[0] == '-') {
      std::fprintf(stderr, "driving_demo: unknown option %s (see --help)\n", a);
      return 1;
    } else if (!o->bundle) {
      o->bundle = a;
    } else {
      return fail("more than one bundle given (see --help)");
    }
  }
  if (!o->bundle) return fail("no bundle given (see --help)");
  return -1;
}

struct Tensor {
  int32_t index = -1;
  edgert_tensor_info info{};
  uint8_t* data = nullptr;
};

struct Handles {
  edgert_bundle* bundle = nullptr;
  edgert_context* context = nullptr;
  std::vector<void*> blocks;
  ~Handles() {
    edgert_context_destroy(context);
    edgert_bundle_close(bundle);
    for (void* p : blocks) std::free(p);
  }
  uint8_t* alloc(size_t bytes) {
    void* p = nullptr;
    if (posix_memalign(&p, 64, (bytes + 63) / 64 * 64) != 0) return nullptr;
    std::memset(p, 0, bytes);
    blocks.push_back(p);
    return static_cast<uint8_t*>(p);
  }
};

bool same_shape(const edgert_tensor_info& info, std::initializer_list<int64_t> shape) {
  if (info.rank != static_cast<int32_t>(shape.size())) return false;
  int32_t d = 0;
  for (int64_t s : shape)
    if (info.shape[d++] != s) return false;
  return true;
}

void describe(const edgert_tensor_info& info, char* buf, size_t size) {
  int n = std::snprintf(buf, size, "%s (", edgert_dtype_name(info.dtype));
  for (int32_t d = 0; d < info.rank && n > 0 && static_cast<size_t>(n) < size; ++d)
    n += std::snprintf(buf + n, size - static_cast<size_t>(n), "%s%lld", d ? "," : "",
                       static_cast<long long>(info.shape[d]));
  if (n > 0 && static_cast<size_t>(n) < size) std::snprintf(buf + n, size - static_cast<size_t>(n), ")");
}

int run_demo(const Options& o) {
  Handles h;
  edgert_status st = edgert_bundle_open(o.bundle, &h.bundle);
  if (st != EDGERT_OK) return fail_status("cannot open bundle", st);

  // ---- the interface
  const char* names[] = {"img", "big_img", "features_buffer", "desire_pulse", "traffic_convention", "action_t"};
  Tensor in[6];
  for (int i = 0; i < 6; ++i) {
    in[i].index = edgert_bundle_find_input(h.bundle, names[i]);
    if (in[i].index < 0) {
      std::fprintf(stderr, "driving_demo: the bundle has no input '%s' (is it the driving model?)\n", names[i]);
      return 1;
    }
    edgert_bundle_input_info(h.bundle, in[i].index, &in[i].info);
  }
  Tensor out;
  out.index = edgert_bundle_find_output(h.bundle, "outputs");
  if (out.index < 0) return fail("the bundle has no output 'outputs'");
  edgert_bundle_output_info(h.bundle, out.index, &out.info);
  if (edgert_bundle_input_count(h.bundle) != 6 || edgert_bundle_output_count(h.bundle) != 1)
    return fail("expected exactly the 6 driving-model inputs and 1 output");

  Tensor &img = in[0], &big = in[1], &feat = in[2], &desire = in[3], &traffic = in[4], &action = in[5];
  const edgert_dtype fdt = feat.info.dtype;
  char buf[128];
  for (Tensor* t : {&img, &big}) {
    if (t->info.dtype != EDGERT_U8 || t->info.rank != 4 || t->info.shape[0] != 1 || t->info.shape[1] != 12 ||
        t->info.shape[2] % 2 || t->info.shape[3] % 2) {
      describe(t->info, buf, sizeof(buf));
      std::fprintf(stderr, "driving_demo: input '%s' is %s, expected u8 (1,12,H,W)\n", t->info.name, buf);
      return 1;
    }
  }
  if (fdt != EDGERT_F32 && fdt != EDGERT_F16) return fail("features_buffer must be f32 or f16");
  if (feat.info.rank != 3 || feat.info.shape[0] != 1) return fail("features_buffer must be (1, history, features)");
  const int64_t history = feat.info.shape[1], nfeat = feat.info.shape[2];
  const int64_t ndesire = desire.info.rank == 3 ? desire.info.shape[2] : 0;
  if (desire.info.dtype != fdt || !same_shape(desire.info, {1, history + 1, ndesire}) || ndesire < 1)
    return fail("desire_pulse must be (1, history + 1, N) in the features_buffer's float type");
  if (traffic.info.dtype != fdt || !same_shape(traffic.info, {1, 2})) return fail("traffic_convention must be (1,2)");
  if (action.info.dtype != fdt || !same_shape(action.info, {1, 2})) return fail("action_t must be (1,2)");
  if (out.info.dtype != fdt || out.info.rank != 2 || out.info.shape[0] != 1 || out.info.shape[1] < nfeat)
    return fail("outputs must be (1, N >= features) in the features_buffer's float type");

  // ---- memory: everything allocated and bound once
  for (Tensor* t : {&img, &big, &feat, &desire, &traffic, &action, &out}) {
    t->data = h.alloc(t->info.size_bytes);
    if (!t->data) return fail("out of memory");
  }
  edgert_context_options options = {};
  options.num_threads = static_cast<int32_t>(o.threads);
  options.device_index = static_cast<int32_t>(o.device);
  options.allow_source_build = o.allow_source_build ? 1 : 0;
  st = edgert_context_create(h.bundle, &options, &h.context);
  if (st != EDGERT_OK) return fail_status("cannot create context", st);
  for (Tensor* t : {&img, &big, &feat, &desire, &traffic, &action})
    if ((st = edgert_bind_input(h.context, t->index, t->data, t->info.size_bytes)) != EDGERT_OK)
      return fail_status("cannot bind input", st);
  if ((st = edgert_bind_output(h.context, out.index, out.data, out.info.size_bytes)) != EDGERT_OK)
    return fail_status("cannot bind output", st);

  const FloatView feat_v{feat.data, fdt, static_cast<size_t>(history * nfeat)};
  const FloatView desire_v{desire.data, fdt, static_cast<size_t>((history + 1) * ndesire)};
  const FloatView traffic_v{traffic.data, fdt, 2};
  const FloatView action_v{action.data, fdt, 2};
  const FloatView out_v{out.data, fdt, static_cast<size_t>(out.info.shape[1])};
  const size_t row_bytes = static_cast<size_t>(nfeat) * feat_v.elem();
  const uint8_t* hidden = out.data + (out_v.count - static_cast<size_t>(nfeat)) * out_v.elem();
  traffic_v.set(0, 1.0f);  // right-hand traffic
  traffic_v.set(1, 0.0f);
  const int ch = static_cast<int>(img.info.shape[2]), cw = static_cast<int>(img.info.shape[3]);
  const size_t frame_bytes = 6 * static_cast<size_t>(ch) * static_cast<size_t>(cw);  // one 6-channel frame
  Rng rng{0x9e3779b97f4a7c15ull * static_cast<uint64_t>(o.seed + 1) + 1};
  // The first frame's "previous" half: frame -1.
  render_camera(img.data + frame_bytes, ch, cw, -1, 1.0f, &rng);
  render_camera(big.data + frame_bytes, ch, cw, -1, 0.5f, &rng);

  const long total = o.warmup + o.frames;
  std::vector<double> lat(static_cast<size_t>(o.frames)), sorted(static_cast<size_t>(o.frames));
  std::vector<double> cpu(static_cast<size_t>(o.frames));
  describe(out.info, buf, sizeof(buf));
  std::printf("driving_demo: %s\n", o.bundle);
  std::printf("  inputs: img, big_img u8 (1,12,%d,%d); features_buffer %s (1,%lld,%lld); desire_pulse (1,%lld,%lld); "
              "traffic_convention, action_t (1,2)\n",
              ch, cw, edgert_dtype_name(fdt), static_cast<long long>(history), static_cast<long long>(nfeat),
              static_cast<long long>(history + 1), static_cast<long long>(ndesire));
  std::printf("  output: outputs %s, hidden_state = the last %lld values\n", buf, static_cast<long long>(nfeat));
  std::printf("  arena %zu bytes, %d thread(s), %ld warm-up + %ld timed frames, %s\n",
              edgert_bundle_arena_size(h.bundle), options.num_threads, o.warmup, o.frames,
              o.sleep ? "20 Hz schedule (one frame per 50 ms)" : "back to back (--no-sleep)");
  std::fflush(stdout);

  long dropped = 0;
  double tick = now_ms();
  for (long f = 0; f < total; ++f) {
    // -- this frame's inputs (the bound buffers, in place)
    for (Tensor* cam : {&img, &big}) {  // the previous frame becomes channels 0-5
      std::memmove(cam->data, cam->data + frame_bytes, frame_bytes);
      render_camera(cam->data + frame_bytes, ch, cw, f, cam == &img ? 1.0f : 0.5f, &rng);
    }
    std::memmove(desire.data, desire.data + static_cast<size_t>(ndesire) * desire_v.elem(),
                 static_cast<size_t>(history * ndesire) * desire_v.elem());
    for (int64_t k = 0; k < ndesire; ++k)  // a desire pulse (lane change left) now and then
      desire_v.set(static_cast<size_t>(history * ndesire + k), (f % 40 == 20 && k == 3) ? 1.0f : 0.0f);
    action_v.set(0, 0.002f * std::sin(0.05f * static_cast<float>(f)));  // desired curvature
    action_v.set(1, 0.3f * std::cos(0.03f * static_cast<float>(f)));    // desired acceleration

    const double c0 = thread_cpu_ms();
    const double t0 = now_ms();
    st = edgert_run(h.context);
    const double ms = now_ms() - t0;
    const double cpu_ms = thread_cpu_ms() - c0;
    if (st != EDGERT_OK) return fail_status("edgert_run failed", st);

    if (o.dump) {
      for (Tensor* t : {&img, &big, &feat, &desire, &traffic, &action, &out})
        if (!write_npy(o.dump, f, t->info.name, t->info, t->data)) return fail("cannot write --dump files");
    }
    // -- the hidden_state joins the history, oldest row out (modeld's features_buffer)
    std::memmove(feat.data, feat.data + row_bytes, static_cast<size_t>(history - 1) * row_bytes);
    std::memcpy(feat.data + static_cast<size_t>(history - 1) * row_bytes, hidden, row_bytes);

    const bool warm = f < o.warmup;
    if (!warm) {
      lat[static_cast<size_t>(f - o.warmup)] = ms;
      cpu[static_cast<size_t>(f - o.warmup)] = cpu_ms;
    }
    if (!o.quiet) {
      double sum = 0, amax = 0;
      for (size_t i = out_v.count - static_cast<size_t>(nfeat); i < out_v.count; ++i) {
        const double v = out_v.get(i);
        sum += v;
        amax = std::max(amax, std::fabs(v));
      }
      std::printf("  frame %3ld%s %9.2f ms (cpu %6.2f)  %s  hidden_state mean %+.4f max|.| %.3f  out[0] %+.4f\n", f,
                  warm ? " (warm-up)" : "          ", ms, cpu_ms, ms <= o.budget_ms ? "within budget" : "over budget  ",
                  sum / static_cast<double>(nfeat), amax, static_cast<double>(out_v.get(0)));
      std::fflush(stdout);
    }
    // -- 20 Hz: wait for the next camera frame; frames that arrived while we ran are dropped
    if (o.sleep && f + 1 < total) {
      tick += kPeriodMs;
      const double now = now_ms();
      if (now > tick) {
        const long missed = static_cast<long>((now - tick) / kPeriodMs) + 1;
        dropped += missed;
        tick += static_cast<double>(missed) * kPeriodMs;
      }
      sleep_until_ms(tick);
    }
  }

  std::copy(lat.begin(), lat.end(), sorted.begin());
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  const double median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  const size_t p99_rank = (n * 99 + 99) / 100;  // nearest rank: ceil(0.99 n)
  const double p99 = sorted[p99_rank - 1];
  long over = 0;
  for (double v : lat) over += v > o.budget_ms;
  std::printf("\nper-frame latency (edgert_run, %zu frames): median %.2f ms, p99 %.2f ms, min %.2f ms, max %.2f ms\n", n,
              median, p99, sorted.front(), sorted.back());
  std::sort(cpu.begin(), cpu.end());
  const double cpu_median = n % 2 ? cpu[n / 2] : (cpu[n / 2 - 1] + cpu[n / 2]) / 2;
  std::printf("per-frame CPU time (the calling thread): median %.2f ms, min %.2f ms\n", cpu_median, cpu.front());
  if (o.sleep)
    std::printf("20 Hz schedule: %ld camera frame(s) dropped while the model was still running\n", dropped);
  if (p99 <= o.budget_ms) {
    std::printf("budget: %.1f ms per frame (openpilot's modeld at 20 Hz): MET (p99 %.2f ms, %.0f%% of the budget)\n",
                o.budget_ms, p99, 100.0 * p99 / o.budget_ms);
  } else {
    std::printf("budget: %.1f ms per frame (openpilot's modeld at 20 Hz): NOT MET (p99 %.2f ms = %.1fx the budget; "
                "%ld of %zu frames over)\n",
                o.budget_ms, p99, p99 / o.budget_ms, over, n);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  const int rc = parse_args(argc, argv, &o);
  if (rc >= 0) return rc;
  return run_demo(o);
}
