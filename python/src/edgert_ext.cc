// _edgert: the Python binding of the runtime's C API (device_runtime/include/edgert.h), with
// nanobind. What Python calls per inference is Context.run, which stays in C++: it looks the
// arrays up in the caller's dict by interned name, checks each one's dtype, shape and C order
// through the buffer protocol (no numpy C API, so no numpy ABI to match), binds it in place
// (zero copy), releases the GIL for edgert_run and returns the outputs. With out= it allocates
// nothing: the buffer views live in vectors sized at context creation and the caller's arrays
// are written in place. python/edgert/__init__.py is the public face (exceptions, TensorInfo,
// self_test, prepare); it never imports onnx, protobuf or LLVM, and neither does this module.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bundle_signature.h"
#include "edgert.h"
#include "edgert_prepare.h"
#include "internal.h"  // read-only: the bundle's Target table and file bytes (signer), for the description

namespace nb = nanobind;

namespace {

// The exception class for each edgert_status, set by python/edgert/__init__.py at import.
PyObject* g_status_error[8] = {};
PyObject* g_closed_error = nullptr;
// numpy's objects, imported on first use. Leaked on purpose: destructors of Python objects
// must not run at process exit, after the interpreter has finalized.
struct NumpyRefs {
  nb::object numpy, empty, ascontiguousarray, uint16;  // uint16: bf16 arrays are viewed as their bits
  nb::object dtypes[13];                               // the numpy dtype of each edgert_dtype
};
NumpyRefs& g_np = *new NumpyRefs;
nb::object& g_numpy = g_np.numpy;
nb::object& g_np_empty = g_np.empty;
nb::object& g_np_ascontiguousarray = g_np.ascontiguousarray;
nb::object& g_np_uint16 = g_np.uint16;
nb::object (&g_dtype_objects)[13] = g_np.dtypes;

[[noreturn]] void raise_status(edgert_status st, const std::string& msg) {
  PyObject* cls = (st > 0 && st < 7 && g_status_error[st]) ? g_status_error[st] : PyExc_RuntimeError;
  PyErr_SetString(cls, msg.c_str());
  throw nb::python_error();
}

void check(edgert_status st, const char* what) {
  if (st == EDGERT_OK) return;
  raise_status(st, std::string(what) + ": " + edgert_last_error());
}

[[noreturn]] void raise_closed(const char* what) {
  PyErr_SetString(g_closed_error ? g_closed_error : PyExc_ValueError, what);
  throw nb::python_error();
}

void ensure_numpy() {
  if (g_numpy.is_valid()) return;
  g_numpy = nb::module_::import_("numpy");
  g_np_empty = g_numpy.attr("empty");
  g_np_ascontiguousarray = g_numpy.attr("ascontiguousarray");
  g_np_uint16 = g_numpy.attr("dtype")("uint16");
  const char* names[13] = {"float32", "float16", "int8", "uint8", "int16", "int32", "int64",
                           "bool", "uint16", "uint32", "uint64", "float64", "uint16"};
  for (int i = 0; i < 13; ++i) g_dtype_objects[i] = g_numpy.attr("dtype")(names[i]);
  try {  // bfloat16 outputs come back as ml_dtypes.bfloat16 where it is installed, else as uint16 bits
    g_dtype_objects[EDGERT_BF16] = g_numpy.attr("dtype")(nb::module_::import_("ml_dtypes").attr("bfloat16"));
  } catch (nb::python_error&) {
  }
}

// (kind, itemsize) of an edgert dtype, as the buffer protocol describes an element.
struct Elem {
  char kind;  // 'f' float, 'i' signed, 'u' unsigned, 'b' bool, 'B' bfloat16
  int size;
};
Elem elem_of(edgert_dtype d) {
  switch (d) {
    case EDGERT_F32: return {'f', 4};
    case EDGERT_F16: return {'f', 2};
    case EDGERT_I8: return {'i', 1};
    case EDGERT_U8: return {'u', 1};
    case EDGERT_I16: return {'i', 2};
    case EDGERT_I32: return {'i', 4};
    case EDGERT_I64: return {'i', 8};
    case EDGERT_BOOL: return {'b', 1};
    case EDGERT_U16: return {'u', 2};
    case EDGERT_U32: return {'u', 4};
    case EDGERT_U64: return {'u', 8};
    case EDGERT_F64: return {'f', 8};
    case EDGERT_BF16: return {'B', 2};
  }
  return {'?', 0};
}

// The element kind a buffer-protocol format string describes ('?' when not a plain number
// in this machine's byte order).
char kind_of_format(const char* fmt) {
  if (!fmt) return 'u';  // no format: unsigned bytes
  if (*fmt == '@' || *fmt == '=' || *fmt == '<') ++fmt;
  if (!fmt[0] || fmt[1]) return '?';
  switch (*fmt) {
    case 'e': case 'f': case 'd': return 'f';
    case 'b': case 'h': case 'i': case 'l': case 'q': case 'n': return 'i';
    case 'B': case 'H': case 'I': case 'L': case 'Q': case 'N': return 'u';
    case '?': return 'b';
    default: return '?';
  }
}

struct TensorDesc {
  std::string name;
  edgert_dtype dtype;
  std::vector<int64_t> shape;
  size_t size_bytes;
  nb::object pyname;   // interned str: the dict key
  nb::tuple pyshape;
};

std::string describe(const TensorDesc& t) {
  std::string s = edgert_dtype_name(t.dtype);
  s += " (";
  for (size_t i = 0; i < t.shape.size(); ++i) s += (i ? "," : "") + std::to_string(t.shape[i]);
  if (t.shape.size() == 1) s += ",";
  return s + ")";
}

std::string describe_buffer(const Py_buffer& v) {
  std::string s = std::string("format '") + (v.format ? v.format : "B") + "' itemsize " + std::to_string(v.itemsize) + " (";
  for (int i = 0; i < v.ndim; ++i) s += (i ? "," : "") + std::to_string(v.shape[i]);
  if (v.ndim == 1) s += ",";
  s += ")";
  if (!PyBuffer_IsContiguous(&v, 'C')) s += " not C-contiguous";
  return s;
}

// A bundle: the handle (closed when the Bundle is closed and no context uses it any more) and
// what the C API says about its inputs and outputs.
struct BundleState {
  edgert_bundle* bundle = nullptr;
  void* memory = nullptr;  // the aligned copy of a bundle given as bytes
  std::vector<TensorDesc> inputs, outputs;
  ~BundleState() {
    if (bundle) edgert_bundle_close(bundle);
    std::free(memory);
  }
};

void fill(std::vector<TensorDesc>* v, const edgert_bundle* b, bool out) {
  const int32_t n = out ? edgert_bundle_output_count(b) : edgert_bundle_input_count(b);
  for (int32_t i = 0; i < n; ++i) {
    edgert_tensor_info info;
    check(out ? edgert_bundle_output_info(b, i, &info) : edgert_bundle_input_info(b, i, &info), "tensor info");
    TensorDesc t;
    t.name = info.name;
    t.dtype = info.dtype;
    t.shape.assign(info.shape, info.shape + info.rank);
    t.size_bytes = info.size_bytes;
    PyObject* s = PyUnicode_FromString(info.name);
    if (!s) throw nb::python_error();
    PyUnicode_InternInPlace(&s);
    t.pyname = nb::steal(s);
    nb::list shape;
    for (int64_t d : t.shape) shape.append(d);
    t.pyshape = nb::tuple(shape);
    v->push_back(std::move(t));
  }
}

class Bundle {
 public:
  Bundle(nb::object source, nb::bytes trusted_keys, bool map_in_place) {
    edgert_open_options o = {};
    o.flags = map_in_place ? EDGERT_OPEN_MAP_IN_PLACE : 0;
    o.trusted_public_keys = reinterpret_cast<const uint8_t*>(trusted_keys.c_str());
    o.num_trusted_keys = trusted_keys.size() / EDGERT_ED25519_PUBLIC_KEY_SIZE;
    if (o.num_trusted_keys == 0) o.trusted_public_keys = nullptr;
    state_ = std::make_shared<BundleState>();
    edgert_status st;
    if (nb::isinstance<nb::str>(source)) {
      std::string path = nb::cast<std::string>(source);
      {
        nb::gil_scoped_release release;
        st = edgert_bundle_open_with_options(path.c_str(), &o, &state_->bundle);
      }
      if (st != EDGERT_OK) raise_status(st, std::string(edgert_last_error()));
    } else {
      // Bytes-like: copied into page-aligned memory of our own (the C API uses caller memory in
      // place and asks for it aligned and unchanged until close).
      Py_buffer view;
      if (PyObject_GetBuffer(source.ptr(), &view, PyBUF_C_CONTIGUOUS) != 0) throw nb::python_error();
      const size_t size = static_cast<size_t>(view.len);
      if (posix_memalign(&state_->memory, 4096, std::max<size_t>(size, 1)) != 0) {
        PyBuffer_Release(&view);
        raise_status(EDGERT_ERROR_OUT_OF_MEMORY, "cannot allocate memory for the bundle");
      }
      std::memcpy(state_->memory, view.buf, size);
      PyBuffer_Release(&view);
      if (map_in_place) o.flags = 0;  // caller memory is always used in place
      {
        nb::gil_scoped_release release;
        st = edgert_bundle_open_memory_with_options(state_->memory, size, &o, &state_->bundle);
      }
      if (st != EDGERT_OK) raise_status(st, std::string(edgert_last_error()));
    }
    fill(&state_->inputs, state_->bundle, false);
    fill(&state_->outputs, state_->bundle, true);
    signed_mode_ = o.num_trusted_keys > 0;
  }

  const std::shared_ptr<BundleState>& state(const char* what) const {
    if (!state_) raise_closed((std::string(what) + ": the bundle is closed").c_str());
    return state_;
  }
  void close() { state_.reset(); }
  bool closed() const { return !state_; }

  nb::list tensors(bool out) const {
    nb::list l;
    for (const TensorDesc& t : out ? state("outputs")->outputs : state("inputs")->inputs)
      l.append(nb::make_tuple(t.name, static_cast<int>(t.dtype), t.pyshape, t.size_bytes));
    return l;
  }
  size_t arena_size() const { return edgert_bundle_arena_size(state("arena_size")->bundle); }
  std::string port() const { return edgert_bundle_port(state("port")->bundle); }
  // The bundle's Target table: arch, cpu, features (read-only, from the verified FlatBuffer).
  nb::dict target() const {
    const edgert_bundle* b = state("target")->bundle;
    nb::dict d;
    const auto* t = b->root->target();
    static const char* arch[] = {"x86_64", "aarch64", "hexagon", "opencl", "adreno"};
    const unsigned a = t ? static_cast<unsigned>(t->arch()) : 99u;
    d["arch"] = a < 5 ? arch[a] : "unknown";
    d["cpu"] = t && t->cpu() ? t->cpu()->str() : std::string();
    nb::list f;
    if (t && t->features())
      for (const auto* s : *t->features()) f.append(s->str());
    d["features"] = f;
    d["port"] = edgert_bundle_port(b);
    return d;
  }
  // The public key in the bundle's signature trailer (None when unsigned) and whether this
  // open checked it (signed mode: it is one of the trusted keys).
  nb::object signer() const {
    const edgert_bundle* b = state("signer")->bundle;
    if (b->file_size < edge::bundle::kSignatureTrailerSize) return nb::none();
    const uint8_t* p = b->file + b->file_size - edge::bundle::kSignatureTrailerSize;
    if (!edge::bundle::looks_like_trailer(p, edge::bundle::kSignatureTrailerSize)) return nb::none();
    return nb::bytes(reinterpret_cast<const char*>(p + sizeof(edge::bundle::kSignatureMagic)),
                     edge::bundle::kPublicKeySize);
  }
  bool signature_verified() const { return state("signature_verified") && signed_mode_; }
  // Reference data of --embed-reference: (bytes, rtol, atol) or None.
  nb::object reference(bool is_output, int32_t index) const {
    const edgert_bundle* b = state("reference")->bundle;
    const void* data = nullptr;
    size_t size = 0;
    if (edgert_bundle_reference(b, is_output ? 1 : 0, index, &data, &size) != EDGERT_OK) return nb::none();
    double rtol = 0, atol = 0;
    edgert_bundle_reference_tolerance(b, &rtol, &atol);
    return nb::make_tuple(nb::bytes(static_cast<const char*>(data), size), rtol, atol);
  }
  nb::list commands() const {
    const edgert_bundle* b = state("commands")->bundle;
    nb::list l;
    const int32_t n = edgert_bundle_command_count(b);
    for (int32_t i = 0; i < n; ++i) {
      edgert_command_info c;
      check(edgert_bundle_command_info(b, i, &c), "command info");
      l.append(nb::make_tuple(c.name ? c.name : "", c.is_launch != 0, c.flops, c.bytes));
    }
    return l;
  }

 private:
  std::shared_ptr<BundleState> state_;
  bool signed_mode_ = false;
};

// Releases the buffer views a run holds, however it ends.
struct ViewGuard {
  std::vector<Py_buffer>* views;
  size_t count = 0;
  ~ViewGuard() {
    for (size_t i = 0; i < count; ++i) PyBuffer_Release(&(*views)[i]);
  }
};

class Context {
 public:
  Context(const Bundle& bundle, int32_t threads, bool allow_source_build, int32_t device) {
    state_ = bundle.state("context");
    ensure_numpy();
    if (threads < 0 || threads > 1024) raise_status(EDGERT_ERROR_INVALID_ARGUMENT, "threads must be 0..1024");
    edgert_context_options o = {};
    o.num_threads = threads;
    o.allow_source_build = allow_source_build ? 1 : 0;
    o.device_index = device;
    edgert_status st;
    {
      nb::gil_scoped_release release;
      st = edgert_context_create(state_->bundle, &o, &ctx_);
    }
    if (st != EDGERT_OK) raise_status(st, std::string(edgert_last_error()));
    const size_t n = state_->inputs.size() + state_->outputs.size();
    views_.resize(n);
    bound_.assign(n, nullptr);
  }
  ~Context() { destroy(); }

  void close() {
    if (busy_.load()) raise_status(EDGERT_ERROR_INVALID_ARGUMENT, "close: the context is running in another thread");
    destroy();
  }
  bool closed() const { return ctx_ == nullptr; }

  // Gets `obj`'s buffer into *view with the tensor's dtype, shape and C order. An input that
  // does not match is copied (numpy.ascontiguousarray) when `copy`, else refused naming it.
  void acquire(PyObject* obj, const TensorDesc& t, bool output, bool copy, Py_buffer* view) {
    const char* what = output ? "output" : "input";
    const int flags = output ? (PyBUF_RECORDS | PyBUF_WRITABLE) : PyBUF_RECORDS_RO;
    nb::object converted;  // a bfloat16 view or a copy, alive while we look at it
    if (PyObject_GetBuffer(obj, view, flags) != 0) {
      // bfloat16 (ml_dtypes) arrays do not export a buffer: take their bits as uint16.
      PyErr_Clear();
      bool ok = false;
      if (t.dtype == EDGERT_BF16 && PyObject_HasAttrString(obj, "view")) {
        try {
          converted = nb::handle(obj).attr("view")(g_np_uint16);
          ok = PyObject_GetBuffer(converted.ptr(), view, flags) == 0;
          if (!ok) PyErr_Clear();
        } catch (nb::python_error&) {
        }
      }
      if (!ok && !output && copy) {
        converted = g_np_ascontiguousarray(nb::handle(obj), g_dtype_objects[t.dtype]);
        ok = PyObject_GetBuffer(converted.ptr(), view, flags) == 0;
        if (!ok) PyErr_Clear();
      }
      if (!ok) {
        std::string msg = std::string(what) + " '" + t.name + "': expected a " +
                          (output ? "writable " : "") + "numpy array of " + describe(t) + ", got " +
                          Py_TYPE(obj)->tp_name;
        raise_status(EDGERT_ERROR_INVALID_ARGUMENT, msg);
      }
    }
    if (matches(*view, t)) return;
    std::string got = describe_buffer(*view);
    PyBuffer_Release(view);
    if (!output && copy) {
      converted = g_np_ascontiguousarray(nb::handle(obj), g_dtype_objects[t.dtype]);
      if (PyObject_GetBuffer(converted.ptr(), view, flags) != 0) throw nb::python_error();
      if (matches(*view, t)) return;
      got = describe_buffer(*view);
      PyBuffer_Release(view);
    }
    raise_status(EDGERT_ERROR_INVALID_ARGUMENT,
                 std::string(what) + " '" + t.name + "': expected " + describe(t) + " C-contiguous, got " + got +
                     (output || copy ? "" : " (copy=True converts dtype and order; the shape must match)"));
  }

  static bool matches(const Py_buffer& v, const TensorDesc& t) {
    const Elem e = elem_of(t.dtype);
    char k = kind_of_format(v.format);
    if (e.kind == 'B' && k == 'u') k = 'B';  // bfloat16 as its uint16 bits
    if (k != e.kind || v.itemsize != e.size) return false;
    if (static_cast<size_t>(v.ndim) != t.shape.size()) return false;
    for (int i = 0; i < v.ndim; ++i)
      if (v.shape[i] != t.shape[i]) return false;
    return static_cast<size_t>(v.len) == t.size_bytes && PyBuffer_IsContiguous(&v, 'C');
  }

  struct BusyGuard {
    std::atomic<bool>* b;
    ~BusyGuard() { b->store(false); }
  };

  nb::object run(nb::handle inputs, nb::handle out, bool copy) {
    if (!ctx_) raise_closed("run: the context is closed");
    if (!PyDict_Check(inputs.ptr())) {
      PyErr_SetString(PyExc_TypeError, "run: inputs must be a dict {name: numpy array}");
      throw nb::python_error();
    }
    const bool have_out = !out.is_none();
    if (have_out && !PyDict_Check(out.ptr())) {
      PyErr_SetString(PyExc_TypeError, "run: out must be a dict {output name: numpy array}");
      throw nb::python_error();
    }
    if (busy_.exchange(true))
      raise_status(EDGERT_ERROR_INVALID_ARGUMENT,
                   "run: this context is already running in another thread (one context per thread)");
    BusyGuard busy{&busy_};
    const BundleState& s = *state_;
    const size_t nin = s.inputs.size(), nout = s.outputs.size();
    ViewGuard guard{&views_};

    check_keys(inputs.ptr(), s.inputs, "input");
    for (size_t i = 0; i < nin; ++i) {
      const TensorDesc& t = s.inputs[i];
      PyObject* a = PyDict_GetItemWithError(inputs.ptr(), t.pyname.ptr());
      if (!a) {
        if (PyErr_Occurred()) throw nb::python_error();
        raise_status(EDGERT_ERROR_NOT_BOUND, "input '" + t.name + "' is missing (expected " + describe(t) + ")");
      }
      acquire(a, t, false, copy, &views_[i]);
      ++guard.count;
    }
    nb::object result;
    if (have_out) {
      check_keys(out.ptr(), s.outputs, "output");
      result = nb::borrow(out);
    } else {
      result = nb::dict();
    }
    for (size_t i = 0; i < nout; ++i) {
      const TensorDesc& t = s.outputs[i];
      PyObject* a;
      nb::object fresh;
      if (have_out) {
        a = PyDict_GetItemWithError(out.ptr(), t.pyname.ptr());
        if (!a) {
          if (PyErr_Occurred()) throw nb::python_error();
          raise_status(EDGERT_ERROR_NOT_BOUND, "out: output '" + t.name + "' is missing (expected " + describe(t) + ")");
        }
      } else {
        fresh = g_np_empty(t.pyshape, g_dtype_objects[t.dtype]);
        PyDict_SetItem(result.ptr(), t.pyname.ptr(), fresh.ptr());
        a = fresh.ptr();
      }
      acquire(a, t, true, false, &views_[nin + i]);
      ++guard.count;
    }
    // Bind what changed since the last run (a loop over the same arrays binds once).
    for (size_t i = 0; i < nin + nout; ++i) {
      void* p = views_[i].buf;
      if (p == bound_[i]) continue;
      const size_t size = static_cast<size_t>(views_[i].len);
      const edgert_status st = i < nin ? edgert_bind_input(ctx_, static_cast<int32_t>(i), p, size)
                                       : edgert_bind_output(ctx_, static_cast<int32_t>(i - nin), p, size);
      if (st != EDGERT_OK) {
        bound_[i] = nullptr;
        raise_status(st, std::string("bind ") + (i < nin ? "input '" + s.inputs[i].name : "output '" + s.outputs[i - nin].name) +
                             "': " + edgert_last_error());
      }
      bound_[i] = p;
    }
    edgert_status st;
    {
      nb::gil_scoped_release release;
      st = edgert_run(ctx_);
    }
    // bound_ keeps the addresses: the runtime reads them only inside edgert_run, and a later run
    // rebinds any slot whose array (held by its view for that run) lies elsewhere.
    if (st != EDGERT_OK) raise_status(st, std::string("run: ") + edgert_last_error());
    return result;
  }

  // Keys of `d` that name no tensor: refused, naming the first.
  static void check_keys(PyObject* d, const std::vector<TensorDesc>& ts, const char* what) {
    if (static_cast<size_t>(PyDict_Size(d)) == ts.size()) {
      // Every tensor looked up by name below; same count and all found means no unknown key.
      bool all = true;
      for (const TensorDesc& t : ts) {
        int r = PyDict_Contains(d, t.pyname.ptr());
        if (r < 0) throw nb::python_error();
        if (!r) { all = false; break; }
      }
      if (all) return;
    }
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(d, &pos, &key, &value)) {
      bool known = false;
      for (const TensorDesc& t : ts) {
        int r = PyObject_RichCompareBool(key, t.pyname.ptr(), Py_EQ);
        if (r < 0) throw nb::python_error();
        if (r) { known = true; break; }
      }
      if (!known) {
        std::string names;
        for (const TensorDesc& t : ts) names += (names.empty() ? "" : ", ") + t.name;
        nb::str k = nb::str(nb::handle(key));
        raise_status(EDGERT_ERROR_INVALID_ARGUMENT, std::string("unknown ") + what + " '" + k.c_str() +
                                                        "' (the bundle's " + what + "s: " + names + ")");
      }
    }
  }

  void set_profiling(bool on) {
    if (!ctx_) raise_closed("profiling: the context is closed");
    check(edgert_context_set_profiling(ctx_, on ? 1 : 0), "set_profiling");
    profiling_ = on;
  }
  bool profiling() const { return profiling_; }
  // Per-command times of the last run (profiling on): [(ns), ...] in queue order.
  nb::list command_times() const { return ns_list(edgert_context_command_times, "profile"); }
  nb::list timestamps() const { return ns_list(edgert_context_timestamps, "timestamps"); }
  // The runtime's nanosecond arrays (command times, timestamps) as a list of ints.
  nb::list ns_list(edgert_status (*get)(const edgert_context*, const uint64_t**, int32_t*), const char* what) const {
    if (!ctx_) raise_closed((std::string(what) + ": the context is closed").c_str());
    const uint64_t* ns = nullptr;
    int32_t n = 0;
    check(get(ctx_, &ns, &n), what);
    nb::list l;
    for (int32_t i = 0; i < n; ++i) l.append(ns[i]);
    return l;
  }
  nb::dict stats() const {
    if (!ctx_) raise_closed("stats: the context is closed");
    edgert_context_stats s;
    check(edgert_context_get_stats(ctx_, &s), "stats");
    nb::dict d;
    d["port"] = s.port ? s.port : "";
    d["device"] = s.device ? s.device : "";
    d["programs_built"] = s.programs_built;
    d["programs_loaded"] = s.programs_loaded;
    d["buffer_bytes"] = s.buffer_bytes;
    d["image_bytes"] = s.image_bytes;
    d["arena_bytes"] = edgert_bundle_arena_size(state_->bundle);
    return d;
  }

 private:
  void destroy() {
    if (ctx_) {
      edgert_context_destroy(ctx_);
      ctx_ = nullptr;
    }
    state_.reset();
  }
  std::shared_ptr<BundleState> state_;
  edgert_context* ctx_ = nullptr;
  std::vector<Py_buffer> views_;
  std::vector<void*> bound_;
  std::atomic<bool> busy_{false};
  bool profiling_ = false;
};

}  // namespace

NB_MODULE(_edgert, m) {
  m.doc() = "edgert's C API (internal; use the edgert package)";
#ifdef EDGE_VERSION
  m.attr("__version__") = EDGE_VERSION;
#endif
  m.def("_set_error_classes", [](nb::list classes, nb::object closed) {
    for (size_t i = 0; i < 8 && i < classes.size(); ++i) {
      nb::object c = classes[i];
      Py_XINCREF(c.ptr());
      g_status_error[i] = c.ptr();
    }
    Py_XINCREF(closed.ptr());
    g_closed_error = closed.ptr();
  });
  m.def("status_name", [](int s) { return std::string(edgert_status_name(static_cast<edgert_status>(s))); });
  m.def("dtype_name", [](int d) { return std::string(edgert_dtype_name(static_cast<edgert_dtype>(d))); });
  m.def("runtime_ports", []() { return std::string(edgert_runtime_ports()); });
  m.def("signatures_supported", []() { return edgert_signatures_supported() != 0; });
  m.def("prepare", [](const std::string& path, const std::string& out, int32_t device, bool allow_source_build) {
    edgert_context_options o = {};
    o.device_index = device;
    o.allow_source_build = allow_source_build ? 1 : 0;
    edgert_status st;
    {
      nb::gil_scoped_release release;
      st = edgert_prepare(path.c_str(), out.c_str(), &o);
    }
    if (st != EDGERT_OK) raise_status(st, std::string(edgert_last_error()));
  });

  nb::class_<Bundle>(m, "_Bundle")
      .def(nb::init<nb::object, nb::bytes, bool>(), nb::arg("source"), nb::arg("trusted_keys"), nb::arg("map_in_place"))
      .def("close", &Bundle::close)
      .def_prop_ro("closed", &Bundle::closed)
      .def("_tensors", &Bundle::tensors)
      .def_prop_ro("arena_size", &Bundle::arena_size)
      .def_prop_ro("port", &Bundle::port)
      .def_prop_ro("_target", &Bundle::target)
      .def_prop_ro("signer", &Bundle::signer)
      .def_prop_ro("signature_verified", &Bundle::signature_verified)
      .def("_reference", &Bundle::reference)
      .def("_commands", &Bundle::commands);

  nb::class_<Context>(m, "_Context")
      .def(nb::init<const Bundle&, int32_t, bool, int32_t>(), nb::arg("bundle"), nb::arg("threads"),
           nb::arg("allow_source_build"), nb::arg("device"))
      .def("run", &Context::run, nb::arg("inputs"), nb::arg("out") = nb::none(), nb::arg("copy") = false,
           "run(inputs, out=None, copy=False) -> dict: see edgert.Context.run")
      .def("close", &Context::close)
      .def_prop_ro("closed", &Context::closed)
      .def_prop_rw("profiling", &Context::profiling, &Context::set_profiling)
      .def("_command_times", &Context::command_times)
      .def("timestamps", &Context::timestamps, "the bundle's Timestamp commands of the last run, ns")
      .def("stats", &Context::stats, "what the context's port did and holds (edgert_context_stats), as a dict");
}
