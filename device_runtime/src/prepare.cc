// prepare.cc — edgert_prepare: the bundle's programs built by its port on this device, written
// back as a new bundle with the program binaries and the identity of what built them. The
// one place the runtime writes a bundle, so the one file of it that uses std::vector and
// std::string (through schema/bundle_writer.h, which throws nothing).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bundle_writer.h"
#include "edgert_prepare.h"
#include "internal.h"
#include "port.h"

namespace {

using namespace edge::bundle;

// The bundle without its old program binaries and with the new ones. Dropping sections
// renumbers the rest: every section index in the desc is remapped.
BundleDesc prepared_desc(const edgert_bundle* bundle, const edgert::PreparedPrograms& prepared) {
  BundleDesc d = desc_from_bundle(bundle->root, bundle->data);
  std::vector<uint32_t> new_index(d.sections.size(), 0);
  std::vector<SectionData> kept;
  for (size_t i = 0; i < d.sections.size(); ++i) {
    if (d.sections[i].format == CodeFormat::OpenCLBinary) continue;
    new_index[i] = static_cast<uint32_t>(kept.size());
    kept.push_back(std::move(d.sections[i]));
  }
  d.sections = std::move(kept);
  // Only Weight buffers and kernels name sections (binary sections are named by nobody).
  for (BufferDesc& b : d.buffers)
    if (b.kind == BufferKind::Weight) b.section = new_index[b.section];
  for (KernelDesc& k : d.kernels) k.section = new_index[k.section];
  for (uint32_t i = 0; i < prepared.count; ++i) {
    const edgert::PreparedProgram& p = prepared.programs[i];
    SectionData s;
    s.kind = SectionKind::Code;
    s.format = CodeFormat::OpenCLBinary;
    s.alignment = 64;
    s.source_section = new_index[p.source_section];
    s.bytes.assign(p.binary, p.binary + p.size);
    d.sections.push_back(std::move(s));
  }
  d.has_prepared = true;
  d.prepared = PreparedDesc{prepared.platform, prepared.device, prepared.driver};
  return d;
}

// Writes path + ".tmp", then renames it over `path`: readers see the old file or the new
// one, never a part. The temporary file is removed on any failure.
edgert_status write_atomically(const char* path, const std::vector<uint8_t>& bytes) {
  const std::string tmp = std::string(path) + ".tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return edgert::set_error(EDGERT_ERROR_IO, "cannot create %s: %s", tmp.c_str(), std::strerror(errno));
  size_t done = 0;
  int err = 0;
  while (done < bytes.size() && err == 0) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno != EINTR) err = errno;
    if (n > 0) done += static_cast<size_t>(n);
  }
  if (err == 0 && fsync(fd) != 0) err = errno;
  if (close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && std::rename(tmp.c_str(), path) != 0) err = errno;
  if (err != 0) {
    unlink(tmp.c_str());
    return edgert::set_error(EDGERT_ERROR_IO, "cannot write %s: %s", path, std::strerror(err));
  }
  return EDGERT_OK;
}

}  // namespace

extern "C" edgert_status edgert_prepare(const char* bundle_path, const char* out_path,
                                        const edgert_context_options* options) {
  if (!bundle_path || !out_path)
    return edgert::set_error(EDGERT_ERROR_INVALID_ARGUMENT, "edgert_prepare: null path");
  const edgert_context_options defaults{};
  if (!options) options = &defaults;
  edgert_bundle* bundle = nullptr;
  edgert_status st = edgert_bundle_open(bundle_path, &bundle);
  if (st != EDGERT_OK) return st;
  const edgert::Port* port = bundle->port;
  if (!port->prepare) {
    st = edgert::set_error(EDGERT_ERROR_INVALID_ARGUMENT, "%s: the %s port has nothing to prepare",
                           bundle_path, port->name);
    edgert_bundle_close(bundle);
    return st;
  }
  edgert::PreparedPrograms prepared;
  st = port->prepare(bundle, options, &prepared);
  if (st == EDGERT_OK) {
    const std::vector<uint8_t> bytes = serialize_bundle(prepared_desc(bundle, prepared));
    port->release_prepared(&prepared);
    st = write_atomically(out_path, bytes);
  }
  edgert_bundle_close(bundle);
  return st;
}
