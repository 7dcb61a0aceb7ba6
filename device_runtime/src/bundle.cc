// bundle.cc — opening a bundle (private copy, mapping or caller memory), its signature check
// and verification, and the queries on inputs and outputs. Everything read here was checked
// by verify_bundle at open.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>

#include "internal.h"
#include "port.h"

namespace {

using edge::bundle::TensorInfo;

constexpr uint32_t kKnownFlags = EDGERT_OPEN_MAP_IN_PLACE | EDGERT_OPEN_FSVERITY;

// The options themselves, before anything of the file is read. `from_file`: the open of a
// path (EDGERT_OPEN_FSVERITY asks the kernel about a file, there is none behind memory).
edgert_status check_options(const edgert_open_options* options, bool from_file) {
  if (!options) return EDGERT_OK;
  if ((options->flags & ~kKnownFlags) != 0)
    return edgert::set_error(EDGERT_ERROR_INVALID_ARGUMENT, "edgert_open_options: unknown flags 0x%x",
                             options->flags & ~kKnownFlags);
  if (options->num_trusted_keys > 0 && !options->trusted_public_keys)
    return edgert::set_error(EDGERT_ERROR_INVALID_ARGUMENT,
                             "edgert_open_options: num_trusted_keys %zu but trusted_public_keys is null",
                             options->num_trusted_keys);
  if (!(options->flags & EDGERT_OPEN_FSVERITY)) return EDGERT_OK;
  if (!from_file)
    return edgert::set_error(EDGERT_ERROR_INVALID_ARGUMENT,
                             "edgert_open_options: EDGERT_OPEN_FSVERITY applies to a file "
                             "(edgert_bundle_open_with_options), not to memory");
  if (options->num_trusted_keys == 0)
    return edgert::set_error(EDGERT_ERROR_INVALID_ARGUMENT,
                             "edgert_open_options: EDGERT_OPEN_FSVERITY is signed mode, but num_trusted_keys is 0");
  if (!options->fsverity_signature)
    return edgert::set_error(EDGERT_ERROR_INVALID_ARGUMENT,
                             "edgert_open_options: EDGERT_OPEN_FSVERITY but fsverity_signature is null");
  return EDGERT_OK;
}

// Signed mode first (nothing of the bundle is parsed before its signature holds), then the
// verifier; the bundle object refers to `file` from here on. `fsverity_checked`: the
// detached signature of the file's fs-verity digest held (check_fsverity_signature), which
// stands in for the trailer and for every hash of the file's bytes.
edgert_status open_verified(const uint8_t* file, size_t size, const edgert_open_options* options,
                            bool owns_mapping, bool fsverity_checked, edgert_bundle** out) {
  const bool signed_mode = options && options->num_trusted_keys > 0;
  edgert_status st = EDGERT_OK;
  if (signed_mode && !fsverity_checked &&
      (st = edgert::check_signature(file, size, options->trusted_public_keys, options->num_trusted_keys)) != EDGERT_OK)
    return st;
  const edge::bundle::Bundle* root = nullptr;
  const uint8_t* data = nullptr;
  size_t data_size = 0;
  st = edgert::verify_bundle(file, size, signed_mode, &root, &data, &data_size);
  if (st != EDGERT_OK) return st;
  // calloc + placement new rather than operator new: the runtime needs only libc.
  void* mem = std::calloc(1, sizeof(edgert_bundle));
  if (!mem) return edgert::set_error(EDGERT_ERROR_OUT_OF_MEMORY, "out of memory opening bundle");
  edgert_bundle* b = new (mem) edgert_bundle;
  b->file = file;
  b->file_size = size;
  b->owns_mapping = owns_mapping;
  b->root = root;
  b->data = data;
  b->data_size = data_size;
  b->port = edgert::find_port(root->target()->port()->c_str());  // verified: present
  *out = b;
  return EDGERT_OK;
}

// The file's bytes in fresh anonymous pages, read once and then made read-only: what is
// verified is what runs, whatever happens to the file afterwards (MAP_PRIVATE alone does not
// give that on Linux: pages not yet written by us still follow the file, and a truncated
// file faults with SIGBUS). Page-aligned like a mapping, for sections aligned up to a page.
edgert_status private_copy(int fd, size_t size, const char* path, void** out) {
  void* mem = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED)
    return edgert::set_error(EDGERT_ERROR_OUT_OF_MEMORY, "out of memory copying %s (%zu bytes)", path, size);
#ifdef MADV_HUGEPAGE
  // Filling fresh pages is most of the copy's cost: 2 MB pages where the kernel has them
  // (transparent huge pages in "madvise" mode) take a fault per 2 MB instead of per 4 KB.
  madvise(mem, size, MADV_HUGEPAGE);
#endif
  for (size_t done = 0; done < size;) {
    const ssize_t n = pread(fd, static_cast<uint8_t*>(mem) + done, size - done, static_cast<off_t>(done));
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    const int err = errno;
    munmap(mem, size);
    if (n == 0)  // shrank while we read it
      return edgert::set_error(EDGERT_ERROR_IO, "%s shrank to %zu bytes while being read (was %zu)", path,
                               done, size);
    return edgert::set_error(EDGERT_ERROR_IO, "cannot read %s: %s", path, std::strerror(err));
  }
  mprotect(mem, size, PROT_READ);  // like the mapping it replaces: nothing writes through
  *out = mem;
  return EDGERT_OK;
}

const TensorInfo* tensor_at(const edgert_bundle* bundle, int32_t index, bool input) {
  if (!bundle || index < 0) return nullptr;
  const auto* v = input ? bundle->root->inputs() : bundle->root->outputs();
  if (!v || static_cast<uint32_t>(index) >= v->size()) return nullptr;
  return v->Get(static_cast<uint32_t>(index));
}

edgert_status tensor_info(const edgert_bundle* bundle, int32_t index, bool input,
                          edgert_tensor_info* out) {
  const TensorInfo* t = tensor_at(bundle, index, input);
  if (!t || !out)
    return edgert::set_error(EDGERT_ERROR_INVALID_ARGUMENT, "%s index %d out of range",
                             input ? "input" : "output", index);
  std::memset(out, 0, sizeof(*out));
  out->name = t->name()->c_str();
  out->dtype = static_cast<edgert_dtype>(t->dtype());
  size_t bytes = edgert::dtype_size(static_cast<uint32_t>(t->dtype()));
  const auto* shape = t->shape();
  out->rank = shape ? static_cast<int32_t>(shape->size()) : 0;
  for (int32_t i = 0; i < out->rank; ++i) {
    out->shape[i] = shape->Get(static_cast<uint32_t>(i));
    bytes *= static_cast<size_t>(out->shape[i]);  // no overflow: checked at open
  }
  out->size_bytes = bytes;
  return EDGERT_OK;
}

int32_t find_tensor(const edgert_bundle* bundle, const char* name, bool input) {
  if (!bundle || !name) return -1;
  const auto* v = input ? bundle->root->inputs() : bundle->root->outputs();
  for (uint32_t i = 0; v && i < v->size(); ++i)
    if (std::strcmp(v->Get(i)->name()->c_str(), name) == 0) return static_cast<int32_t>(i);
  return -1;
}

}  // namespace

extern "C" {

edgert_status edgert_bundle_open(const char* path, edgert_bundle** out_bundle) {
  return edgert_bundle_open_with_options(path, nullptr, out_bundle);
}

edgert_status edgert_bundle_open_with_options(const char* path, const edgert_open_options* options,
                                              edgert_bundle** out_bundle) {
  if (!path || !out_bundle)
    return edgert::set_error(EDGERT_ERROR_INVALID_ARGUMENT, "edgert_bundle_open: null argument");
  *out_bundle = nullptr;
  edgert_status status = check_options(options, true);
  if (status != EDGERT_OK) return status;
  // O_NONBLOCK: opening a FIFO would wait for a writer; fstat then refuses anything but a
  // regular file (where O_NONBLOCK changes nothing).
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return edgert::set_error(EDGERT_ERROR_IO, "cannot open %s: %s", path, std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int err = errno;
    close(fd);
    return edgert::set_error(EDGERT_ERROR_IO, "cannot stat %s: %s", path, std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return edgert::set_error(EDGERT_ERROR_IO, "%s is not a regular file", path);
  }
  const size_t size = static_cast<size_t>(st.st_size);
  if (size == 0) {  // mmap refuses length 0; report it like any other truncation
    close(fd);
    return edgert::set_error(EDGERT_ERROR_INVALID_BUNDLE, "%s is empty (0 bytes)", path);
  }
  // Asked of the open file itself, before its bytes are read: the mapping or copy below
  // comes from the same inode, whose reads the kernel checks against the measured digest.
  const bool fsverity = options && (options->flags & EDGERT_OPEN_FSVERITY);
  if (fsverity &&
      (status = edgert::check_fsverity_signature(fd, path, static_cast<const uint8_t*>(options->fsverity_signature),
                                                 options->fsverity_signature_size, options->trusted_public_keys,
                                                 options->num_trusted_keys)) != EDGERT_OK) {
    close(fd);
    return status;
  }
  void* map = nullptr;
  if (options && (options->flags & EDGERT_OPEN_MAP_IN_PLACE)) {
    // Read-only and private: weights are used in place and nothing can write through, but
    // the pages are the file's (see EDGERT_OPEN_MAP_IN_PLACE in edgert.h).
    map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED)
      status = edgert::set_error(EDGERT_ERROR_IO, "cannot mmap %s: %s", path, std::strerror(errno));
  } else {
    status = private_copy(fd, size, path, &map);
  }
  close(fd);  // a mapping keeps the file alive; a copy does not need it
  if (status != EDGERT_OK) return status;
  status = open_verified(static_cast<const uint8_t*>(map), size, options, true, fsverity, out_bundle);
  if (status != EDGERT_OK) munmap(map, size);
  return status;
}

edgert_status edgert_bundle_open_memory(const void* data, size_t size, edgert_bundle** out_bundle) {
  return edgert_bundle_open_memory_with_options(data, size, nullptr, out_bundle);
}

edgert_status edgert_bundle_open_memory_with_options(const void* data, size_t size,
                                                     const edgert_open_options* options,
                                                     edgert_bundle** out_bundle) {
  if (!data || !out_bundle)
    return edgert::set_error(EDGERT_ERROR_INVALID_ARGUMENT,
                             "edgert_bundle_open_memory: null argument");
  *out_bundle = nullptr;
  // FlatBuffers reads its scalars in place: the buffer must be aligned to the largest (8).
  // Sections need more (64); verify_bundle checks their addresses.
  if (reinterpret_cast<uintptr_t>(data) % 8 != 0)
    return edgert::set_error(EDGERT_ERROR_INVALID_ARGUMENT,
                             "bundle memory at %p is not aligned (use 64-byte alignment)", data);
  const edgert_status status = check_options(options, false);
  if (status != EDGERT_OK) return status;
  return open_verified(static_cast<const uint8_t*>(data), size, options, false, false, out_bundle);
}

int32_t edgert_signatures_supported(void) { return edgert::signatures_supported() ? 1 : 0; }

void edgert_bundle_close(edgert_bundle* bundle) {
  if (!bundle) return;
  if (bundle->owns_mapping) munmap(const_cast<uint8_t*>(bundle->file), bundle->file_size);
  bundle->~edgert_bundle();
  std::free(bundle);
}

int32_t edgert_bundle_input_count(const edgert_bundle* bundle) {
  return bundle && bundle->root->inputs() ? static_cast<int32_t>(bundle->root->inputs()->size())
                                          : 0;
}

int32_t edgert_bundle_output_count(const edgert_bundle* bundle) {
  return bundle && bundle->root->outputs() ? static_cast<int32_t>(bundle->root->outputs()->size())
                                           : 0;
}

edgert_status edgert_bundle_input_info(const edgert_bundle* bundle, int32_t index,
                                       edgert_tensor_info* out_info) {
  return tensor_info(bundle, index, true, out_info);
}

edgert_status edgert_bundle_output_info(const edgert_bundle* bundle, int32_t index,
                                        edgert_tensor_info* out_info) {
  return tensor_info(bundle, index, false, out_info);
}

int32_t edgert_bundle_find_input(const edgert_bundle* bundle, const char* name) {
  return find_tensor(bundle, name, true);
}

int32_t edgert_bundle_find_output(const edgert_bundle* bundle, const char* name) {
  return find_tensor(bundle, name, false);
}

size_t edgert_bundle_arena_size(const edgert_bundle* bundle) {
  return bundle ? static_cast<size_t>(bundle->root->arena_size()) : 0;
}

int32_t edgert_bundle_command_count(const edgert_bundle* bundle) {
  return bundle && bundle->root->commands() ? static_cast<int32_t>(bundle->root->commands()->size()) : 0;
}

edgert_status edgert_bundle_command_info(const edgert_bundle* bundle, int32_t index, edgert_command_info* out_info) {
  if (!bundle || !out_info)
    return edgert::set_error(EDGERT_ERROR_INVALID_ARGUMENT, "edgert_bundle_command_info: null argument");
  if (index < 0 || index >= edgert_bundle_command_count(bundle))
    return edgert::set_error(EDGERT_ERROR_INVALID_ARGUMENT, "command index %d out of range [0, %d)", index,
                             edgert_bundle_command_count(bundle));
  // The verifier checked every kernel index of the queue.
  const edge::bundle::Command* c = bundle->root->commands()->Get(static_cast<flatbuffers::uoffset_t>(index));
  *out_info = edgert_command_info{};
  switch (c->kind()) {
    case edge::bundle::CommandKind::Launch: {
      const edge::bundle::Kernel* k = bundle->root->kernels()->Get(c->kernel());
      out_info->name = k->name() ? k->name()->c_str() : "kernel";
      out_info->is_launch = 1;
      out_info->flops = k->flops();
      out_info->bytes = k->bytes();
      break;
    }
    case edge::bundle::CommandKind::Copy: out_info->name = "copy"; break;
    default: out_info->name = "timestamp"; break;
  }
  return EDGERT_OK;
}

// The verifier checked that a bundle has reference data for every input and output or for
// none, each of its tensor's dtype and shape inside a ReferenceIO section.
edgert_status edgert_bundle_reference(const edgert_bundle* bundle, int32_t is_output, int32_t index,
                                      const void** out_data, size_t* out_size) {
  const flatbuffers::Vector<uint32_t>* list =
      !bundle ? nullptr : is_output ? bundle->root->reference_outputs() : bundle->root->reference_inputs();
  const uint32_t n = list ? list->size() : 0;
  if (!out_data || !out_size || index < 0 || static_cast<uint32_t>(index) >= n)
    return edgert::set_error(EDGERT_ERROR_INVALID_ARGUMENT,
                             "edgert_bundle_reference: no reference %s %d (the bundle has %u; edgec "
                             "--embed-reference stores them) or a null argument",
                             is_output ? "output" : "input", index, n);
  const edge::bundle::Buffer* b = bundle->root->buffers()->Get(list->Get(static_cast<uint32_t>(index)));
  *out_data = bundle->data + bundle->root->sections()->Get(b->section())->offset() + b->offset();
  *out_size = static_cast<size_t>(b->size());
  return EDGERT_OK;
}

edgert_status edgert_bundle_reference_tolerance(const edgert_bundle* bundle, double* out_rtol, double* out_atol) {
  const edge::bundle::Bundle* r = bundle ? bundle->root : nullptr;
  if (!r || !out_rtol || !out_atol ||
      ((!r->reference_inputs() || r->reference_inputs()->size() == 0) &&
       (!r->reference_outputs() || r->reference_outputs()->size() == 0)))
    return edgert::set_error(EDGERT_ERROR_INVALID_ARGUMENT,
                             "edgert_bundle_reference_tolerance: no reference data in this bundle (compile it "
                             "with edgec --embed-reference) or a null argument");
  *out_rtol = r->reference_rtol();
  *out_atol = r->reference_atol();
  return EDGERT_OK;
}

const char* edgert_bundle_port(const edgert_bundle* bundle) {
  return bundle ? bundle->port->name : "";
}

const char* edgert_runtime_ports(void) { return edgert::compiled_port_names(); }

}  // extern "C"
