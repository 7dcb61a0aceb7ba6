// cpu_context.cc — the cpu port's side of a context: the arena, executable code, and the
// command queue resolved into a flat array of ops whose argument pointers are final, except
// the input/output entries that bind() patches. Everything is allocated in create(); run()
// only reads the ops and calls kernels (edge::abi::CpuKernelFn).
#include <cerrno>
#include <cinttypes>
#include <cstdlib>
#include <cstring>
#include <new>
#ifdef EDGERT_CPU_GUARD_PAGES
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "cpu_port.h"
#include "internal.h"
#include "kernel_abi.h"
#include "port.h"
#include "thread_pool.h"

// The same replay serves the Hexagon DSP: ports/hexagon/port.cmake compiles this file under
// the names below and registers it as port "hexagon"; its build links its own worker threads
// (thread_pool.h: ports/hexagon/fixed_pool.cc, each thread one fixed share of a launch).
#ifndef EDGERT_CPU_PORT_NAME
#define EDGERT_CPU_PORT_NAME "cpu"
#define EDGERT_CPU_PORT_SYMBOL port_cpu
#define EDGERT_CPU_DEVICE_NAME "host CPU"
#endif

namespace {

using namespace edge::bundle;

enum class OpKind : uint8_t { Launch, Copy, Timestamp };

struct Op {
  OpKind kind = OpKind::Launch;
  edge::abi::CpuKernelFn fn = nullptr;  // Launch
  void** args = nullptr;                // Launch: the kernel's args; Copy: {src, dst}
  uint64_t parallel_extent = 1;         // Launch: what a worker pool will split by core_id
  size_t copy_bytes = 0;                // Copy
  uint32_t timestamp = 0;               // Timestamp: slot in CpuContext::timestamps
};

// arg_table[slot] receives the pointer bound to input/output `io`.
struct Patch {
  size_t slot;
  uint32_t io;
};

#ifdef EDGERT_CPU_GUARD_PAGES
struct GuardedBuffer {  // see guard_buffers
  void* base;    // the mapping: guard page, data pages, guard page
  size_t length;
  void* data;    // the buffer, ending at the second guard page (rounded down to alignment)
  void* bound;   // an Input's or Output's memory as bound: copied in / out around a run
  size_t size;
};
#endif

template <typename T>
uint32_t count(const flatbuffers::Vector<T>* v) {
  return v ? v->size() : 0;
}

}  // namespace

namespace edgert {

struct PortContext {
  const edgert_bundle* bundle = nullptr;
  int32_t num_threads = 1;
  cpu::ThreadPool* pool = nullptr;  // only when num_threads > 1
  void* arena = nullptr;
  cpu::CodeMapping* code = nullptr;  // one per section; empty for non-Code sections
  uint32_t num_sections = 0;
  Op* ops = nullptr;
  uint32_t num_ops = 0;
  void** arg_table = nullptr;
  Patch* input_patches = nullptr;
  size_t num_input_patches = 0;
  Patch* output_patches = nullptr;
  size_t num_output_patches = 0;
  uint64_t* timestamps = nullptr;
  uint32_t num_timestamps = 0;
#ifdef EDGERT_CPU_GUARD_PAGES
  GuardedBuffer* guarded = nullptr;  // by buffer id (guard_buffers)
#endif
};

}  // namespace edgert

namespace edgert::cpu {
namespace {

template <typename T>
T* alloc_array(size_t n) {
  // calloc: zeroed, nothrow, and one free() for every array of the context.
  return static_cast<T*>(std::calloc(n ? n : 1, sizeof(T)));
}

edgert_status out_of_memory(const char* what) {
  return set_error(EDGERT_ERROR_OUT_OF_MEMORY, "out of memory allocating %s", what);
}

void destroy(PortContext* c) {
  if (!c) return;
  thread_pool_destroy(c->pool);
  for (uint32_t i = 0; c->code && i < c->num_sections; ++i) unmap_code(&c->code[i]);
  std::free(c->code);
  std::free(c->arena);
  std::free(c->ops);
  std::free(c->arg_table);
  std::free(c->input_patches);
  std::free(c->output_patches);
  std::free(c->timestamps);
#ifdef EDGERT_CPU_GUARD_PAGES
  for (uint32_t i = 0; c->guarded && i < count(c->bundle->root->buffers()); ++i)
    if (c->guarded[i].base) munmap(c->guarded[i].base, c->guarded[i].length);
  std::free(c->guarded);
#endif
  c->~PortContext();
  std::free(c);
}

edgert_status map_code_sections(PortContext* c) {
  const Bundle* b = c->bundle->root;
  c->num_sections = count(b->sections());
  c->code = alloc_array<CodeMapping>(c->num_sections);
  if (!c->code) return out_of_memory("code mappings");
  for (uint32_t i = 0; i < c->num_sections; ++i) {
    const Section* s = b->sections()->Get(i);
    if (s->kind() != SectionKind::Code) continue;
    int err = map_code(c->bundle->data + s->offset(), static_cast<size_t>(s->size()), &c->code[i]);
    if (err != 0)
      return set_error(EDGERT_ERROR_OUT_OF_MEMORY,
                       "cannot map code section %u (%" PRIu64 " bytes) executable: %s", i,
                       s->size(), std::strerror(err));
  }
  return EDGERT_OK;
}

// Pointer a command argument resolves to; null for Input/Output (patched at bind).
void* resolve_buffer(const PortContext* c, const Buffer* buf) {
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

edgert_status build_queue(PortContext* c) {
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
  if (!c->ops || !c->arg_table || !c->input_patches || !c->output_patches || !c->timestamps)
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
        // The entry point: the start of a function in the section's code directory (the
        // verifier held the function table to it at open).
        const uint64_t entry = b->sections()->Get(k->section())->functions()->Get(k->function())->offset();
        op.fn = reinterpret_cast<edge::abi::CpuKernelFn>(static_cast<uint8_t*>(c->code[k->section()].base) + entry);
        op.parallel_extent = k->parallel_extent();
        break;
      }
    }
    op.args = c->arg_table + next_arg;
    for (uint32_t a = 0; a < count(cmd->args()); ++a, ++next_arg) {
      const Buffer* buf = b->buffers()->Get(cmd->args()->Get(a));
      c->arg_table[next_arg] = resolve_buffer(c, buf);
#ifdef EDGERT_CPU_GUARD_PAGES
      if (c->guarded[cmd->args()->Get(a)].data) c->arg_table[next_arg] = c->guarded[cmd->args()->Get(a)].data;
#endif
      if (buf->kind() == BufferKind::Input)
        c->input_patches[c->num_input_patches++] = Patch{next_arg, buf->io_index()};
      else if (buf->kind() == BufferKind::Output)
        c->output_patches[c->num_output_patches++] = Patch{next_arg, buf->io_index()};
    }
  }
  return EDGERT_OK;
}

// Test builds (-DEDGERT_CPU_GUARD_PAGES): every buffer in its own pages, ending where an
// inaccessible page begins (and one before it), so a kernel that touches memory past the
// buffers it was given faults instead of landing unseen in a neighbour in the arena, the
// mapped file or the caller's memory (whose inputs may end at a page: a camera frame).
// Kernels are machine code that no sanitizer instruments: pages are what they cannot pass.
// Slack up to the arena alignment (64 bytes) before the guard stays unchecked. Weights are
// copied and made read-only; inputs are copied in before each run and outputs out after it.
// Never in a product build.
// The Hexagon guard build (scripts/build_hexagon.sh with EDGE_HEXAGON_GUARD=1) adds:
//   EDGERT_CPU_GUARD_MIN_PAGE   qemu-hexagon maps and protects 64 KB pages (the freestanding
//                               sysconf says 4 KB)
//   EDGERT_CPU_GUARD_IO_AT_END  inputs and outputs end exactly at the guard, as a caller's
//                               memory may (bind asks only element alignment): no slack there
#ifdef EDGERT_CPU_GUARD_PAGES
#ifndef EDGERT_CPU_GUARD_MIN_PAGE
#define EDGERT_CPU_GUARD_MIN_PAGE 0
#endif
edgert_status guard_buffers(PortContext* c) {
  const Bundle* b = c->bundle->root;
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  if (page < EDGERT_CPU_GUARD_MIN_PAGE) page = EDGERT_CPU_GUARD_MIN_PAGE;
  GuardedBuffer* g = alloc_array<GuardedBuffer>(count(b->buffers()));
  c->guarded = g;
  if (!g) return out_of_memory("guarded buffers");
  for (uint32_t i = 0; i < count(b->buffers()); ++i) {
    const Buffer* buf = b->buffers()->Get(i);
    const size_t size = static_cast<size_t>(buf->size());
    g[i].size = size;
    const size_t data_pages = (size + b->arena_alignment() + page - 1) / page * page;
    void* base = mmap(nullptr, data_pages + 2 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) return out_of_memory("guarded buffers");
    g[i].base = base;
    g[i].length = data_pages + 2 * page;
    uint8_t* pages = static_cast<uint8_t*>(base) + page;
    const uintptr_t end = reinterpret_cast<uintptr_t>(pages + data_pages);
    g[i].data = reinterpret_cast<void*>((end - size) / b->arena_alignment() * b->arena_alignment());
#ifdef EDGERT_CPU_GUARD_IO_AT_END
    if (buf->kind() == BufferKind::Input || buf->kind() == BufferKind::Output)
      g[i].data = reinterpret_cast<void*>(end - size);
#endif
    if (mprotect(pages, data_pages, PROT_READ | PROT_WRITE) != 0) return out_of_memory("guarded buffers");
    if (buf->kind() == BufferKind::Weight) {
      std::memcpy(g[i].data, resolve_buffer(c, buf), size);
      mprotect(pages, data_pages, PROT_READ);
    }
  }
  return EDGERT_OK;
}
#endif

edgert_status create(const edgert_bundle* bundle, const edgert_context_options* options,
                     PortContext** out) {
  *out = nullptr;
  // calloc + placement new rather than operator new: the runtime needs only libc.
  void* mem = std::calloc(1, sizeof(PortContext));
  if (!mem) return out_of_memory("the context");
  PortContext* c = new (mem) PortContext;
  c->bundle = bundle;
  c->num_threads = options->num_threads == 0 ? 1 : options->num_threads;

  const Bundle* b = bundle->root;
  const size_t alignment = b->arena_alignment();
  const uint64_t arena_size = b->arena_size();
  edgert_status st = EDGERT_OK;
  // posix_memalign wants a size; an empty arena still gets one aligned block.
  if (arena_size > SIZE_MAX - alignment ||
      posix_memalign(&c->arena, alignment,
                     arena_size ? static_cast<size_t>(arena_size) : alignment) != 0) {
    c->arena = nullptr;
    st = set_error(EDGERT_ERROR_OUT_OF_MEMORY, "cannot allocate the arena (%" PRIu64 " bytes)",
                   arena_size);
  } else {
    // Zeroed once, so even a kernel that reads before writing sees the same bytes every run.
    std::memset(c->arena, 0, arena_size ? static_cast<size_t>(arena_size) : alignment);
  }
  if (st == EDGERT_OK && c->num_threads > thread_pool_max_threads()) {
    st = set_error(EDGERT_ERROR_INVALID_ARGUMENT, "the %s port runs on at most %d threads (asked for %d)",
                   EDGERT_CPU_PORT_NAME, thread_pool_max_threads(), c->num_threads);
  } else if (st == EDGERT_OK && c->num_threads > 1) {
    if (int err = thread_pool_create(c->num_threads, &c->pool))
      st = set_error(err == ENOSYS ? EDGERT_ERROR_UNSUPPORTED : EDGERT_ERROR_OUT_OF_MEMORY,
                     "cannot start %d worker threads: %s", c->num_threads - 1, std::strerror(err));
  }
  if (st == EDGERT_OK) st = map_code_sections(c);
#ifdef EDGERT_CPU_GUARD_PAGES
  if (st == EDGERT_OK) st = guard_buffers(c);
#endif
  if (st == EDGERT_OK) st = build_queue(c);
  if (st != EDGERT_OK) {
    destroy(c);
    return st;
  }
  *out = c;
  return EDGERT_OK;
}

edgert_status bind(PortContext* c, bool input, uint32_t index, void* data, size_t) {
#ifdef EDGERT_CPU_GUARD_PAGES
  const BufferKind kind = input ? BufferKind::Input : BufferKind::Output;
  for (uint32_t i = 0; i < count(c->bundle->root->buffers()); ++i) {
    const Buffer* buf = c->bundle->root->buffers()->Get(i);
    if (buf->kind() == kind && buf->io_index() == index) c->guarded[i].bound = data;
  }
  return EDGERT_OK;  // the kernels keep the guarded copies (guard_buffers)
#endif
  const Patch* patches = input ? c->input_patches : c->output_patches;
  const size_t num_patches = input ? c->num_input_patches : c->num_output_patches;
  for (size_t i = 0; i < num_patches; ++i)
    if (patches[i].io == index) c->arg_table[patches[i].slot] = data;
  return EDGERT_OK;
}

edgert_status run(PortContext* c, uint64_t* command_ns) {
  // In-order replay; a launch split across cores gives each core its own outputs, so the
  // same inputs give bit-identical outputs every run, whatever the thread count.
  uint64_t t_prev = command_ns ? now_ns() : 0;
#ifdef EDGERT_CPU_GUARD_PAGES
  for (uint32_t i = 0; i < count(c->bundle->root->buffers()); ++i)
    if (c->bundle->root->buffers()->Get(i)->kind() == BufferKind::Input && c->guarded[i].size)
      std::memcpy(c->guarded[i].data, c->guarded[i].bound, c->guarded[i].size);
#endif
  for (uint32_t i = 0; i < c->num_ops; ++i) {
    if (command_ns && i > 0) {
      uint64_t t = now_ns();
      command_ns[i - 1] = t - t_prev;
      t_prev = t;
    }
    const Op& op = c->ops[i];
    switch (op.kind) {
      case OpKind::Launch: thread_pool_launch(c->pool, op.fn, op.args, op.parallel_extent); break;
      case OpKind::Copy:
        // memmove: the memory planner may let source and destination overlap.
        if (op.copy_bytes) std::memmove(op.args[1], op.args[0], op.copy_bytes);
        break;
      case OpKind::Timestamp: c->timestamps[op.timestamp] = now_ns(); break;
    }
  }
  if (command_ns && c->num_ops > 0) command_ns[c->num_ops - 1] = now_ns() - t_prev;
#ifdef EDGERT_CPU_GUARD_PAGES
  for (uint32_t i = 0; i < count(c->bundle->root->buffers()); ++i)
    if (c->bundle->root->buffers()->Get(i)->kind() == BufferKind::Output && c->guarded[i].size)
      std::memcpy(c->guarded[i].bound, c->guarded[i].data, c->guarded[i].size);
#endif
  return EDGERT_OK;
}

void timestamps(const PortContext* c, const uint64_t** ns, int32_t* n) {
  *ns = c->timestamps;
  *n = static_cast<int32_t>(c->num_timestamps);
}

void stats(const PortContext* c, edgert_context_stats* out) {
  out->device = EDGERT_CPU_DEVICE_NAME;
  out->buffer_bytes = c->bundle->root->arena_size();
}

}  // namespace
}  // namespace edgert::cpu

namespace edgert {
// The registry (port_registry.cc, generated from EDGE_PORTS) refers to this by name.
extern const Port EDGERT_CPU_PORT_SYMBOL = {
    EDGERT_CPU_PORT_NAME,       cpu::check_target, cpu::create, cpu::destroy, cpu::bind, cpu::run,
    cpu::timestamps, cpu::stats, nullptr, nullptr,
};
}  // namespace edgert
