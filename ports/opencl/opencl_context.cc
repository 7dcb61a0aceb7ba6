// opencl_context.cc — the opencl port's side of a context: one OpenCL context and in-order
// queue on the selected device, the programs (from prepared binaries or built from source),
// device memory for the arena, weights and bound inputs/outputs, and the command queue
// resolved into ops whose kernels have their arguments set once. Everything is created in
// create(); run() only enqueues: input writes, the ops, output reads, then waits.
#include <cinttypes>
#include <cstdlib>
#include <cstring>
#include <new>

#include "internal.h"
#include "kernel_abi.h"
#include "opencl_port.h"

namespace {

using namespace edge::bundle;

enum class OpKind : uint8_t {
  Launch,
  CopyBuffer,         // clEnqueueCopyBuffer
  CopyViaScratch,     // overlapping sub-buffers of the arena: src -> scratch -> dst
  CopyImage,          // image -> image of the same shape
  CopyImageToBuffer,  // in up to two parts: whole rows, then the rest of a row
  CopyBufferToImage,
  CopyImageToBufferViaScratch,  // part of a texel: the whole image to scratch, then the bytes
  CopyBufferToImageViaScratch,  // the bytes to scratch, then the whole image from it
  Nop,                          // nothing to move (empty, or source and destination are the same memory)
  Timestamp,
};

// A rectangle of texels and the byte offset of the same elements in the linear buffer.
struct ImagePart {
  size_t origin[3];
  size_t region[3];
  size_t offset;
};

constexpr uint32_t kEventsPerOp = 2;  // the most enqueues one command makes

struct Op {
  OpKind kind = OpKind::Nop;
  cl_kernel kernel = nullptr;  // Launch: this command's own kernel object, arguments set
  cl_uint dims = 0;
  size_t global[3] = {1, 1, 1};
  size_t local[3] = {1, 1, 1};
  bool has_local = false;
  cl_mem src = nullptr, dst = nullptr;  // copies
  size_t bytes = 0;
  ImagePart parts[2] = {};
  uint32_t num_parts = 0;
  uint32_t timestamp = 0;    // Timestamp: slot in PortContext::timestamps
  int32_t stamp_op = -1;     // Timestamp: the op whose end it records (-1: none before it)
  bool needs_event = false;  // a Timestamp reads this op's end time
  uint32_t num_events = 0;   // events of the current run
};

// A bound input or output: the caller's memory, and the device buffer it is copied to or from.
struct IoSlot {
  uint32_t buffer = 0;      // index into Bundle.buffers
  void* host = nullptr;     // what bind() gave
  size_t size = 0;          // bytes the caller binds
  cl_mem device = nullptr;  // linear device buffer (for an image: the padded staging copy)
  cl_mem image = nullptr;   // Image2D buffers: the image kernels use
  size_t region[3] = {1, 1, 1};
};

template <typename T>
uint32_t count(const flatbuffers::Vector<T>* v) {
  return v ? v->size() : 0;
}

template <typename T>
T* alloc_array(size_t n) {
  // calloc: zeroed, nothrow, and one free() for every array of the context.
  return static_cast<T*>(std::calloc(n ? n : 1, sizeof(T)));
}

}  // namespace

namespace edgert {

struct PortContext {
  const edgert_bundle* bundle = nullptr;
  opencl::Device device;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  cl_program* programs = nullptr;  // per section; only OpenCLC sections have one
  uint32_t num_sections = 0;
  // Device memory: every object created, released at destroy; mems[i] is what a command
  // argument naming buffer i resolves to (a buffer, a sub-buffer or an image).
  cl_mem* owned = nullptr;
  uint32_t num_owned = 0, max_owned = 0;
  cl_mem* mems = nullptr;
  cl_mem arena = nullptr;    // when arena buffers are sub-buffers of one allocation
  cl_mem empty = nullptr;    // stands in for zero-byte buffers (CL has no empty buffers)
  cl_mem scratch = nullptr;  // the *ViaScratch copies
  IoSlot* inputs = nullptr;
  IoSlot* outputs = nullptr;
  uint32_t num_inputs = 0, num_outputs = 0;
  Op* ops = nullptr;
  uint32_t num_ops = 0;
  cl_event* events = nullptr;  // kEventsPerOp per op; null between runs
  uint64_t* timestamps = nullptr;
  uint32_t num_timestamps = 0;
  int32_t programs_built = 0, programs_loaded = 0;
  uint64_t buffer_bytes = 0, image_bytes = 0;
};

}  // namespace edgert

namespace edgert::opencl {
namespace {

edgert_status out_of_memory(const char* what) {
  return set_error(EDGERT_ERROR_OUT_OF_MEMORY, "out of memory allocating %s", what);
}

edgert_status cl_failed(cl_int err, const char* call, const char* what, uint32_t index, const char* name) {
  return set_error(status_for(err), "%s %u (%s): %s failed: %s (%d)", what, index, name, call,
                   cl_error_name(err), err);
}

const char* kernel_name(const Kernel* k) { return k->name() ? k->name()->c_str() : ""; }

// ---- memory ----

void keep(PortContext* c, cl_mem m) { c->owned[c->num_owned++] = m; }

edgert_status new_buffer(PortContext* c, cl_mem_flags flags, size_t size, void* host, const char* what,
                         uint32_t index, const char* name, cl_mem* out) {
  cl_int err = CL_SUCCESS;
  *out = c->device.cl->clCreateBuffer(c->context, flags, size ? size : 1, host, &err);
  if (err != CL_SUCCESS) return cl_failed(err, "clCreateBuffer", what, index, name);
  keep(c, *out);
  c->buffer_bytes += size;
  return EDGERT_OK;
}

// Zeroed once, so even a kernel that reads before writing sees the same bytes every run.
edgert_status zero_buffer(PortContext* c, cl_mem m, size_t size, const char* what, uint32_t index,
                          const char* name) {
  if (size == 0) return EDGERT_OK;
  const uint8_t zero = 0;
  cl_int err = c->device.cl->clEnqueueFillBuffer(c->queue, m, &zero, 1, 0, size, 0, nullptr, nullptr);
  return err == CL_SUCCESS ? EDGERT_OK : cl_failed(err, "clEnqueueFillBuffer", what, index, name);
}

bool image_format(DType dtype, cl_image_format* out) {
  out->image_channel_order = CL_RGBA;
  switch (dtype) {
    case DType::F32: out->image_channel_data_type = CL_FLOAT; return true;
    case DType::F16: out->image_channel_data_type = CL_HALF_FLOAT; return true;
    case DType::I32: out->image_channel_data_type = CL_SIGNED_INT32; return true;
    case DType::U32: out->image_channel_data_type = CL_UNSIGNED_INT32; return true;
    case DType::I16: out->image_channel_data_type = CL_SIGNED_INT16; return true;
    case DType::U16: out->image_channel_data_type = CL_UNSIGNED_INT16; return true;
    case DType::I8: out->image_channel_data_type = CL_SIGNED_INT8; return true;
    case DType::U8:
    case DType::Bool: out->image_channel_data_type = CL_UNSIGNED_INT8; return true;
    default: return false;
  }
}

size_t texel_bytes(const Buffer* b) {
  return edge::abi::kImageChannels * dtype_size(static_cast<uint32_t>(b->dtype()));
}

size_t image_size(const Buffer* b) {
  return static_cast<size_t>(b->image_width()) * b->image_height() * texel_bytes(b);
}

struct DeviceLimits {
  size_t base_align = 1;           // sub-buffer origins: CL_DEVICE_MEM_BASE_ADDR_ALIGN in bytes
  bool images = false;             // CL_DEVICE_IMAGE_SUPPORT
  bool image_from_buffer = false;  // cl_khr_image2d_from_buffer
  size_t pitch_align = 0;          // in texels, for images over buffers
  size_t image_base_align = 0;     // in texels, for images over buffers
  size_t image_max_width = 0;      // CL_DEVICE_IMAGE2D_MAX_WIDTH / HEIGHT, in texels
  size_t image_max_height = 0;
};

DeviceLimits device_limits(const Device& d) {
  const Api& cl = *d.cl;
  DeviceLimits limits;
  cl_uint bits = 0;  // CL_DEVICE_MEM_BASE_ADDR_ALIGN is in bits
  cl_int err = cl.clGetDeviceInfo(d.device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof(bits), &bits, nullptr);
  if (err == CL_SUCCESS && bits >= 8) limits.base_align = bits / 8;
  cl_bool images = CL_FALSE;
  cl.clGetDeviceInfo(d.device, CL_DEVICE_IMAGE_SUPPORT, sizeof(images), &images, nullptr);
  limits.images = images == CL_TRUE;
  if (limits.images) {
    cl.clGetDeviceInfo(d.device, CL_DEVICE_IMAGE2D_MAX_WIDTH, sizeof(size_t), &limits.image_max_width, nullptr);
    cl.clGetDeviceInfo(d.device, CL_DEVICE_IMAGE2D_MAX_HEIGHT, sizeof(size_t), &limits.image_max_height, nullptr);
  }
  limits.image_from_buffer = limits.images && has_extension(d, "cl_khr_image2d_from_buffer");
  cl_uint value = 0;
  if (limits.image_from_buffer && cl.clGetDeviceInfo(d.device, CL_DEVICE_IMAGE_PITCH_ALIGNMENT_KHR,
                                                     sizeof(value), &value, nullptr) == CL_SUCCESS)
    limits.pitch_align = value;
  if (limits.image_from_buffer && cl.clGetDeviceInfo(d.device, CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT_KHR,
                                                     sizeof(value), &value, nullptr) == CL_SUCCESS)
    limits.image_base_align = value;
  return limits;
}

// An Image2D buffer's image. Over the arena when the device can alias an image onto a buffer
// (cl_khr_image2d_from_buffer) and the buffer's range satisfies its alignments; else an image
// of its own, which is just as correct: the memory planner shares arena memory only between
// buffers whose lifetimes do not overlap, and no buffer's content outlives its lifetime.
edgert_status new_image(PortContext* c, const DeviceLimits& limits, uint32_t index, const Buffer* b,
                        void* host, cl_mem* out) {
  const Api& cl = *c->device.cl;
  const char* name = buffer_name(b);
  if (!limits.images)
    return set_error(EDGERT_ERROR_UNSUPPORTED,
                     "buffer %u (%s) is an Image2D, but device %s has no image support", index, name,
                     c->device.name);
  if (b->image_width() > limits.image_max_width || b->image_height() > limits.image_max_height)
    return set_error(EDGERT_ERROR_UNSUPPORTED,
                     "buffer %u (%s) is a %ux%u image, but device %s takes images up to %zux%zu: compile "
                     "for a target with smaller images (e.g. opencl-image) or buffers (opencl)",
                     index, name, b->image_width(), b->image_height(), c->device.name, limits.image_max_width,
                     limits.image_max_height);
  cl_image_format format;
  if (!image_format(b->dtype(), &format))
    return set_error(EDGERT_ERROR_UNSUPPORTED, "buffer %u (%s): no RGBA image format holds dtype %s", index,
                     name, EnumNameDType(b->dtype()));
  cl_image_desc desc;
  std::memset(&desc, 0, sizeof(desc));
  desc.image_type = CL_MEM_OBJECT_IMAGE2D;
  desc.image_width = b->image_width();
  desc.image_height = b->image_height();
  const size_t texel = texel_bytes(b);
  const bool aliased = b->kind() == BufferKind::Arena && c->arena && limits.image_from_buffer &&
                       b->offset() % limits.base_align == 0 &&  // the verifier: padded texels fit the arena
                       (limits.pitch_align == 0 || b->image_width() % limits.pitch_align == 0) &&
                       (limits.image_base_align == 0 || b->offset() % (limits.image_base_align * texel) == 0);
  cl_mem_flags flags = b->kind() == BufferKind::Weight ? CL_MEM_READ_ONLY : CL_MEM_READ_WRITE;
  if (aliased) {
    cl_buffer_region region = {static_cast<size_t>(b->offset()), image_size(b)};
    cl_int err = CL_SUCCESS;
    desc.buffer =
        cl.clCreateSubBuffer(c->arena, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    if (err != CL_SUCCESS) return cl_failed(err, "clCreateSubBuffer", "buffer", index, name);
    keep(c, desc.buffer);
    desc.image_row_pitch = desc.image_width * texel;
  } else if (host) {
    flags |= CL_MEM_COPY_HOST_PTR;
  }
  cl_int err = CL_SUCCESS;
  *out = cl.clCreateImage(c->context, flags, &format, &desc, aliased ? nullptr : host, &err);
  if (err != CL_SUCCESS) return cl_failed(err, "clCreateImage", "buffer", index, name);
  keep(c, *out);
  if (aliased || host) return EDGERT_OK;
  c->image_bytes += image_size(b);
  const cl_uint zero[4] = {0, 0, 0, 0};  // the same bits for float, half and integer formats
  const size_t origin[3] = {0, 0, 0}, region[3] = {desc.image_width, desc.image_height, 1};
  err = cl.clEnqueueFillImage(c->queue, *out, zero, origin, region, 0, nullptr, nullptr);
  return err == CL_SUCCESS ? EDGERT_OK : cl_failed(err, "clEnqueueFillImage", "buffer", index, name);
}

// A Weight image: its elements padded with zeros to whole texels and rows, uploaded once.
edgert_status new_weight_image(PortContext* c, const DeviceLimits& limits, uint32_t index, const Buffer* b,
                               cl_mem* out) {
  const size_t padded = image_size(b);
  uint8_t* host = static_cast<uint8_t*>(std::calloc(padded ? padded : 1, 1));
  if (!host) return out_of_memory("a weight image");
  const Section* s = c->bundle->root->sections()->Get(b->section());
  std::memcpy(host, c->bundle->data + s->offset() + b->offset(), static_cast<size_t>(b->size()));
  edgert_status st = new_image(c, limits, index, b, host, out);
  std::free(host);
  if (st == EDGERT_OK) c->image_bytes += padded;
  return st;
}

// Device memory for every input and output: kernels and copies use it; run() moves the data.
edgert_status create_io(PortContext* c, const DeviceLimits& limits, bool input) {
  const Bundle* b = c->bundle->root;
  const auto* tensors = input ? b->inputs() : b->outputs();
  IoSlot* slots = input ? c->inputs : c->outputs;
  const char* what = input ? "input" : "output";
  for (uint32_t i = 0; i < count(tensors); ++i) {
    IoSlot& slot = slots[i];
    slot.buffer = tensors->Get(i)->buffer();
    const Buffer* buf = b->buffers()->Get(slot.buffer);
    slot.size = static_cast<size_t>(buf->size());
    const cl_mem_flags flags = input ? CL_MEM_READ_ONLY : CL_MEM_READ_WRITE;
    edgert_status st = EDGERT_OK;
    if (buf->memory() == MemorySpace::Image2D) {
      // The caller's linear data goes through a staging buffer padded to the whole image.
      const size_t padded = image_size(buf);
      st = new_buffer(c, CL_MEM_READ_WRITE, padded, nullptr, what, i, buffer_name(buf), &slot.device);
      if (st == EDGERT_OK) st = zero_buffer(c, slot.device, padded, what, i, buffer_name(buf));
      if (st == EDGERT_OK) st = new_image(c, limits, slot.buffer, buf, nullptr, &slot.image);
      slot.region[0] = buf->image_width();
      slot.region[1] = buf->image_height();
      c->mems[slot.buffer] = slot.image;
    } else {
      st = new_buffer(c, flags, slot.size, nullptr, what, i, buffer_name(buf), &slot.device);
      if (st == EDGERT_OK && !input) st = zero_buffer(c, slot.device, slot.size, what, i, buffer_name(buf));
      c->mems[slot.buffer] = slot.device;
    }
    if (st != EDGERT_OK) return st;
  }
  return EDGERT_OK;
}

// Whether buffer i is an argument of some Launch or Copy command.
bool* used_buffers(const Bundle* b) {
  bool* used = alloc_array<bool>(count(b->buffers()));
  if (!used) return nullptr;
  for (uint32_t i = 0; i < count(b->commands()); ++i) {
    const Command* cmd = b->commands()->Get(i);
    if (cmd->kind() == CommandKind::Timestamp) continue;
    for (uint32_t a = 0; a < count(cmd->args()); ++a) used[cmd->args()->Get(a)] = true;
  }
  return used;
}

edgert_status create_memory(PortContext* c) {
  const Bundle* b = c->bundle->root;
  const Api& cl = *c->device.cl;
  const uint32_t num_buffers = count(b->buffers());
  c->max_owned = 2 * num_buffers + 4;
  c->owned = alloc_array<cl_mem>(c->max_owned);
  c->mems = alloc_array<cl_mem>(num_buffers);
  c->num_inputs = count(b->inputs());
  c->num_outputs = count(b->outputs());
  c->inputs = alloc_array<IoSlot>(c->num_inputs);
  c->outputs = alloc_array<IoSlot>(c->num_outputs);
  bool* used = used_buffers(b);
  if (!c->owned || !c->mems || !c->inputs || !c->outputs || !used) {
    std::free(used);
    return out_of_memory("the device memory tables");
  }
  for (uint32_t i = 0; i < c->num_inputs; ++i) new (&c->inputs[i]) IoSlot;
  for (uint32_t i = 0; i < c->num_outputs; ++i) new (&c->outputs[i]) IoSlot;
  const DeviceLimits limits = device_limits(c->device);
  // Sub-buffers of one arena allocation when every Global arena buffer's offset meets the
  // device's base alignment (edgec aligns OpenCL arenas to 256); else one allocation each.
  bool sub_buffers = true;
  for (uint32_t i = 0; i < num_buffers; ++i) {
    const Buffer* buf = b->buffers()->Get(i);
    if (used[i] && buf->kind() == BufferKind::Arena && buf->memory() == MemorySpace::Global &&
        buf->size() > 0 && buf->offset() % limits.base_align != 0)
      sub_buffers = false;
  }
  edgert_status st = new_buffer(c, CL_MEM_READ_WRITE, 0, nullptr, "buffer", 0, "(empty)", &c->empty);
  if (st == EDGERT_OK && sub_buffers) {
    const size_t arena_size = static_cast<size_t>(b->arena_size());
    st = new_buffer(c, CL_MEM_READ_WRITE, arena_size, nullptr, "buffer", 0, "(arena)", &c->arena);
    if (st == EDGERT_OK) st = zero_buffer(c, c->arena, arena_size, "buffer", 0, "(arena)");
  }
  if (st == EDGERT_OK) st = create_io(c, limits, true);
  if (st == EDGERT_OK) st = create_io(c, limits, false);
  for (uint32_t i = 0; st == EDGERT_OK && i < num_buffers; ++i) {
    const Buffer* buf = b->buffers()->Get(i);
    if (!used[i] || c->mems[i]) continue;  // unused, or an input/output (done above)
    const char* name = buffer_name(buf);
    const size_t size = static_cast<size_t>(buf->size());
    if (buf->memory() == MemorySpace::Image2D) {
      st = buf->kind() == BufferKind::Weight ? new_weight_image(c, limits, i, buf, &c->mems[i])
                                             : new_image(c, limits, i, buf, nullptr, &c->mems[i]);
    } else if (size == 0) {
      c->mems[i] = c->empty;
    } else if (buf->kind() == BufferKind::Weight) {
      const Section* s = b->sections()->Get(buf->section());
      // Copied once into device memory; the mapping itself is never written.
      void* host = const_cast<uint8_t*>(c->bundle->data + s->offset() + buf->offset());
      st = new_buffer(c, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, size, host, "buffer", i, name, &c->mems[i]);
    } else if (c->arena) {  // Arena, as a sub-buffer
      cl_buffer_region region = {static_cast<size_t>(buf->offset()), size};
      cl_int err = CL_SUCCESS;
      c->mems[i] =
          cl.clCreateSubBuffer(c->arena, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
      if (err != CL_SUCCESS) {
        c->mems[i] = nullptr;
        st = cl_failed(err, "clCreateSubBuffer", "buffer", i, name);
      } else {
        keep(c, c->mems[i]);
      }
    } else {  // Arena, in an allocation of its own
      st = new_buffer(c, CL_MEM_READ_WRITE, size, nullptr, "buffer", i, name, &c->mems[i]);
      if (st == EDGERT_OK) st = zero_buffer(c, c->mems[i], size, "buffer", i, name);
    }
  }
  std::free(used);
  return st;
}

// ---- programs ----

// The OpenCLBinary section built from OpenCLC section `source`, or -1.
int64_t binary_section(const Bundle* b, uint32_t source) {
  for (uint32_t i = 0; i < count(b->sections()); ++i) {
    const Section* s = b->sections()->Get(i);
    if (s->format() == CodeFormat::OpenCLBinary && s->source_section() == source) return i;
  }
  return -1;
}

const char* str(const flatbuffers::String* s) { return s ? s->c_str() : ""; }

edgert_status create_programs(PortContext* c, const edgert_context_options* options) {
  const edgert_bundle* bundle = c->bundle;
  const Bundle* b = bundle->root;
  const Device& d = c->device;
  const bool allow_source = options->allow_source_build != 0;
  c->num_sections = count(b->sections());
  c->programs = alloc_array<cl_program>(c->num_sections);
  if (!c->programs) return out_of_memory("the program table");
  // Binaries only from the platform, device and driver that built them.
  bool use_binaries = false;
  if (const PreparedFor* p = b->prepared()) {
    use_binaries = std::strcmp(str(p->platform()), d.platform_id) == 0 &&
                   std::strcmp(str(p->device()), d.name) == 0 && std::strcmp(str(p->driver()), d.driver) == 0;
    if (!use_binaries && !allow_source)
      return set_error(
          EDGERT_ERROR_UNSUPPORTED,
          "bundle was prepared for %s/%s/%s, this is %s/%s/%s: run edgert-prepare on this device",
          str(p->platform()), str(p->device()), str(p->driver()), d.platform_id, d.name, d.driver);
  }
  for (uint32_t i = 0; i < c->num_sections; ++i) {
    if (b->sections()->Get(i)->format() != CodeFormat::OpenCLC) continue;
    const int64_t binary = use_binaries ? binary_section(b, i) : -1;
    if (binary >= 0) {
      const Section* s = b->sections()->Get(static_cast<uint32_t>(binary));
      edgert_status st = load_binary(d, c->context, bundle->data + s->offset(),
                                     static_cast<size_t>(s->size()), i, &c->programs[i]);
      if (st == EDGERT_OK) {
        ++c->programs_loaded;
        continue;
      }
      if (!allow_source) return st;
    } else if (!allow_source) {
      if (use_binaries)
        return set_error(
            EDGERT_ERROR_UNSUPPORTED,
            "prepared bundle has no program binary for OpenCL C section %u; run edgert-prepare on it "
            "again, or allow building from source",
            i);
      return set_error(
          EDGERT_ERROR_UNSUPPORTED,
          "bundle has no program binaries for this device (%s); run edgert-prepare BUNDLE -o PREPARED "
          "on it, or allow building from source",
          d.name);
    }
    edgert_status st = build_from_source(d, c->context, bundle, i, &c->programs[i]);
    if (st != EDGERT_OK) return st;
    ++c->programs_built;
  }
  return EDGERT_OK;
}

// ---- the queue ----

edgert_status create_launch(PortContext* c, uint32_t index, const Command* cmd, Op* op) {
  const Bundle* b = c->bundle->root;
  const Api& cl = *c->device.cl;
  const Kernel* k = b->kernels()->Get(cmd->kernel());
  const char* name = kernel_name(k);
  cl_int err = CL_SUCCESS;
  // One kernel object per launch: the arguments of each launch are set here, once.
  op->kernel = cl.clCreateKernel(c->programs[k->section()], k->entry_name()->c_str(), &err);
  if (err != CL_SUCCESS) {
    op->kernel = nullptr;
    return set_error(status_for(err), "command %u (kernel %s): clCreateKernel(\"%s\") failed: %s (%d)", index,
                     name, k->entry_name()->c_str(), cl_error_name(err), err);
  }
  cl_uint num_args = 0;
  err = cl.clGetKernelInfo(op->kernel, CL_KERNEL_NUM_ARGS, sizeof(num_args), &num_args, nullptr);
  if (err == CL_SUCCESS && num_args != count(cmd->args()))
    return set_error(EDGERT_ERROR_INVALID_BUNDLE,
                     "command %u (kernel %s): the OpenCL kernel %s takes %u args, the "
                     "command passes %u",
                     index, name, k->entry_name()->c_str(), num_args, count(cmd->args()));
  for (uint32_t a = 0; a < count(cmd->args()); ++a) {
    const uint32_t buffer = cmd->args()->Get(a);
    err = cl.clSetKernelArg(op->kernel, a, sizeof(cl_mem), &c->mems[buffer]);
    if (err != CL_SUCCESS)
      return set_error(status_for(err),
                       "command %u (kernel %s): clSetKernelArg(%u, buffer %u (%s)) failed: %s (%d)", index,
                       name, a, buffer, buffer_name(b->buffers()->Get(buffer)), cl_error_name(err), err);
  }
  op->kind = OpKind::Launch;
  op->dims = count(k->global_size());
  op->has_local = count(k->local_size()) != 0;
  for (cl_uint d = 0; d < op->dims; ++d) {
    op->global[d] = static_cast<size_t>(k->global_size()->Get(d));
    if (op->has_local) op->local[d] = static_cast<size_t>(k->local_size()->Get(d));
  }
  return EDGERT_OK;
}

// A copy between an image and a linear buffer covers `bytes` of the image's elements: whole
// rows first, then the start of one more row. When the bytes end inside a texel, CL cannot
// copy them directly: the whole image goes through the scratch buffer.
void plan_image_copy(const Buffer* image, bool to_buffer, Op* op, size_t* scratch_size) {
  const size_t texel = texel_bytes(image), width = image->image_width();
  op->num_parts = 0;
  if (op->bytes % texel != 0) {
    op->kind = to_buffer ? OpKind::CopyImageToBufferViaScratch : OpKind::CopyBufferToImageViaScratch;
    op->parts[op->num_parts++] = ImagePart{{0, 0, 0}, {width, image->image_height(), 1}, 0};
    if (image_size(image) > *scratch_size) *scratch_size = image_size(image);
    return;
  }
  op->kind = to_buffer ? OpKind::CopyImageToBuffer : OpKind::CopyBufferToImage;
  const size_t texels = op->bytes / texel, rows = texels / width, rest = texels % width;
  if (rows > 0) op->parts[op->num_parts++] = ImagePart{{0, 0, 0}, {width, rows, 1}, 0};
  if (rest > 0) op->parts[op->num_parts++] = ImagePart{{0, rows, 0}, {rest, 1, 1}, rows * width * texel};
}

edgert_status create_copy(PortContext* c, uint32_t index, const Command* cmd, Op* op, size_t* scratch_size) {
  const Bundle* b = c->bundle->root;
  const Buffer* src = b->buffers()->Get(cmd->args()->Get(0));
  const Buffer* dst = b->buffers()->Get(cmd->args()->Get(1));
  op->src = c->mems[cmd->args()->Get(0)];
  op->dst = c->mems[cmd->args()->Get(1)];
  op->bytes = static_cast<size_t>(src->size());  // the verifier checked both sizes match
  const bool src_image = src->memory() == MemorySpace::Image2D,
             dst_image = dst->memory() == MemorySpace::Image2D;
  if (op->bytes == 0 || op->src == op->dst) {
    op->kind = OpKind::Nop;
    return EDGERT_OK;
  }
  if (src_image && dst_image) {
    if (src->image_width() != dst->image_width() || src->image_height() != dst->image_height() ||
        texel_bytes(src) != texel_bytes(dst))
      return set_error(EDGERT_ERROR_UNSUPPORTED,
                       "command %u: copy between images %s and %s of different shapes", index,
                       buffer_name(src), buffer_name(dst));
    op->kind = OpKind::CopyImage;
    op->parts[0] = ImagePart{{0, 0, 0}, {src->image_width(), src->image_height(), 1}, 0};
    op->num_parts = 1;
    return EDGERT_OK;
  }
  if (src_image || dst_image) {
    // The verifier made sure the image holds every element of the buffer (bytes fit).
    plan_image_copy(src_image ? src : dst, src_image, op, scratch_size);
    return EDGERT_OK;
  }
  op->kind = OpKind::CopyBuffer;
  // Sub-buffers of the arena that overlap (and are not the same range, a Nop) cannot be
  // copied directly (CL_MEM_COPY_OVERLAP): go through a scratch buffer.
  if (c->arena && src->kind() == BufferKind::Arena && dst->kind() == BufferKind::Arena) {
    const uint64_t s = src->offset(), d = dst->offset(), n = op->bytes;
    if (s == d) {
      op->kind = OpKind::Nop;
    } else if (s < d + n && d < s + n) {
      op->kind = OpKind::CopyViaScratch;
      if (op->bytes > *scratch_size) *scratch_size = op->bytes;
    }
  }
  return EDGERT_OK;
}

edgert_status create_queue(PortContext* c) {
  const Bundle* b = c->bundle->root;
  c->num_ops = count(b->commands());
  for (uint32_t i = 0; i < c->num_ops; ++i)
    c->num_timestamps += b->commands()->Get(i)->kind() == CommandKind::Timestamp;
  c->ops = alloc_array<Op>(c->num_ops);
  c->events = alloc_array<cl_event>(static_cast<size_t>(c->num_ops) * kEventsPerOp);
  c->timestamps = alloc_array<uint64_t>(c->num_timestamps);
  if (!c->ops || !c->events || !c->timestamps) return out_of_memory("the command queue");
  for (uint32_t i = 0; i < c->num_ops; ++i) new (&c->ops[i]) Op;
  size_t scratch_size = 0;
  uint32_t next_timestamp = 0;
  int32_t last_enqueuing = -1;  // the latest op before this one that enqueues work
  for (uint32_t i = 0; i < c->num_ops; ++i) {
    const Command* cmd = b->commands()->Get(i);
    Op* op = &c->ops[i];
    edgert_status st = EDGERT_OK;
    switch (cmd->kind()) {
      case CommandKind::Timestamp:
        op->kind = OpKind::Timestamp;
        op->timestamp = next_timestamp++;
        op->stamp_op = last_enqueuing;
        if (last_enqueuing >= 0) c->ops[last_enqueuing].needs_event = true;
        break;
      case CommandKind::Copy: st = create_copy(c, i, cmd, op, &scratch_size); break;
      default: st = create_launch(c, i, cmd, op); break;  // Launch (the verifier rejected other kinds)
    }
    if (st != EDGERT_OK) return st;
    if (op->kind != OpKind::Timestamp && op->kind != OpKind::Nop) last_enqueuing = static_cast<int32_t>(i);
  }
  if (scratch_size == 0) return EDGERT_OK;
  edgert_status st =
      new_buffer(c, CL_MEM_READ_WRITE, scratch_size, nullptr, "buffer", 0, "(copy scratch)", &c->scratch);
  return st == EDGERT_OK ? zero_buffer(c, c->scratch, scratch_size, "buffer", 0, "(copy scratch)") : st;
}

// ---- run ----

// Enqueues one op; `events` receives one event per enqueue (null: none wanted).
cl_int enqueue(const PortContext* c, const Op& op, cl_event* events, uint32_t* num_events,
               const char** call) {
  const Api& cl = *c->device.cl;
  cl_command_queue q = c->queue;
  *num_events = 0;
  auto next = [&]() { return events ? &events[(*num_events)++] : nullptr; };
  switch (op.kind) {
    case OpKind::Launch:
      *call = "clEnqueueNDRangeKernel";
      return cl.clEnqueueNDRangeKernel(q, op.kernel, op.dims, nullptr, op.global,
                                       op.has_local ? op.local : nullptr, 0, nullptr, next());
    case OpKind::CopyBuffer:
      *call = "clEnqueueCopyBuffer";
      return cl.clEnqueueCopyBuffer(q, op.src, op.dst, 0, 0, op.bytes, 0, nullptr, next());
    case OpKind::CopyViaScratch: {
      *call = "clEnqueueCopyBuffer";
      cl_int err = cl.clEnqueueCopyBuffer(q, op.src, c->scratch, 0, 0, op.bytes, 0, nullptr, next());
      if (err != CL_SUCCESS) return err;
      return cl.clEnqueueCopyBuffer(q, c->scratch, op.dst, 0, 0, op.bytes, 0, nullptr, next());
    }
    case OpKind::CopyImage:
      *call = "clEnqueueCopyImage";
      return cl.clEnqueueCopyImage(q, op.src, op.dst, op.parts[0].origin, op.parts[0].origin,
                                   op.parts[0].region, 0, nullptr, next());
    case OpKind::CopyImageToBuffer:
    case OpKind::CopyBufferToImage:
      for (uint32_t p = 0; p < op.num_parts; ++p) {
        const ImagePart& part = op.parts[p];
        cl_int err;
        if (op.kind == OpKind::CopyImageToBuffer) {
          *call = "clEnqueueCopyImageToBuffer";
          err = cl.clEnqueueCopyImageToBuffer(q, op.src, op.dst, part.origin, part.region, part.offset, 0,
                                              nullptr, next());
        } else {
          *call = "clEnqueueCopyBufferToImage";
          err = cl.clEnqueueCopyBufferToImage(q, op.src, op.dst, part.offset, part.origin, part.region, 0,
                                              nullptr, next());
        }
        if (err != CL_SUCCESS) return err;
      }
      return CL_SUCCESS;
    case OpKind::CopyImageToBufferViaScratch: {
      *call = "clEnqueueCopyImageToBuffer";
      const ImagePart& all = op.parts[0];
      cl_int err =
          cl.clEnqueueCopyImageToBuffer(q, op.src, c->scratch, all.origin, all.region, 0, 0, nullptr, next());
      if (err != CL_SUCCESS) return err;
      *call = "clEnqueueCopyBuffer";
      return cl.clEnqueueCopyBuffer(q, c->scratch, op.dst, 0, 0, op.bytes, 0, nullptr, next());
    }
    case OpKind::CopyBufferToImageViaScratch: {
      *call = "clEnqueueCopyBuffer";
      cl_int err = cl.clEnqueueCopyBuffer(q, op.src, c->scratch, 0, 0, op.bytes, 0, nullptr, next());
      if (err != CL_SUCCESS) return err;
      *call = "clEnqueueCopyBufferToImage";
      const ImagePart& all = op.parts[0];
      return cl.clEnqueueCopyBufferToImage(q, c->scratch, op.dst, 0, all.origin, all.region, 0, nullptr,
                                           next());
    }
    case OpKind::Nop:
    case OpKind::Timestamp: return CL_SUCCESS;
  }
  return CL_SUCCESS;
}

const char* io_name(const PortContext* c, bool input, uint32_t index) {
  const auto* tensors = input ? c->bundle->root->inputs() : c->bundle->root->outputs();
  return tensors->Get(index)->name()->c_str();  // verified: present
}

cl_ulong profile(const Api& cl, cl_event event, cl_profiling_info what) {
  cl_ulong t = 0;
  // Profiling is best effort: a driver without it gives zeros, never a failed run.
  if (cl.clGetEventProfilingInfo(event, what, sizeof(t), &t, nullptr) != CL_SUCCESS) t = 0;
  return t;
}

}  // namespace

edgert_status create(const edgert_bundle* bundle, const edgert_context_options* options, PortContext** out) {
  *out = nullptr;
  // calloc + placement new rather than operator new: the runtime needs only libc.
  void* mem = std::calloc(1, sizeof(PortContext));
  if (!mem) return out_of_memory("the context");
  PortContext* c = new (mem) PortContext;
  c->bundle = bundle;
  edgert_status st = select_device(options, &c->device);
  if (st == EDGERT_OK) st = check_extensions(bundle, c->device);
  if (st == EDGERT_OK) st = create_cl_context(c->device, &c->context);
  if (st == EDGERT_OK) {
    cl_int err = CL_SUCCESS;
    // In order: every command sees the results of the ones before it, with no events.
    c->queue =
        c->device.cl->clCreateCommandQueue(c->context, c->device.device, CL_QUEUE_PROFILING_ENABLE, &err);
    if (err != CL_SUCCESS) {
      c->queue = nullptr;
      st = set_error(status_for(err), "cannot create an OpenCL command queue on %s: %s (%d)", c->device.name,
                     cl_error_name(err), err);
    }
  }
  if (st == EDGERT_OK) st = create_programs(c, options);
  if (st == EDGERT_OK) st = create_memory(c);
  if (st == EDGERT_OK) st = create_queue(c);
  if (st == EDGERT_OK) {
    // The uploads and zero fills are done before the context is handed out.
    cl_int err = c->device.cl->clFinish(c->queue);
    if (err != CL_SUCCESS)
      st = set_error(status_for(err), "initializing device memory on %s: clFinish failed: %s (%d)",
                     c->device.name, cl_error_name(err), err);
  }
  if (st != EDGERT_OK) {
    destroy(c);
    return st;
  }
  *out = c;
  return EDGERT_OK;
}

void destroy(PortContext* c) {
  if (!c) return;
  const Api* cl = c->device.cl;
  if (cl) {
    if (c->queue) cl->clFinish(c->queue);
    for (uint32_t i = 0; c->ops && i < c->num_ops; ++i)
      if (c->ops[i].kernel) cl->clReleaseKernel(c->ops[i].kernel);
    for (uint32_t i = 0; c->programs && i < c->num_sections; ++i)
      if (c->programs[i]) cl->clReleaseProgram(c->programs[i]);
    // Newest first: images and sub-buffers go before the buffers under them.
    for (uint32_t i = c->num_owned; i-- > 0;) cl->clReleaseMemObject(c->owned[i]);
    if (c->queue) cl->clReleaseCommandQueue(c->queue);
    if (c->context) cl->clReleaseContext(c->context);
  }
  std::free(c->programs);
  std::free(c->owned);
  std::free(c->mems);
  std::free(c->inputs);
  std::free(c->outputs);
  std::free(c->ops);
  std::free(c->events);
  std::free(c->timestamps);
  c->~PortContext();
  std::free(c);
}

edgert_status bind(PortContext* c, bool input, uint32_t index, void* data, size_t) {
  (input ? c->inputs : c->outputs)[index].host = data;
  return EDGERT_OK;
}

edgert_status run(PortContext* c, uint64_t* command_ns) {
  const Api& cl = *c->device.cl;
  cl_command_queue q = c->queue;
  const size_t origin[3] = {0, 0, 0};
  edgert_status st = EDGERT_OK;
  cl_int err = CL_SUCCESS;
  // Inputs: host -> device (non-blocking: the caller's memory is read before run returns).
  for (uint32_t i = 0; i < c->num_inputs && st == EDGERT_OK; ++i) {
    const IoSlot& s = c->inputs[i];
    err = CL_SUCCESS;
    if (s.size > 0)
      err = cl.clEnqueueWriteBuffer(q, s.device, CL_FALSE, 0, s.size, s.host, 0, nullptr, nullptr);
    if (err == CL_SUCCESS && s.image)
      err = cl.clEnqueueCopyBufferToImage(q, s.device, s.image, 0, origin, s.region, 0, nullptr, nullptr);
    if (err != CL_SUCCESS) st = cl_failed(err, "writing it to the device", "input", i, io_name(c, true, i));
  }
  for (uint32_t i = 0; i < c->num_ops && st == EDGERT_OK; ++i) {
    Op& op = c->ops[i];
    cl_event* events = command_ns || op.needs_event ? &c->events[i * kEventsPerOp] : nullptr;
    const char* call = "";
    err = enqueue(c, op, events, &op.num_events, &call);
    if (err != CL_SUCCESS) {
      const Command* cmd = c->bundle->root->commands()->Get(i);
      const char* what =
          op.kind == OpKind::Launch ? kernel_name(c->bundle->root->kernels()->Get(cmd->kernel())) : "copy";
      st = cl_failed(err, call, "command", i, what);
    }
  }
  // Outputs: device -> host.
  for (uint32_t i = 0; i < c->num_outputs && st == EDGERT_OK; ++i) {
    const IoSlot& s = c->outputs[i];
    err = CL_SUCCESS;
    if (s.image)
      err = cl.clEnqueueCopyImageToBuffer(q, s.image, s.device, origin, s.region, 0, 0, nullptr, nullptr);
    if (err == CL_SUCCESS && s.size > 0)
      err = cl.clEnqueueReadBuffer(q, s.device, CL_FALSE, 0, s.size, s.host, 0, nullptr, nullptr);
    if (err != CL_SUCCESS)
      st = cl_failed(err, "reading it from the device", "output", i, io_name(c, false, i));
  }
  // Always wait, also after a failed enqueue: nothing may touch the caller's memory later.
  err = cl.clFinish(q);
  if (err != CL_SUCCESS && st == EDGERT_OK)
    st = set_error(status_for(err), "run on %s: clFinish failed: %s (%d)", c->device.name, cl_error_name(err),
                   err);

  for (uint32_t i = 0; i < c->num_ops; ++i) {
    Op& op = c->ops[i];
    cl_event* events = &c->events[i * kEventsPerOp];
    if (op.kind == OpKind::Timestamp) {
      const Op* stamped = op.stamp_op >= 0 ? &c->ops[op.stamp_op] : nullptr;
      c->timestamps[op.timestamp] =
          stamped && stamped->num_events > 0 && st == EDGERT_OK
              ? profile(cl, c->events[op.stamp_op * kEventsPerOp + stamped->num_events - 1],
                        CL_PROFILING_COMMAND_END)
              : 0;
    }
    if (command_ns) {
      command_ns[i] = 0;
      if (op.num_events > 0 && st == EDGERT_OK) {
        const cl_ulong start = profile(cl, events[0], CL_PROFILING_COMMAND_START);
        const cl_ulong end = profile(cl, events[op.num_events - 1], CL_PROFILING_COMMAND_END);
        command_ns[i] = end > start ? end - start : 0;
      }
    }
  }
  // Released only after every timestamp has read the events it needs.
  for (uint32_t i = 0; i < c->num_ops; ++i) {
    Op& op = c->ops[i];
    for (uint32_t e = 0; e < op.num_events; ++e) {
      cl_event& event = c->events[i * kEventsPerOp + e];
      if (event) cl.clReleaseEvent(event);
      event = nullptr;
    }
    op.num_events = 0;
  }
  return st;
}

void timestamps(const PortContext* c, const uint64_t** ns, int32_t* n) {
  *ns = c->timestamps;
  *n = static_cast<int32_t>(c->num_timestamps);
}

void stats(const PortContext* c, edgert_context_stats* out) {
  out->device = c->device.name;
  out->programs_built = c->programs_built;
  out->programs_loaded = c->programs_loaded;
  out->buffer_bytes = c->buffer_bytes;
  out->image_bytes = c->image_bytes;
}

}  // namespace edgert::opencl
