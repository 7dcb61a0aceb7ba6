// context.cc — a context turns a verified bundle into something that can run with no
// decisions left: the arena, executable code, and the command queue resolved into a flat
// array of ops whose argument pointers are final, except the input/output entries that
// edgert_bind_* patches. Everything is allocated in edgert_context_create; edgert_run
// only reads the ops and calls kernels.
#include <cinttypes>
#include <cstdlib>
#include <cstring>
#include <new>

#include "cpu_port.h"
#include "worker_pool.h"
#include "internal.h"

namespace {

using namespace edge::bundle;

enum class OpKind : uint8_t { Launch, Copy, Timestamp };

struct Op {
  OpKind kind = OpKind::Launch;
  edgert::cpu::KernelFn fn = nullptr;  // Launch
  void** args = nullptr;               // Launch: the kernel's args; Copy: {src, dst}
  uint64_t parallel_extent = 1;        // Launch: what a worker pool will split by core_id
  size_t copy_bytes = 0;               // Copy
  uint32_t timestamp = 0;              // Timestamp: slot in edgert_context::timestamps
};

// arg_table[slot] receives the pointer bound to input/output `io`.
struct Patch {
  size_t slot;
  uint32_t io;
};

template <typename T>
T* alloc_array(size_t n) {
  // calloc: zeroed, nothrow, and one free() for every array of the context.
  return static_cast<T*>(std::calloc(n ? n : 1, sizeof(T)));
}

template <typename T>
uint32_t count(const flatbuffers::Vector<T>* v) {
  return v ? v->size() : 0;
}

}  // namespace

// Chunks per thread a parallel launch is cut into (see WorkerPool).
constexpr uint64_t kChunksPerThread = 4;

struct edgert_context {
  const edgert_bundle* bundle = nullptr;
  int32_t num_threads = 1;
  edgert::cpu::WorkerPool* pool = nullptr;  // only when num_threads > 1
  void* arena = nullptr;
  edgert::cpu::CodeMapping* code = nullptr;  // one per section; empty for non-Code sections
  uint32_t num_sections = 0;
  Op* ops = nullptr;
  uint32_t num_ops = 0;
  void** arg_table = nullptr;
  Patch* input_patches = nullptr;
  size_t num_input_patches = 0;
  Patch* output_patches = nullptr;
  size_t num_output_patches = 0;
  bool* input_bound = nullptr;
  bool* output_bound = nullptr;
  uint32_t num_bound = 0;  // inputs + outputs bound so far: a run checks only this
  uint64_t* timestamps = nullptr;
  uint32_t num_timestamps = 0;
  bool profiling = false;
  uint64_t* command_ns = nullptr;  // per command of the last profiled run
};

namespace {

void destroy(edgert_context* c) {
  if (c->pool) {
    c->pool->~WorkerPool();
    std::free(c->pool);
  }
  for (uint32_t i = 0; c->code && i < c->num_sections; ++i) edgert::cpu::unmap_code(&c->code[i]);
  std::free(c->code);
  std::free(c->arena);
  std::free(c->ops);
  std::free(c->arg_table);
  std::free(c->input_patches);
  std::free(c->output_patches);
  std::free(c->input_bound);
  std::free(c->output_bound);
  std::free(c->timestamps);
  std::free(c->command_ns);
  c->~edgert_context();
  std::free(c);
}

edgert_status out_of_memory(const char* what) {
  return edgert::set_error(EDGERT_ERROR_OUT_OF_MEMORY, "out of memory allocating %s", what);
}

edgert_status map_code_sections(edgert_context* c) {
  const Bundle* b = c->bundle->root;
  c->num_sections = count(b->sections());
  c->code = alloc_array<edgert::cpu::CodeMapping>(c->num_sections);
  if (!c->code) return out_of_memory("code mappings");
  for (uint32_t i = 0; i < c->num_sections; ++i) {
    const Section* s = b->sections()->Get(i);
    if (s->kind() != SectionKind::Code) continue;
    int err = edgert::cpu::map_code(c->bundle->data + s->offset(), static_cast<size_t>(s->size()),
                                    &c->code[i]);
    if (err != 0)
      return edgert::set_error(EDGERT_ERROR_OUT_OF_MEMORY,
                               "cannot map code section %u (%" PRIu64 " bytes) executable: %s", i,
                               s->size(), std::strerror(err));
  }
  return EDGERT_OK;
}

// Pointer a command argument resolves to; null for Input/Output (patched at bind).
void* resolve_buffer(const edgert_context* c, const Buffer* buf) {
  switch (buf->kind()) {
    case BufferKind::Arena: return static_cast<uint8_t*>(c->arena) + buf->offset();
    case BufferKind::Weight: {
      const Section* s = c->bundle->root->sections()->Get(buf->section());
      // The mapping is read-only; the verifier made sure nothing writes a Weight buffer.
      return const_cast<uint8_t*>(c->bundle->data + s->offset() + buf->offset());
    }
    default: return nullptr;
  }
}

edgert_status build_queue(edgert_context* c) {
  const Bundle* b = c->bundle->root;
  c->num_ops = count(b->commands());
  size_t num_args = 0, num_in = 0, num_out = 0;
  for (uint32_t i = 0; i < c->num_ops; ++i) {
    const Command* cmd = b->commands()->Get(i);
    if (cmd->kind() == CommandKind::Timestamp) {
      ++c->num_timestamps;
      continue;
    }
    for (uint32_t a = 0; a < count(cmd->args()); ++a) {
      BufferKind k = b->buffers()->Get(cmd->args()->Get(a))->kind();
      num_in += k == BufferKind::Input;
      num_out += k == BufferKind::Output;
    }
    num_args += count(cmd->args());
  }
  c->ops = alloc_array<Op>(c->num_ops);
  c->arg_table = alloc_array<void*>(num_args);
  c->input_patches = alloc_array<Patch>(num_in);
  c->output_patches = alloc_array<Patch>(num_out);
  c->timestamps = alloc_array<uint64_t>(c->num_timestamps);
  c->command_ns = alloc_array<uint64_t>(c->num_ops);
  c->input_bound = alloc_array<bool>(count(b->inputs()));
  c->output_bound = alloc_array<bool>(count(b->outputs()));
  if (!c->ops || !c->arg_table || !c->input_patches || !c->output_patches || !c->timestamps || !c->command_ns ||
      !c->input_bound || !c->output_bound)
    return out_of_memory("the command queue");

  size_t next_arg = 0;
  uint32_t next_timestamp = 0;
  for (uint32_t i = 0; i < c->num_ops; ++i) {
    const Command* cmd = b->commands()->Get(i);
    Op& op = c->ops[i];
    switch (cmd->kind()) {
      case CommandKind::Timestamp:
        op.kind = OpKind::Timestamp;
        op.timestamp = next_timestamp++;
        continue;
      case CommandKind::Copy:
        op.kind = OpKind::Copy;
        op.copy_bytes = static_cast<size_t>(b->buffers()->Get(cmd->args()->Get(0))->size());
        break;
      default: {  // Launch (the verifier rejected other kinds)
        const Kernel* k = b->kernels()->Get(cmd->kernel());
        op.kind = OpKind::Launch;
        op.fn = reinterpret_cast<edgert::cpu::KernelFn>(
            static_cast<uint8_t*>(c->code[k->section()].base) + k->entry());
        op.parallel_extent = k->parallel_extent();
        break;
      }
    }
    op.args = c->arg_table + next_arg;
    for (uint32_t a = 0; a < count(cmd->args()); ++a, ++next_arg) {
      const Buffer* buf = b->buffers()->Get(cmd->args()->Get(a));
      c->arg_table[next_arg] = resolve_buffer(c, buf);
      if (buf->kind() == BufferKind::Input)
        c->input_patches[c->num_input_patches++] = Patch{next_arg, buf->io_index()};
      else if (buf->kind() == BufferKind::Output)
        c->output_patches[c->num_output_patches++] = Patch{next_arg, buf->io_index()};
    }
  }
  return EDGERT_OK;
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
  const Patch* patches = input ? c->input_patches : c->output_patches;
  const size_t num_patches = input ? c->num_input_patches : c->num_output_patches;
  for (size_t i = 0; i < num_patches; ++i)
    if (patches[i].io == static_cast<uint32_t>(index))
      c->arg_table[patches[i].slot] = const_cast<void*>(data);  // inputs are only read
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
  const int32_t threads = options ? options->num_threads : 0;
  if (threads < 0)
    return edgert::set_error(EDGERT_ERROR_INVALID_ARGUMENT, "num_threads %d is negative", threads);

  // calloc + placement new rather than operator new: the runtime needs only libc.
  void* mem = std::calloc(1, sizeof(edgert_context));
  if (!mem) return out_of_memory("the context");
  edgert_context* c = new (mem) edgert_context;
  c->bundle = bundle;
  c->num_threads = threads == 0 ? 1 : threads;

  const Bundle* b = bundle->root;
  const size_t alignment = b->arena_alignment();
  const uint64_t arena_size = b->arena_size();
  edgert_status st = EDGERT_OK;
  // posix_memalign wants a size; an empty arena still gets one aligned block.
  if (arena_size > SIZE_MAX - alignment ||
      posix_memalign(&c->arena, alignment,
                     arena_size ? static_cast<size_t>(arena_size) : alignment) != 0) {
    c->arena = nullptr;
    st = edgert::set_error(EDGERT_ERROR_OUT_OF_MEMORY,
                           "cannot allocate the arena (%" PRIu64 " bytes)", arena_size);
  } else {
    // Zeroed once, so even a kernel that reads before writing sees the same bytes every run.
    std::memset(c->arena, 0, arena_size ? static_cast<size_t>(arena_size) : alignment);
  }
  if (st == EDGERT_OK && c->num_threads > 1) {
    void* pool_mem = std::calloc(1, sizeof(edgert::cpu::WorkerPool));
    if (!pool_mem) {
      st = out_of_memory("the worker pool");
    } else {
      c->pool = new (pool_mem) edgert::cpu::WorkerPool;
      if (int err = c->pool->start(c->num_threads))
        st = edgert::set_error(EDGERT_ERROR_OUT_OF_MEMORY, "cannot start %d worker threads: %s",
                               c->num_threads - 1, std::strerror(err));
    }
  }
  if (st == EDGERT_OK) st = map_code_sections(c);
  if (st == EDGERT_OK) st = build_queue(c);
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
  // In-order replay; a launch split across cores gives each core its own outputs, so the
  // same inputs give bit-identical outputs every run, whatever the thread count.
  uint64_t t_prev = context->profiling ? edgert::cpu::now_ns() : 0;
  for (uint32_t i = 0; i < context->num_ops; ++i) {
    if (context->profiling && i > 0) {
      uint64_t t = edgert::cpu::now_ns();
      context->command_ns[i - 1] = t - t_prev;
      t_prev = t;
    }
    const Op& op = context->ops[i];
    switch (op.kind) {
      case OpKind::Launch: {
        if (!context->pool || op.parallel_extent < 2) {
          op.fn(op.args, 0, 1);
          break;
        }
        // A few chunks per thread: whoever is free takes the next one, so a thread the
        // OS preempted holds up a small part of the launch, not its whole share.
        const uint64_t want = static_cast<uint64_t>(context->num_threads) * kChunksPerThread;
        const uint64_t chunks = op.parallel_extent < want ? op.parallel_extent : want;
        context->pool->run(op.fn, op.args, static_cast<int32_t>(chunks));
        break;
      }
      case OpKind::Copy:
        // memmove: the memory planner may let source and destination overlap.
        if (op.copy_bytes) std::memmove(op.args[1], op.args[0], op.copy_bytes);
        break;
      case OpKind::Timestamp: context->timestamps[op.timestamp] = edgert::cpu::now_ns(); break;
    }
  }
  if (context->profiling && context->num_ops > 0)
    context->command_ns[context->num_ops - 1] = edgert::cpu::now_ns() - t_prev;
  return EDGERT_OK;
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
  *out_count = static_cast<int32_t>(context->num_ops);
  return EDGERT_OK;
}

edgert_status edgert_context_timestamps(const edgert_context* context, const uint64_t** out_ns,
                                        int32_t* out_count) {
  if (!context || !out_ns || !out_count)
    return edgert::set_error(EDGERT_ERROR_INVALID_ARGUMENT,
                             "edgert_context_timestamps: null argument");
  *out_ns = context->timestamps;
  *out_count = static_cast<int32_t>(context->num_timestamps);
  return EDGERT_OK;
}

}  // extern "C"
