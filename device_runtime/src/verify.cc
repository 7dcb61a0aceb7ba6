// verify.cc — every check that stands between an untrusted bundle file and the code that
// trusts it. The loader and the context use offsets, indices and sizes without checking
// again, so anything they rely on must be checked here. One function per part of the
// bundle; to add a check, add it to the part it concerns and name the field in the message.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "bundle_header.h"
#define EDGE_SIGNATURE_LAYOUT_ONLY
#include "bundle_signature.h"
#include "code_directory.h"
#include "flatbuffer_verify.h"
#include "internal.h"
#include "kernel_abi.h"
#include "port.h"
#include "runtime_limits.h"

namespace edgert {

const char* arch_name(edge::bundle::Arch a) {
  const char* name = enum_name(kArchNames, static_cast<uint32_t>(a));
  return *name ? name : "unknown";
}

const char* describe_target(const edge::bundle::Target* t, char* buf, size_t size) {
  auto str = [](const flatbuffers::String* s) { return s ? s->c_str() : ""; };
  const uint32_t num_features = t->features() ? t->features()->size() : 0;
  int used = std::snprintf(buf, size, "%s (cpu %s, features ", arch_name(t->arch()), str(t->cpu()));
  for (uint32_t i = 0; i < num_features && used >= 0 && static_cast<size_t>(used) < size; ++i)
    used += std::snprintf(buf + used, size - static_cast<size_t>(used), "%s%s", i ? "," : "",
                          str(t->features()->Get(i)));
  if (used >= 0 && static_cast<size_t>(used) < size)
    std::snprintf(buf + used, size - static_cast<size_t>(used), "%s)", num_features ? "" : "none");
  return buf;
}

namespace {

using namespace edge::bundle;

#define EDGE_INVALID(...) ::edgert::set_error(EDGERT_ERROR_INVALID_BUNDLE, __VA_ARGS__)

using edge::limits::kMaxArenaAlignment;
static_assert(edge::limits::kMaxRank == EDGERT_MAX_RANK, "edgert.h and runtime_limits.h disagree");
static_assert(edge::limits::kMinArenaAlignment == kSectionAlignment, "the arena's alignment is a section's");

template <typename T>
uint32_t count(const flatbuffers::Vector<T>* v) {
  return v ? v->size() : 0;
}

// [offset, offset + size) lies inside [0, limit), without overflow.
bool range_inside(uint64_t offset, uint64_t size, uint64_t limit) {
  return offset <= limit && size <= limit - offset;
}

bool is_power_of_two(uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }

bool valid_dtype(DType d) { return dtype_size(static_cast<uint32_t>(d)) != 0; }

// product(shape) * element size, false on a negative dim or overflow. A null shape is a
// scalar.
bool shape_bytes(const flatbuffers::Vector<int64_t>* shape, DType dtype, uint64_t* out) {
  uint64_t n = dtype_size(static_cast<uint32_t>(dtype));
  for (uint32_t i = 0; i < count(shape); ++i) {
    int64_t d = shape->Get(i);
    if (d < 0 || __builtin_mul_overflow(n, static_cast<uint64_t>(d), &n)) return false;
  }
  *out = n;
  return true;
}

bool same_shape(const flatbuffers::Vector<int64_t>* a, const flatbuffers::Vector<int64_t>* b) {
  if (count(a) != count(b)) return false;
  for (uint32_t i = 0; i < count(a); ++i)
    if (a->Get(i) != b->Get(i)) return false;
  return true;
}

const char* str(const flatbuffers::String* s) { return s ? s->c_str() : ""; }

// The FlatBuffers verifier checks only the 4-byte alignment of a vector's length, so a
// vector of 8-byte scalars ([long], [ulong]) can pass it and then be read misaligned. An
// empty one is never read (FlatBuffers does not align it: a scalar's shape).
template <typename T>
bool misaligned(const flatbuffers::Vector<T>* v) {
  return v && v->size() > 0 && reinterpret_cast<uintptr_t>(v->data()) % sizeof(T) != 0;
}

// calloc'd scratch for a check, freed on every return path. Only open verifies, never
// edgert_run, and the runtime needs only libc (no operator new).
struct Scratch {
  void* p;
  explicit Scratch(size_t bytes) : p(std::calloc(bytes ? bytes : 1, 1)) {}
  ~Scratch() { std::free(p); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
};

edgert_status out_of_memory(const char* what) {
  return set_error(EDGERT_ERROR_OUT_OF_MEMORY, "out of memory verifying %s", what);
}

// Sorts indices a[0, n) by `less`: a heapsort, with no recursion or allocation, and one copy
// of the code for every sort here (std::sort would add kilobytes per comparator).
using Less = bool (*)(const void* ctx, uint32_t x, uint32_t y);
void sort_indices(uint32_t* a, uint32_t n, Less less, const void* ctx) {
  auto sift = [&](uint32_t root, uint32_t end) {
    for (uint32_t child; (child = 2 * root + 1) < end; root = child) {
      if (child + 1 < end && less(ctx, a[child], a[child + 1])) ++child;
      if (!less(ctx, a[root], a[child])) return;
      std::swap(a[root], a[child]);
    }
  };
  for (uint32_t i = n / 2; i-- > 0;) sift(i, n);
  for (uint32_t end = n; end-- > 1;) {
    std::swap(a[0], a[end]);
    sift(0, end);
  }
}

// ---- file layout: header, FlatBuffer range, data blob range, padding, hash ----

edgert_status check_header(const uint8_t* file, size_t file_size, bool signature_checked, BundleHeader* h) {
  if (file_size < kHeaderSize)
    return EDGE_INVALID("file is %zu bytes, smaller than the %u-byte header (truncated?)",
                        file_size, kHeaderSize);
  std::memcpy(h, file, sizeof(*h));
  if (std::memcmp(h->magic, kMagic, sizeof(kMagic)) != 0)
    return EDGE_INVALID("bad magic: not an edge bundle (expected \"EDGEBNDL\")");
  if (h->format_version < kFormatVersion)
    return set_error(EDGERT_ERROR_UNSUPPORTED,
                     "bundle format version %u is older than the format version %u this runtime "
                     "reads: rebuild it with this edgec",
                     h->format_version, kFormatVersion);
  if (h->format_version > kFormatVersion)
    return set_error(EDGERT_ERROR_UNSUPPORTED,
                     "bundle format version %u is newer than the format version %u this runtime "
                     "reads: update the runtime",
                     h->format_version, kFormatVersion);
  if (h->header_size != kHeaderSize)
    return EDGE_INVALID("header_size %u, expected %u", h->header_size, kHeaderSize);
  if (h->reserved != 0) return EDGE_INVALID("header reserved field is not zero");
  if (h->fb_offset != kHeaderSize)
    return EDGE_INVALID("fb_offset %" PRIu64 ", expected %u (FlatBuffer follows the header)",
                        h->fb_offset, kHeaderSize);
  if (h->fb_size == 0 || !range_inside(h->fb_offset, h->fb_size, file_size))
    return EDGE_INVALID("FlatBuffer range [%" PRIu64 ", +%" PRIu64 ") exceeds file size %zu",
                        h->fb_offset, h->fb_size, file_size);
  if (h->data_offset % kDataAlignment != 0)
    return EDGE_INVALID("data_offset %" PRIu64 " is not a multiple of %" PRIu64, h->data_offset,
                        kDataAlignment);
  if (h->data_offset < h->fb_offset + h->fb_size)
    return EDGE_INVALID("data_offset %" PRIu64 " overlaps the FlatBuffer (ends at %" PRIu64 ")",
                        h->data_offset, h->fb_offset + h->fb_size);
  // Exact size: catches truncation at any length and anything appended, but for one
  // signature trailer (bundle_signature.h; checked by check_signature in signed mode, else
  // only its size and magic: an unsigned runtime ignores signatures, as a runtime built
  // without them would).
  const bool sized = range_inside(h->data_offset, h->data_size, file_size);
  const uint64_t data_end = h->data_offset + h->data_size;
  if (!sized || (data_end != file_size && !looks_like_trailer(file + data_end, file_size - data_end)))
    return EDGE_INVALID("file size %zu does not match the header (data blob [%" PRIu64 ", +%" PRIu64
                        "), then nothing or a %zu-byte signature trailer); truncated or corrupted",
                        file_size, h->data_offset, h->data_size, kSignatureTrailerSize);
  // The padding is not hashed; requiring zeros means no byte of the file goes unchecked.
  for (uint64_t i = h->fb_offset + h->fb_size; i < h->data_offset; ++i)
    if (file[i] != 0) return EDGE_INVALID("padding byte at file offset %" PRIu64 " is not zero", i);
  if (signature_checked) return EDGERT_OK;
  uint64_t hash = content_hash_update(kContentHashSeed, file + h->fb_offset, h->fb_size);
  hash = content_hash_update(hash, file + h->data_offset, h->data_size);
  if (hash != h->content_hash)
    return EDGE_INVALID("content hash mismatch (header 0x%016" PRIx64 ", computed 0x%016" PRIx64
                        "): the file is corrupted",
                        h->content_hash, hash);
  return EDGERT_OK;
}

edgert_status check_flatbuffer(const uint8_t* fb, uint64_t fb_size, const Bundle** out) {
  if (fb_size >= FLATBUFFERS_MAX_BUFFER_SIZE)
    return EDGE_INVALID("FlatBuffer is %" PRIu64 " bytes, over the FlatBuffers limit", fb_size);
  if (fb_size < 8 || !BundleBufferHasIdentifier(fb))
    return EDGE_INVALID("FlatBuffer identifier is not \"%s\"", BundleIdentifier());
  flatbuffers::Verifier::Options options;
  options.max_tables = 1u << 26;  // large models have many buffers and commands
  flatbuffers::Verifier verifier(fb, static_cast<size_t>(fb_size), options);
  if (!verify_bundle_flatbuffer(verifier, fb, static_cast<size_t>(fb_size)))
    return EDGE_INVALID("FlatBuffer fails verification (bad offsets, sizes or strings)");
  const Bundle* root = GetBundle(fb);
  if (root->format_version() != kFormatVersion)
    return EDGE_INVALID("Bundle.format_version %u differs from the header's %u",
                        root->format_version(), kFormatVersion);
  *out = root;
  return EDGERT_OK;
}

// ---- target: a port compiled into this runtime runs it, and it can run it here ----

edgert_status check_target(const Bundle* b) {
  const Target* t = b->target();
  if (!t) return EDGE_INVALID("target is missing");
  const Port* port = find_port(str(t->port()));
  return port ? port->check_target(b) : missing_port(t);
}

// ---- sections: ranges of the data blob ----

// A MachineCode section: its code directory (schema/code_directory.h) read as data, every
// check before anything runs. Section.functions must be its entries, and the code's arch
// and features the Target's (so the port's machine check covers what the code needs).
// Other formats have no function table.
edgert_status check_machine_code(const Bundle* b, const Section* s, uint32_t i, const uint8_t* data) {
  const auto* fns = s->functions();
  if (s->format() != CodeFormat::MachineCode) {
    if (count(fns) != 0)
      return EDGE_INVALID("section %u: a %s section has a function table", i,
                          enum_name(kCodeFormatNames, static_cast<uint32_t>(s->format())));
    return EDGERT_OK;
  }
  if (s->offset() != 0)
    return EDGE_INVALID("section %u: a MachineCode section starts the data blob, not offset %" PRIu64, i, s->offset());
  edge::abi::CodeDirectory dir;
  if (const char* why = edge::abi::read_code_directory(data, s->size(), edge::abi::kFunctionAlignment, &dir))
    return EDGE_INVALID("section %u (%" PRIu64 " bytes) %s", i, s->size(), why);
  if (misaligned(fns)) return EDGE_INVALID("section %u: functions vector is not 8-byte aligned", i);
  if (count(fns) != dir.header.num_functions)
    return EDGE_INVALID("section %u: %u functions, but its code directory lists %u", i, count(fns),
                        dir.header.num_functions);
  for (uint32_t f = 0; f < count(fns); ++f) {
    const edge::abi::CodeDirectoryEntry e = dir.entry(f);
    if (fns->Get(f)->offset() != e.offset || fns->Get(f)->size() != e.size)
      return EDGE_INVALID("section %u: function %u [%" PRIu64 ", +%" PRIu64 ") is not the function the compiler "
                          "emitted there [%" PRIu64 ", +%" PRIu64 ") (code directory)",
                          i, f, fns->Get(f)->offset(), fns->Get(f)->size(), e.offset, e.size);
  }
  const Target* t = b->target();
  if (dir.header.arch != static_cast<uint32_t>(t->arch()))
    return EDGE_INVALID("section %u: code for arch %u, but Target.arch is %s", i, dir.header.arch, arch_name(t->arch()));
  const char* cursor = dir.features();
  size_t len = 0;
  while (const char* need = edge::abi::next_feature(&cursor, &len)) {
    bool declared = false;
    for (uint32_t k = 0; k < count(t->features()) && !declared; ++k) {
      const char* f = str(t->features()->Get(k));
      f += *f == '+';
      declared = std::strlen(f) == len && std::memcmp(f, need, len) == 0;
    }
    if (!declared)
      return EDGE_INVALID("section %u: its code needs CPU feature \"%.*s\", which Target.features does not list", i,
                          static_cast<int>(len), need);
  }
  return EDGERT_OK;
}

bool section_less(const void* sections, uint32_t x, uint32_t y) {
  const auto* v = static_cast<const flatbuffers::Vector<flatbuffers::Offset<Section>>*>(sections);
  return v->Get(x)->offset() < v->Get(y)->offset() || (v->Get(x)->offset() == v->Get(y)->offset() && x < y);
}

// No byte of the data blob belongs to two sections: code is never also weights.
edgert_status check_sections_disjoint(const Bundle* b) {
  const uint32_t n = count(b->sections());
  Scratch scratch(size_t{n} * sizeof(uint32_t));
  uint32_t* order = static_cast<uint32_t*>(scratch.p);
  if (!order) return out_of_memory("the sections");
  for (uint32_t i = 0; i < n; ++i) order[i] = i;
  sort_indices(order, n, section_less, b->sections());
  for (uint32_t k = 1; k < n; ++k) {
    const Section* prev = b->sections()->Get(order[k - 1]);
    const Section* next = b->sections()->Get(order[k]);
    if (next->offset() < prev->offset() + prev->size())  // ranges checked inside the blob
      return EDGE_INVALID("section %u [%" PRIu64 ", +%" PRIu64 ") overlaps section %u [%" PRIu64 ", +%" PRIu64 ")",
                          order[k], next->offset(), next->size(), order[k - 1], prev->offset(), prev->size());
  }
  return EDGERT_OK;
}

edgert_status check_sections(const Bundle* b, const uint8_t* data, uint64_t data_size) {
  for (uint32_t i = 0; i < count(b->sections()); ++i) {
    const Section* s = b->sections()->Get(i);
    if (s->kind() > SectionKind::MAX)
      return EDGE_INVALID("section %u: unknown kind %u", i, static_cast<unsigned>(s->kind()));
    if (s->format() > CodeFormat::MAX || (s->kind() == SectionKind::Code) != (s->format() != CodeFormat::None))
      return EDGE_INVALID("section %u: format %u does not fit a %s section", i,
                          static_cast<unsigned>(s->format()), enum_name(kSectionKindNames, static_cast<uint32_t>(s->kind())));
    if (s->format() == CodeFormat::OpenCLBinary) {
      if (!b->prepared())
        return EDGE_INVALID("section %u: an OpenCLBinary section in a bundle without `prepared`", i);
      if (s->source_section() >= count(b->sections()) ||
          b->sections()->Get(s->source_section())->format() != CodeFormat::OpenCLC)
        return EDGE_INVALID("section %u: source_section %u is not an OpenCLC section", i,
                            s->source_section());
    }
    if (!is_power_of_two(s->alignment()) || s->alignment() < kSectionAlignment)
      return EDGE_INVALID("section %u: alignment %u is not a power of two >= %" PRIu64, i,
                          s->alignment(), kSectionAlignment);
    if (s->offset() % s->alignment() != 0)
      return EDGE_INVALID("section %u: offset %" PRIu64 " is not a multiple of its alignment %u", i,
                          s->offset(), s->alignment());
    if (!range_inside(s->offset(), s->size(), data_size))
      return EDGE_INVALID("section %u: range [%" PRIu64 ", +%" PRIu64
                          ") exceeds the data blob (%" PRIu64 " bytes)",
                          i, s->offset(), s->size(), data_size);
    // Kernels may use aligned vector loads on weights: the address itself must be aligned,
    // which only fails for edgert_bundle_open_memory on under-aligned caller memory.
    if (reinterpret_cast<uintptr_t>(data + s->offset()) % s->alignment() != 0)
      return set_error(EDGERT_ERROR_INVALID_ARGUMENT,
                       "section %u: address %p is not %u-byte aligned (bundle memory must be "
                       "aligned to %u bytes)",
                       i, static_cast<const void*>(data + s->offset()), s->alignment(),
                       s->alignment());
    edgert_status st = check_machine_code(b, s, i, data);
    if (st != EDGERT_OK) return st;
  }
  return check_sections_disjoint(b);
}

// ---- arena and buffers ----

bool weight_less(const void* buffers, uint32_t x, uint32_t y) {
  const auto* v = static_cast<const flatbuffers::Vector<flatbuffers::Offset<Buffer>>*>(buffers);
  const Buffer *a = v->Get(x), *c = v->Get(y);
  if (a->section() != c->section()) return a->section() < c->section();
  return a->offset() < c->offset() || (a->offset() == c->offset() && x < y);
}

// Weight buffers do not share bytes: each holds its own constant (the compiler packs them one
// after another), so no edit of an offset can point a kernel at another weight's bytes.
edgert_status check_weights_disjoint(const Bundle* b) {
  const uint32_t n = count(b->buffers());
  Scratch scratch(size_t{n} * sizeof(uint32_t));
  uint32_t* order = static_cast<uint32_t*>(scratch.p);
  if (!order) return out_of_memory("the weights");
  uint32_t m = 0;
  for (uint32_t i = 0; i < n; ++i)
    if (b->buffers()->Get(i)->kind() == BufferKind::Weight && b->buffers()->Get(i)->size() > 0) order[m++] = i;
  sort_indices(order, m, weight_less, b->buffers());
  for (uint32_t k = 1; k < m; ++k) {
    const Buffer* prev = b->buffers()->Get(order[k - 1]);
    const Buffer* next = b->buffers()->Get(order[k]);
    if (next->section() == prev->section() && next->offset() < prev->offset() + prev->size())  // ranges checked
      return EDGE_INVALID("buffer %u (%s) at offset %" PRIu64 " of section %u overlaps buffer %u (%s) [%" PRIu64
                          ", +%" PRIu64 ")",
                          order[k], buffer_name(next), next->offset(), next->section(), order[k - 1],
                          buffer_name(prev), prev->offset(), prev->size());
  }
  return EDGERT_OK;
}

edgert_status check_buffers(const Bundle* b) {
  const uint32_t align = b->arena_alignment();
  if (!is_power_of_two(align) || align < kSectionAlignment || align > kMaxArenaAlignment)
    return EDGE_INVALID("arena_alignment %u is not a power of two in [%" PRIu64 ", %u]", align,
                        kSectionAlignment, kMaxArenaAlignment);
  const uint32_t num_sections = count(b->sections());
  for (uint32_t i = 0; i < count(b->buffers()); ++i) {
    const Buffer* buf = b->buffers()->Get(i);
    const char* name = buffer_name(buf);
    if (!valid_dtype(buf->dtype()))
      return EDGE_INVALID("buffer %u (%s): unknown dtype %u", i, name,
                          static_cast<unsigned>(buf->dtype()));
    if (misaligned(buf->shape()))
      return EDGE_INVALID("buffer %u (%s): shape vector is not 8-byte aligned", i, name);
    // Kernels index by shape, so `size` must be exactly what the shape needs (dtype is the
    // storage dtype; an Image2D's padded texels are separate, checked below).
    uint64_t bytes = 0;
    if (!shape_bytes(buf->shape(), buf->dtype(), &bytes))
      return EDGE_INVALID("buffer %u (%s): shape has a negative or overflowing dimension", i, name);
    if (buf->size() != bytes)
      return EDGE_INVALID("buffer %u (%s): size %" PRIu64 " != product(shape) * dtype size = %" PRIu64,
                          i, name, buf->size(), bytes);
    switch (buf->memory()) {
      case MemorySpace::Global: break;
      case MemorySpace::Image2D: {
        // Texels of 4 elements: the image must hold every element of the buffer.
        const uint64_t texels = static_cast<uint64_t>(buf->image_width()) * buf->image_height();
        const uint64_t elems = buf->size() / dtype_size(static_cast<uint32_t>(buf->dtype()));
        if (buf->image_width() == 0 || buf->image_height() == 0 ||
            texels < (elems + edge::abi::kImageChannels - 1) / edge::abi::kImageChannels)
          return EDGE_INVALID("buffer %u (%s): image %ux%u texels cannot hold its %" PRIu64 " elements",
                              i, name, buf->image_width(), buf->image_height(), elems);
        // texels * 4 * element size: what an arena image owns, and what a port allocates and
        // copies for any image (the opencl port stages a weight's padded texels on the heap:
        // 2^30 x 2^30 texels of floats wrapped to 0 bytes, then took the weight's bytes).
        uint64_t padded = 0;
        if (__builtin_mul_overflow(texels, edge::abi::kImageChannels * dtype_size(static_cast<uint32_t>(buf->dtype())),
                                   &padded) ||
            padded > SIZE_MAX)
          return EDGE_INVALID("buffer %u (%s): image %ux%u texels of %s overflow this machine's sizes", i, name,
                              buf->image_width(), buf->image_height(),
                              enum_name(kDTypeNames, static_cast<uint32_t>(buf->dtype())));
        if (buf->kind() == BufferKind::Arena && !range_inside(buf->offset(), padded, b->arena_size()))
          return EDGE_INVALID("buffer %u (%s): image %ux%u at arena offset %" PRIu64 " exceeds arena_size %" PRIu64,
                              i, name, buf->image_width(), buf->image_height(), buf->offset(), b->arena_size());
        break;
      }
      default:
        return EDGE_INVALID("buffer %u (%s): unknown memory space %u", i, name,
                            static_cast<unsigned>(buf->memory()));
    }
    switch (buf->kind()) {
      case BufferKind::Arena:
        if (buf->offset() % align != 0)
          return EDGE_INVALID("buffer %u (%s): arena offset %" PRIu64
                              " is not a multiple of arena_alignment %u",
                              i, name, buf->offset(), align);
        if (!range_inside(buf->offset(), buf->size(), b->arena_size()))
          return EDGE_INVALID("buffer %u (%s): arena range [%" PRIu64 ", +%" PRIu64
                              ") exceeds arena_size %" PRIu64,
                              i, name, buf->offset(), buf->size(), b->arena_size());
        break;
      case BufferKind::Weight: {
        if (buf->section() >= num_sections)
          return EDGE_INVALID("buffer %u (%s): section %u out of range (%u sections)", i, name,
                              buf->section(), num_sections);
        const Section* s = b->sections()->Get(buf->section());
        if (s->kind() != SectionKind::Weights && s->kind() != SectionKind::ReferenceIO)
          return EDGE_INVALID("buffer %u (%s): section %u is not a Weights or ReferenceIO section",
                              i, name, buf->section());
        if (!range_inside(buf->offset(), buf->size(), s->size()))
          return EDGE_INVALID("buffer %u (%s): range [%" PRIu64 ", +%" PRIu64
                              ") exceeds section %u (%" PRIu64 " bytes)",
                              i, name, buf->offset(), buf->size(), buf->section(), s->size());
        // Like an arena offset: kernels may load weights with aligned vector loads (and load
        // elements at their natural alignment, a trap on some CPUs otherwise).
        if (buf->offset() % kSectionAlignment != 0)
          return EDGE_INVALID("buffer %u (%s): offset %" PRIu64 " in section %u is not a multiple of %" PRIu64, i,
                              name, buf->offset(), buf->section(), kSectionAlignment);
        break;
      }
      case BufferKind::Input:
      case BufferKind::Output: {
        const bool is_input = buf->kind() == BufferKind::Input;
        const auto* tensors = is_input ? b->inputs() : b->outputs();
        const char* what = is_input ? "input" : "output";
        if (buf->io_index() >= count(tensors))
          return EDGE_INVALID("buffer %u (%s): io_index %u out of range (%u %ss)", i, name,
                              buf->io_index(), count(tensors), what);
        if (tensors->Get(buf->io_index())->buffer() != i)
          return EDGE_INVALID("buffer %u (%s): %s %u does not refer back to it", i, name, what,
                              buf->io_index());
        break;
      }
      default:
        return EDGE_INVALID("buffer %u (%s): unknown kind %u", i, name,
                            static_cast<unsigned>(buf->kind()));
    }
  }
  return check_weights_disjoint(b);
}

// ---- inputs and outputs: what the caller binds ----

const char* name_of(const void* tensors, uint32_t i) {
  return str(static_cast<const flatbuffers::Vector<flatbuffers::Offset<TensorInfo>>*>(tensors)->Get(i)->name());
}

bool name_less(const void* tensors, uint32_t x, uint32_t y) {
  const int c = std::strcmp(name_of(tensors, x), name_of(tensors, y));
  return c < 0 || (c == 0 && x < y);
}

edgert_status check_tensors(const Bundle* b, bool inputs) {
  const auto* tensors = inputs ? b->inputs() : b->outputs();
  const char* what = inputs ? "input" : "output";
  const BufferKind want = inputs ? BufferKind::Input : BufferKind::Output;
  if (count(tensors) > static_cast<uint32_t>(INT32_MAX)) return EDGE_INVALID("too many %ss", what);
  for (uint32_t i = 0; i < count(tensors); ++i) {
    const TensorInfo* t = tensors->Get(i);
    if (!t->name() || t->name()->size() == 0) return EDGE_INVALID("%s %u has no name", what, i);
    const char* name = t->name()->c_str();
    if (std::strlen(name) != t->name()->size())
      return EDGE_INVALID("%s %u: name contains a NUL byte", what, i);
    if (!valid_dtype(t->dtype()))
      return EDGE_INVALID("%s %u (%s): unknown dtype %u", what, i, name,
                          static_cast<unsigned>(t->dtype()));
    if (misaligned(t->shape()))
      return EDGE_INVALID("%s %u (%s): shape vector is not 8-byte aligned", what, i, name);
    if (count(t->shape()) > edge::limits::kMaxRank)
      return EDGE_INVALID("%s %u (%s): rank %u exceeds %u", what, i, name, count(t->shape()),
                          edge::limits::kMaxRank);
    uint64_t bytes = 0;
    if (!shape_bytes(t->shape(), t->dtype(), &bytes) || bytes > SIZE_MAX)
      return EDGE_INVALID("%s %u (%s): shape has a negative or overflowing dimension", what, i,
                          name);
    if (t->buffer() >= count(b->buffers()))
      return EDGE_INVALID("%s %u (%s): buffer %u out of range (%u buffers)", what, i, name,
                          t->buffer(), count(b->buffers()));
    const Buffer* buf = b->buffers()->Get(t->buffer());
    if (buf->kind() != want || buf->io_index() != i)
      return EDGE_INVALID("%s %u (%s): buffer %u is not %s buffer with io_index %u", what, i, name,
                          t->buffer(), inputs ? "an Input" : "an Output", i);
    if (buf->dtype() != t->dtype() || !same_shape(buf->shape(), t->shape()))
      return EDGE_INVALID("%s %u (%s): dtype or shape differs from buffer %u", what, i, name,
                          t->buffer());
    // Same dtype and shape: check_buffers made the buffer's size product(shape) * dtype size.
  }
  // Unique names: sort the indices by name, then compare neighbours (O(n log n); 40,000
  // inputs took seconds pairwise).
  const uint32_t n = count(tensors);
  Scratch scratch(size_t{n} * sizeof(uint32_t));
  uint32_t* order = static_cast<uint32_t*>(scratch.p);
  if (!order) return out_of_memory("tensor names");
  for (uint32_t i = 0; i < n; ++i) order[i] = i;
  sort_indices(order, n, name_less, tensors);
  for (uint32_t k = 1; k < n; ++k)
    if (std::strcmp(name_of(tensors, order[k - 1]), name_of(tensors, order[k])) == 0)
      return EDGE_INVALID("%s %u (%s): name already used by %s %u", what, order[k],
                          name_of(tensors, order[k]), what, order[k - 1]);
  return EDGERT_OK;
}

// ---- kernels and the command queue ----

// Kernel.args of a MachineCode kernel against the contract its code directory holds for its
// function (check_machine_code read the directory): the same arguments, access, dtypes and
// extents, so the commands the verifier holds to Kernel.args satisfy the code.
edgert_status check_code_contract(const Kernel* k, uint32_t i, const edge::abi::CodeDirectory& dir) {
  const edge::abi::CodeDirectoryEntry e = dir.entry(k->function());
  if (e.num_args != count(k->args()))
    return EDGE_INVALID("kernel %u (%s): Kernel.args has %u arguments, but the code of function %u takes %" PRIu64, i,
                        str(k->name()), count(k->args()), k->function(), e.num_args);
  for (uint32_t a = 0; a < count(k->args()); ++a) {
    const ArgContract* want = k->args()->Get(a);
    const uint64_t word = dir.contract_word(e, 2 * a), extent = dir.contract_word(e, 2 * a + 1);
    if (word != edge::abi::contract_arg_word(static_cast<uint32_t>(want->access()), static_cast<uint32_t>(want->dtype())) ||
        extent != want->extent())
      return EDGE_INVALID("kernel %u (%s): Kernel.args[%u] (%s %s over %" PRIu64 " bytes) differs from the contract "
                          "of its code (word 0x%" PRIx64 ", %" PRIu64 " bytes)",
                          i, str(k->name()), a, enum_name(kArgAccessNames, static_cast<uint32_t>(want->access())),
                          enum_name(kDTypeNames, static_cast<uint32_t>(want->dtype())),
                          want->extent(), word, extent);
  }
  return EDGERT_OK;
}

edgert_status check_kernels(const Bundle* b, const uint8_t* data) {
  // The directory of the MachineCode section the last kernel named: read once per section,
  // not once per kernel (reading checks every entry: per kernel it made opening quadratic in
  // the number of kernels).
  edge::abi::CodeDirectory dir{};
  uint32_t dir_section = UINT32_MAX;
  for (uint32_t i = 0; i < count(b->kernels()); ++i) {
    const Kernel* k = b->kernels()->Get(i);
    const char* name = str(k->name());
    if (k->section() >= count(b->sections()))
      return EDGE_INVALID("kernel %u (%s): section %u out of range (%u sections)", i, name,
                          k->section(), count(b->sections()));
    const Section* s = b->sections()->Get(k->section());
    if (s->kind() != SectionKind::Code)
      return EDGE_INVALID("kernel %u (%s): section %u is not a Code section", i, name,
                          k->section());
    switch (s->format()) {
      case CodeFormat::MachineCode: {
        if (k->function() >= count(s->functions()))
          return EDGE_INVALID("kernel %u (%s): function %u is not in section %u's function table (%u functions)",
                              i, name, k->function(), k->section(), count(s->functions()));
        if (k->section() != dir_section) {  // check_machine_code read it without fault
          edge::abi::read_code_directory(data + s->offset(), s->size(), edge::abi::kFunctionAlignment, &dir);
          dir_section = k->section();
        }
        edgert_status st = check_code_contract(k, i, dir);
        if (st != EDGERT_OK) return st;
        break;
      }
      case CodeFormat::OpenCLC: {
        const flatbuffers::String* entry = k->entry_name();
        if (!entry || entry->size() == 0 || std::strlen(entry->c_str()) != entry->size())
          return EDGE_INVALID("kernel %u (%s): entry_name is missing or contains a NUL byte", i, name);
        break;
      }
      case CodeFormat::Ir3A630: {
        edgert_status st = check_a630_kernel(k, i, s);
        if (st != EDGERT_OK) return st;
        break;
      }
      default:
        return EDGE_INVALID("kernel %u (%s): section %u has format %s; kernels name a MachineCode, "
                            "OpenCLC or Ir3A630 section",
                            i, name, k->section(), enum_name(kCodeFormatNames, static_cast<uint32_t>(s->format())));
    }
    for (uint32_t a = 0; a < count(k->args()); ++a) {
      const ArgContract* c = k->args()->Get(a);
      if (c->access() > ArgAccess::MAX || !valid_dtype(c->dtype()))
        return EDGE_INVALID("kernel %u (%s): args[%u]: unknown access %u or dtype %u", i, name, a,
                            static_cast<unsigned>(c->access()), static_cast<unsigned>(c->dtype()));
    }
    if (misaligned(k->global_size()) || misaligned(k->local_size()))
      return EDGE_INVALID("kernel %u (%s): global_size or local_size vector is not 8-byte aligned",
                          i, name);
    const uint32_t dims = count(k->global_size());
    if (dims > edge::abi::kMaxLaunchDims || (count(k->local_size()) != 0 && count(k->local_size()) != dims))
      return EDGE_INVALID("kernel %u (%s): global_size has %u dims and local_size %u (at most %d, same rank)",
                          i, name, dims, count(k->local_size()), edge::abi::kMaxLaunchDims);
    for (uint32_t d = 0; d < dims; ++d) {
      const uint64_t g = k->global_size()->Get(d);
      const uint64_t l = count(k->local_size()) ? k->local_size()->Get(d) : 1;
      if (g == 0 || g > edge::limits::kMaxLaunchSize || l == 0 || g % l != 0)
        return EDGE_INVALID("kernel %u (%s): dim %u: global size %" PRIu64 " / local size %" PRIu64
                            " is not a positive multiple below 2^32",
                            i, name, d, g, l);
    }
    if (s->format() == CodeFormat::OpenCLC && dims == 0)
      return EDGE_INVALID("kernel %u (%s): an OpenCL kernel needs a global_size", i, name);
  }
  return EDGERT_OK;
}

// The buffer a command writes must be writable memory, not the mapped file or caller input.
edgert_status check_writable(const Bundle* b, uint32_t cmd, uint32_t buffer) {
  const Buffer* buf = b->buffers()->Get(buffer);
  if (buf->kind() == BufferKind::Weight || buf->kind() == BufferKind::Input)
    return EDGE_INVALID("command %u writes buffer %u (%s), which is %s buffer", cmd, buffer,
                        buffer_name(buf),
                        buf->kind() == BufferKind::Weight ? "a Weight" : "an Input");
  return EDGERT_OK;
}

// Whether command c writes its arg a: a Copy its destination, a Launch what its kernel's
// contract says (kernel index and arg count checked before).
bool writes_arg(const Bundle* b, const Command* c, uint32_t a) {
  if (c->kind() == CommandKind::Copy) return a == 1;
  return b->kernels()->Get(c->kernel())->args()->Get(a)->access() == ArgAccess::Write;
}

// A Launch's buffers against its kernel's argument contracts: as many as the contract
// lists, each of the contract's dtype and at least its extent, written ones writable (that
// they are passed only once is checked with the dataflow, in linear time).
edgert_status check_launch_args(const Bundle* b, uint32_t i, const Command* c) {
  const Kernel* k = b->kernels()->Get(c->kernel());
  const uint32_t num_args = count(c->args());
  if (num_args != count(k->args()))
    return EDGE_INVALID("command %u: %u args, but kernel %u (%s) has %u argument contracts", i, num_args,
                        c->kernel(), str(k->name()), count(k->args()));
  for (uint32_t a = 0; a < num_args; ++a) {
    const ArgContract* want = k->args()->Get(a);
    const uint32_t id = c->args()->Get(a);
    const Buffer* buf = b->buffers()->Get(id);
    if (buf->dtype() != want->dtype() || buf->size() < want->extent())
      return EDGE_INVALID("command %u: arg %u is buffer %u (%s, %s, %" PRIu64 " bytes), but kernel %u (%s) %s %s "
                          "over %" PRIu64 " bytes",
                          i, a, id, buffer_name(buf), enum_name(kDTypeNames, static_cast<uint32_t>(buf->dtype())), buf->size(), c->kernel(),
                          str(k->name()), want->access() == ArgAccess::Write ? "writes" : "reads",
                          enum_name(kDTypeNames, static_cast<uint32_t>(want->dtype())), want->extent());
    if (want->access() != ArgAccess::Write) continue;
    edgert_status st = check_writable(b, i, id);
    if (st != EDGERT_OK) return st;
  }
  return EDGERT_OK;
}

// When a command touches a buffer, in queue time: command c reads and writes at 2c + 1 (a
// kernel reads its inputs while it writes its output), except that a Copy reads at 2c (a
// memmove: its source and destination may overlap). 0 is never a write time, so a zeroed
// Life means "never written".
struct Life {
  uint32_t first_write;   // time of the first write, 0 if none
  uint32_t last;          // time of the last read or write
  uint32_t written_by;    // 1 + the Launch command that last wrote it (aliasing check)
  uint32_t written_arg;   // and as which arg
  uint32_t unread_write;  // 1 + the command whose write no command has read yet, 0 if none
  uint32_t read;          // 1 once a command read it
};

// Counts of live buffers by offset rank (a Fenwick tree): finds the live neighbours in memory
// of a buffer in O(log n).
struct LiveSet {
  uint32_t* t;
  uint32_t n, top;  // top: the largest power of two <= n
  void add(uint32_t r, uint32_t d) {
    for (++r; r <= n; r += r & (0u - r)) t[r - 1] += d;
  }
  uint32_t below(uint32_t r) const {  // live ranks < r
    uint32_t c = 0;
    for (; r; r -= r & (0u - r)) c += t[r - 1];
    return c;
  }
  uint32_t kth(uint32_t k) const {  // rank of the k-th live buffer, k >= 1
    uint32_t pos = 0;
    for (uint32_t s = top; s; s >>= 1)
      if (pos + s <= n && t[pos + s - 1] < k) k -= t[(pos += s) - 1];
    return pos;
  }
};

// An arena buffer that is used: its bytes [lo, hi) (an Image2D owns its padded texels) and
// its lifetime [first, last] in queue time.
struct Span {
  uint64_t lo, hi, first, last;
  uint32_t id;
};

template <uint64_t Span::*key>
bool span_less(const void* spans, uint32_t x, uint32_t y) {
  const Span* s = static_cast<const Span*>(spans);
  return s[x].*key < s[y].*key || (s[x].*key == s[y].*key && x < y);
}

// Arena buffers live at the same time must not share bytes; the compiler's planner reuses
// memory only between disjoint lifetimes. Sweep over time with the live set ordered by
// offset: live buffers never overlap, so a new one need only be compared with its
// neighbours. O(n log n).
edgert_status check_arena_overlap(const Bundle* b, const Life* life) {
  const uint32_t n = count(b->buffers());
  Scratch scratch(size_t{n} * (sizeof(Span) + 5 * sizeof(uint32_t)));
  if (!scratch.p) return out_of_memory("the arena");
  Span* span = static_cast<Span*>(scratch.p);
  uint32_t* by_start = reinterpret_cast<uint32_t*>(span + n);
  uint32_t* by_end = by_start + n;
  uint32_t* by_offset = by_end + n;
  uint32_t* rank = by_offset + n;
  uint32_t m = 0;  // used arena buffers that own bytes
  for (uint32_t id = 0; id < n; ++id) {
    const Buffer* buf = b->buffers()->Get(id);
    if (buf->kind() != BufferKind::Arena || life[id].first_write == 0) continue;
    uint64_t bytes = buf->size();
    if (buf->memory() == MemorySpace::Image2D) {  // no overflow: checked in check_buffers
      const uint64_t padded = uint64_t{buf->image_width()} * buf->image_height() *
                              edge::abi::kImageChannels * dtype_size(static_cast<uint32_t>(buf->dtype()));
      if (padded > bytes) bytes = padded;
    }
    if (bytes == 0) continue;
    span[m] = {buf->offset(), buf->offset() + bytes, life[id].first_write, life[id].last, id};
    by_start[m] = by_end[m] = by_offset[m] = m;
    ++m;
  }
  LiveSet live{rank + n, m, 1};
  while (live.top <= m / 2) live.top *= 2;
  sort_indices(by_start, m, span_less<&Span::first>, span);
  sort_indices(by_end, m, span_less<&Span::last>, span);
  sort_indices(by_offset, m, span_less<&Span::lo>, span);
  for (uint32_t r = 0; r < m; ++r) rank[by_offset[r]] = r;
  uint32_t ended = 0, num_live = 0;
  for (uint32_t k = 0; k < m; ++k) {
    const Span& s = span[by_start[k]];
    // Those that ended before this one starts (all started earlier) leave the live set.
    for (; span[by_end[ended]].last < s.first; ++ended, --num_live) live.add(rank[by_end[ended]], ~0u);
    // Its neighbours in the live set by offset: the below-th and the (below + 1)-th.
    const uint32_t below = live.below(rank[by_start[k]]);
    for (uint32_t nb = below ? below : 1; nb <= below + 1 && nb <= num_live; ++nb) {
      const Span& o = span[by_offset[live.kth(nb)]];
      if (o.lo < s.hi && s.lo < o.hi)
        return EDGE_INVALID("buffer %u (%s): arena bytes [%" PRIu64 ", %" PRIu64 ") overlap buffer %u (%s) [%" PRIu64
                            ", %" PRIu64 ") while both are live (commands %u-%u and %u-%u)",
                            s.id, buffer_name(b->buffers()->Get(s.id)), s.lo, s.hi, o.id,
                            buffer_name(b->buffers()->Get(o.id)), o.lo, o.hi, unsigned(s.first / 2),
                            unsigned(s.last / 2), unsigned(o.first / 2), unsigned(o.last / 2));
    }
    live.add(rank[by_start[k]], 1);
    ++num_live;
  }
  return EDGERT_OK;
}

edgert_status check_commands(const Bundle* b) {
  const uint32_t num_buffers = count(b->buffers());
  // Times fit in 32 bits: a FlatBuffer (< 2 GiB) holds fewer than 2^31 commands.
  Scratch scratch(size_t{num_buffers} * sizeof(Life));
  Life* life = static_cast<Life*>(scratch.p);
  if (!life) return out_of_memory("the command queue");
  struct {
    uint32_t cmd, arg, id, by;  // cmd: 1 + the first command that overwrites an unread value
  } overwrite = {0, 0, 0, 0};
  // 1 + the last command before this one that is no Timestamp, if it was a Launch.
  uint32_t prev_launch = 0, prev_kernel = 0;
  for (uint32_t i = 0; i < count(b->commands()); ++i) {
    const Command* c = b->commands()->Get(i);
    const uint32_t num_args = count(c->args());
    if (c->kind() != CommandKind::Timestamp) {
      for (uint32_t a = 0; a < num_args; ++a)
        if (c->args()->Get(a) >= num_buffers)
          return EDGE_INVALID("command %u: arg %u is buffer %u, out of range (%u buffers)", i, a,
                              c->args()->Get(a), num_buffers);
    }
    switch (c->kind()) {
      case CommandKind::Launch: {
        if (c->kernel() >= count(b->kernels()))
          return EDGE_INVALID("command %u: kernel %u out of range (%u kernels)", i, c->kernel(),
                              count(b->kernels()));
        edgert_status st = check_launch_args(b, i, c);
        if (st != EDGERT_OK) return st;
        break;
      }
      case CommandKind::Copy: {
        if (num_args != 2)
          return EDGE_INVALID("command %u: Copy has %u args, needs 2", i, num_args);
        const Buffer* src = b->buffers()->Get(c->args()->Get(0));
        const Buffer* dst = b->buffers()->Get(c->args()->Get(1));
        if (src->size() != dst->size())
          return EDGE_INVALID("command %u: Copy from %s (%" PRIu64 " bytes) to %s (%" PRIu64
                              " bytes): sizes differ",
                              i, buffer_name(src), src->size(), buffer_name(dst), dst->size());
        edgert_status st = check_writable(b, i, c->args()->Get(1));
        if (st != EDGERT_OK) return st;
        break;
      }
      case CommandKind::Timestamp: continue;
      default:
        return EDGE_INVALID("command %u: unknown kind %u", i, static_cast<unsigned>(c->kind()));
    }
    // Dataflow: an Arena or Output buffer is read only after some command wrote it (else a
    // queue missing a command runs on stale bytes), and no buffer a kernel writes is also
    // another of its args (check_launch_args). Reads before writes: a Copy may overlap.
    const bool copy = c->kind() == CommandKind::Copy;
    const uint32_t write_time = 2 * i + 1, read_time = copy ? 2 * i : write_time;
    // A buffer a kernel writes is none of its other args (it would read its own output).
    for (uint32_t pass = 0; !copy && pass < 2; ++pass)  // the written args, then the read ones
      for (uint32_t a = 0; a < num_args; ++a) {
        if (writes_arg(b, c, a) != (pass == 0)) continue;
        Life& l = life[c->args()->Get(a)];
        if (l.written_by == i + 1)
          return EDGE_INVALID("command %u: arg %u is buffer %u (%s), which arg %u writes", i, a,
                              c->args()->Get(a), buffer_name(b->buffers()->Get(c->args()->Get(a))), l.written_arg);
        if (pass == 0) l.written_by = i + 1, l.written_arg = a;
      }
    for (uint32_t a = 0; a < num_args; ++a) {
      if (writes_arg(b, c, a)) continue;
      const uint32_t id = c->args()->Get(a);
      const BufferKind kind = b->buffers()->Get(id)->kind();
      if ((kind == BufferKind::Arena || kind == BufferKind::Output) && life[id].first_write == 0)
        return EDGE_INVALID("command %u: arg %u reads buffer %u (%s) before any command writes it", i,
                            a, id, buffer_name(b->buffers()->Get(id)));
      life[id].last = read_time;  // times only grow
      life[id].unread_write = 0;
      life[id].read = 1;
    }
    // The compiler computes nothing it does not use: a value is read before it is written
    // again (else a command's output is thrown away: a queue edited to feed a kernel other
    // values than the model's). Reported after the overlap check.
    // Launches of different kernels in a row may each write a part of one buffer (the
    // pieces of a kernel split along its output: edgec's split_at_part_boundaries); the
    // value is read after the last of them.
    const bool next_piece = c->kind() == CommandKind::Launch && prev_launch != 0 && prev_kernel != c->kernel();
    for (uint32_t a = 0; a < num_args; ++a) {
      if (!writes_arg(b, c, a)) continue;
      const uint32_t id = c->args()->Get(a);
      const bool piece = next_piece && life[id].unread_write == prev_launch;
      if (life[id].unread_write != 0 && !piece && !overwrite.cmd) overwrite = {i + 1, a, id, life[id].unread_write - 1};
      if (life[id].first_write == 0) life[id].first_write = write_time;
      life[id].last = write_time;
      life[id].unread_write = i + 1;
    }
    prev_launch = c->kind() == CommandKind::Launch ? i + 1 : 0;
    prev_kernel = c->kind() == CommandKind::Launch ? c->kernel() : 0;
  }
  for (uint32_t id = 0; id < num_buffers; ++id) {
    const Buffer* buf = b->buffers()->Get(id);
    if (buf->kind() == BufferKind::Output && life[id].first_write == 0)
      return EDGE_INVALID("buffer %u (%s): output %u is never written by any command", id,
                          buffer_name(buf), buf->io_index());
  }
  edgert_status st = check_arena_overlap(b, life);
  if (st != EDGERT_OK) return st;
  if (overwrite.cmd)
    return EDGE_INVALID("command %u: arg %u overwrites buffer %u (%s), which command %u wrote and no command read",
                        overwrite.cmd - 1, overwrite.arg, overwrite.id, buffer_name(b->buffers()->Get(overwrite.id)),
                        overwrite.by);
  // Every intermediate that is computed and every weight is used (reference data is not).
  for (uint32_t id = 0; id < num_buffers; ++id) {
    const Buffer* buf = b->buffers()->Get(id);
    if (buf->kind() == BufferKind::Arena && life[id].unread_write != 0)
      return EDGE_INVALID("buffer %u (%s): command %u writes it, but no command reads it", id, buffer_name(buf),
                          life[id].unread_write - 1);
    if (buf->kind() == BufferKind::Weight && !life[id].read &&
        b->sections()->Get(buf->section())->kind() == SectionKind::Weights)
      return EDGE_INVALID("buffer %u (%s): a weight that no command reads", id, buffer_name(buf));
  }
  return EDGERT_OK;
}

// Reference data (edgec --embed-reference): none, or one buffer per input and per output
// holding a value of exactly that tensor's dtype and shape, in a ReferenceIO section, at an
// offset the element type can be read from (edgert_bundle_reference hands out pointers).
edgert_status check_reference(const Bundle* b) {
  const uint32_t num_in = count(b->reference_inputs()), num_out = count(b->reference_outputs());
  if (num_in == 0 && num_out == 0) return EDGERT_OK;
  for (int l = 0; l < 2; ++l) {
    const flatbuffers::Vector<uint32_t>* list = l == 0 ? b->reference_inputs() : b->reference_outputs();
    const auto* tensors = l == 0 ? b->inputs() : b->outputs();
    const char* what = l == 0 ? "input" : "output";
    if (count(list) != count(tensors))
      return EDGE_INVALID("reference_%ss has %u entries for %u %ss", what, count(list), count(tensors), what);
    for (uint32_t i = 0; i < count(list); ++i) {
      const uint32_t idx = list->Get(i);
      const Buffer* buf = idx < count(b->buffers()) ? b->buffers()->Get(idx) : nullptr;
      // check_buffers checked a Weight buffer's section index, range and alignment.
      if (!buf || buf->kind() != BufferKind::Weight ||
          b->sections()->Get(buf->section())->kind() != SectionKind::ReferenceIO)
        return EDGE_INVALID("reference_%ss %u: buffer %u is not a Weight buffer in a ReferenceIO section", what, i,
                            idx);
      const TensorInfo* t = tensors->Get(i);
      if (buf->dtype() != t->dtype() || !same_shape(buf->shape(), t->shape()) ||
          buf->memory() != MemorySpace::Global)
        return EDGE_INVALID("reference_%ss %u: buffer %u (%s) differs in dtype or shape from %s %u (%s)", what, i,
                            idx, buffer_name(buf), what, i, str(t->name()));
    }
  }
  // Negated comparisons: a NaN fails them too.
  if (!(b->reference_rtol() >= 0 && b->reference_rtol() <= 1e30f) ||
      !(b->reference_atol() >= 0 && b->reference_atol() <= 1e30f))
    return EDGE_INVALID("reference_rtol %g / reference_atol %g: not finite and non-negative",
                        static_cast<double>(b->reference_rtol()), static_cast<double>(b->reference_atol()));
  return EDGERT_OK;
}

// Last of all, when every field has been checked on its own: each code directory's digest of
// the FlatBuffer it was compiled with. A field edited alone (a swap no rule can tell from a
// real bundle) is refused here, so in unsigned mode the FlatBuffer changes only with the code.
edgert_status check_flatbuffer_digest(const Bundle* b, const uint8_t* data, const uint8_t* fb, uint64_t fb_size) {
  const uint64_t digest = edge::abi::flatbuffer_digest(fb, static_cast<size_t>(fb_size));  // KBs: cheap
  for (uint32_t i = 0; i < count(b->sections()); ++i) {
    const Section* s = b->sections()->Get(i);
    if (s->format() != CodeFormat::MachineCode) continue;
    edge::abi::CodeDirectoryHeader dir;
    std::memcpy(&dir, data + s->offset(), sizeof dir);  // check_sections read the directory
    if (dir.flatbuffer_digest != digest)
      return EDGE_INVALID("section %u: its code directory was compiled with another FlatBuffer (digest %016" PRIx64
                          ", the FlatBuffer's %016" PRIx64 "): a field was edited after compilation",
                          i, dir.flatbuffer_digest, digest);
  }
  return EDGERT_OK;
}

#undef EDGE_INVALID

}  // namespace

edgert_status verify_bundle(const uint8_t* file, size_t file_size, bool signature_checked,
                            const Bundle** out_root, const uint8_t** out_data, size_t* out_data_size) {
  BundleHeader h;
  edgert_status st = check_header(file, file_size, signature_checked, &h);
  if (st != EDGERT_OK) return st;
  const Bundle* root = nullptr;
  if ((st = check_flatbuffer(file + h.fb_offset, h.fb_size, &root)) != EDGERT_OK) return st;
  const uint8_t* data = file + h.data_offset;
  // A bundle this runtime cannot run (UNSUPPORTED: another machine, a port not compiled in)
  // is still checked whole, so that a malformed one is INVALID everywhere and a tool that
  // only inspects it (edgec inspect) reads verified fields; the UNSUPPORTED comes last.
  const edgert_status target = check_target(root);
  if (target != EDGERT_OK && target != EDGERT_ERROR_UNSUPPORTED) return target;
  char unsupported[512] = "";
  if (target == EDGERT_ERROR_UNSUPPORTED) std::snprintf(unsupported, sizeof unsupported, "%s", edgert_last_error());
  if ((st = check_sections(root, data, h.data_size)) != EDGERT_OK) return st;
  if ((st = check_buffers(root)) != EDGERT_OK) return st;
  if ((st = check_tensors(root, /*inputs=*/true)) != EDGERT_OK) return st;
  if ((st = check_tensors(root, /*inputs=*/false)) != EDGERT_OK) return st;
  if ((st = check_kernels(root, data)) != EDGERT_OK) return st;
  if ((st = check_commands(root)) != EDGERT_OK) return st;
  if ((st = check_reference(root)) != EDGERT_OK) return st;
  if ((st = check_flatbuffer_digest(root, data, file + h.fb_offset, h.fb_size)) != EDGERT_OK) return st;
  if (target != EDGERT_OK) return set_error(EDGERT_ERROR_UNSUPPORTED, "%s", unsupported);
  *out_root = root;
  *out_data = data;
  *out_data_size = static_cast<size_t>(h.data_size);
  return EDGERT_OK;
}

}  // namespace edgert
