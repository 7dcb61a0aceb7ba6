// context.cc — the port-agnostic half of a context: argument checks, which inputs and
// outputs are bound, profiling buffers. Everything device-specific (memory, executables,
// the recorded queue, the replay itself) is the port's, reached through the table in
// ports/port.h that the bundle's Target.port selected at open. Everything is allocated in
// edgert_context_create; edgert_run allocates nothing.
#include <cinttypes>
#include <cstdlib>
#include <cstring>
#include <new>

#include "internal.h"
#include "port.h"

namespace {

using namespace edge::bundle;

template <typename T>
T* alloc_array(size_t n) {
  return static_cast<T*>(std::calloc(n ? n : 1, sizeof(T)));
}

template <typename T>
uint32_t count(const flatbuffers::Vector<T>* v) {
  return v ? v->size() : 0;
}

}  // namespace

struct edgert_context {
  const edgert_bundle* bundle = nullptr;
  const edgert::Port* port = nullptr;
  edgert::PortContext* port_context = nullptr;
  bool* input_bound = nullptr;
  bool* output_bound = nullptr;
  uint32_t num_bound = 0;  // inputs + outputs bound so far: a run checks only this
  bool profiling = false;
  uint64_t* command_ns = nullptr;  // per command of the last profiled run
};

namespace {

void destroy(edgert_context* c) {
  if (c->port_context) c->port->destroy(c->port_context);
  std::free(c->input_bound);
  std::free(c->output_bound);
  std::free(c->command_ns);
  c->~edgert_context();
  std::free(c);
}

edgert_status out_of_memory(const char* what) {
  return edgert::set_error(EDGERT_ERROR_OUT_OF_MEMORY, "out of memory allocating %s", what);
}

edgert_status bind(edgert_context* c, int32_t index, const void* data, size_t size, bool input) {
  const char* what = input ? "input" : "output";
  if (!c) return edgert::set_error(EDGERT_ERROR_INVALID_ARGUMENT, "bind %s: null context", what);
  const Bundle* b = c->bundle->root;
  const auto* tensors = input ? b->inputs() : b->outputs();
  if (index < 0 || static_cast<uint32_t>(index) >= count(tensors))
    return edgert::set_error(EDGERT_ERROR_INVALID_ARGUMENT, "%s index %d out of range (%u %ss)",
                             what, index, count(tensors), what);
  const TensorInfo* t = tensors->Get(static_cast<uint32_t>(index));
  const uint64_t expected = b->buffers()->Get(t->buffer())->size();
  if (size != expected)
    return edgert::set_error(EDGERT_ERROR_INVALID_ARGUMENT,
                             "%s %d (%s): bound %zu bytes, expected %" PRIu64, what, index,
                             t->name()->c_str(), size, expected);
  if (!data && size != 0)
    return edgert::set_error(EDGERT_ERROR_INVALID_ARGUMENT, "%s %d (%s): null data", what, index,
                             t->name()->c_str());
  const size_t elem = edgert::dtype_size(static_cast<uint32_t>(t->dtype()));
  if (reinterpret_cast<uintptr_t>(data) % elem != 0)
    return edgert::set_error(EDGERT_ERROR_INVALID_ARGUMENT,
                             "%s %d (%s): data %p is not aligned to the element size %zu", what,
                             index, t->name()->c_str(), data, elem);
  // Inputs are only read; the port keeps the pointer non-const for its argument tables.
  edgert_status st = c->port->bind(c->port_context, input, static_cast<uint32_t>(index),
                                   const_cast<void*>(data), size);
  if (st != EDGERT_OK) return st;
  bool& bound = (input ? c->input_bound : c->output_bound)[index];
  if (!bound) ++c->num_bound;
  bound = true;
  return EDGERT_OK;
}

edgert_status check_bound(const edgert_context* c, bool input) {
  const auto* tensors = input ? c->bundle->root->inputs() : c->bundle->root->outputs();
  const bool* bound = input ? c->input_bound : c->output_bound;
  for (uint32_t i = 0; i < count(tensors); ++i)
    if (!bound[i])
      return edgert::set_error(EDGERT_ERROR_NOT_BOUND, "%s %u (%s) is not bound",
                               input ? "input" : "output", i, tensors->Get(i)->name()->c_str());
  return EDGERT_OK;
}

}  // namespace

extern "C" {

edgert_status edgert_context_create(const edgert_bundle* bundle,
                                    const edgert_context_options* options,
                                    edgert_context** out_context) {
  if (!bundle || !out_context)
    return edgert::set_error(EDGERT_ERROR_INVALID_ARGUMENT, "edgert_context_create: null argument");
  *out_context = nullptr;
  const edgert_context_options defaults{};
  if (!options) options = &defaults;
  if (options->num_threads < 0)
    return edgert::set_error(EDGERT_ERROR_INVALID_ARGUMENT, "num_threads %d is negative",
                             options->num_threads);

  // calloc + placement new rather than operator new: the runtime needs only libc.
  void* mem = std::calloc(1, sizeof(edgert_context));
  if (!mem) return out_of_memory("the context");
  edgert_context* c = new (mem) edgert_context;
  c->bundle = bundle;
  c->port = bundle->port;
  const Bundle* b = bundle->root;
  c->input_bound = alloc_array<bool>(count(b->inputs()));
  c->output_bound = alloc_array<bool>(count(b->outputs()));
  c->command_ns = alloc_array<uint64_t>(count(b->commands()));
  edgert_status st = EDGERT_OK;
  if (!c->input_bound || !c->output_bound || !c->command_ns) st = out_of_memory("the context");
  if (st == EDGERT_OK) st = c->port->create(bundle, options, &c->port_context);
  if (st != EDGERT_OK) {
    destroy(c);
    return st;
  }
  *out_context = c;
  return EDGERT_OK;
}

void edgert_context_destroy(edgert_context* context) {
  if (context) destroy(context);
}

edgert_status edgert_bind_input(edgert_context* context, int32_t index, const void* data,
                                size_t size_bytes) {
  return bind(context, index, data, size_bytes, true);
}

edgert_status edgert_bind_output(edgert_context* context, int32_t index, void* data,
                                 size_t size_bytes) {
  return bind(context, index, data, size_bytes, false);
}

edgert_status edgert_run(edgert_context* context) {
  if (!context) return edgert::set_error(EDGERT_ERROR_INVALID_ARGUMENT, "edgert_run: null context");
  const Bundle* b = context->bundle->root;
  if (context->num_bound != count(b->inputs()) + count(b->outputs())) {
    // Something is unbound: find it for the message.
    edgert_status st = check_bound(context, true);
    if (st == EDGERT_OK) st = check_bound(context, false);
    if (st != EDGERT_OK) return st;
  }
  return context->port->run(context->port_context, context->profiling ? context->command_ns : nullptr);
}

edgert_status edgert_context_set_profiling(edgert_context* context, int32_t enable) {
  if (!context) return edgert::set_error(EDGERT_ERROR_INVALID_ARGUMENT, "edgert_context_set_profiling: null context");
  context->profiling = enable != 0;
  return EDGERT_OK;
}

edgert_status edgert_context_command_times(const edgert_context* context, const uint64_t** out_ns,
                                           int32_t* out_count) {
  if (!context || !out_ns || !out_count)
    return edgert::set_error(EDGERT_ERROR_INVALID_ARGUMENT, "edgert_context_command_times: null argument");
  *out_ns = context->command_ns;
  *out_count = static_cast<int32_t>(count(context->bundle->root->commands()));
  return EDGERT_OK;
}

edgert_status edgert_context_timestamps(const edgert_context* context, const uint64_t** out_ns,
                                        int32_t* out_count) {
  if (!context || !out_ns || !out_count)
    return edgert::set_error(EDGERT_ERROR_INVALID_ARGUMENT,
                             "edgert_context_timestamps: null argument");
  context->port->timestamps(context->port_context, out_ns, out_count);
  return EDGERT_OK;
}

edgert_status edgert_context_get_stats(const edgert_context* context, edgert_context_stats* out_stats) {
  if (!context || !out_stats)
    return edgert::set_error(EDGERT_ERROR_INVALID_ARGUMENT, "edgert_context_get_stats: null argument");
  *out_stats = edgert_context_stats{};
  out_stats->port = context->port->name;
  out_stats->device = "";
  context->port->stats(context->port_context, out_stats);
  return EDGERT_OK;
}

}  // extern "C"
