// verify_a630.cc — the verifier's checks of an Ir3A630 kernel (Adreno 630 machine code from
// edgec --target adreno630): the program lies inside its section, and every field a KGSL
// dispatcher would program into the GPU is within the a630's limits (schema/kernel_abi.h).
// No port runs these programs yet; the checks hold for any runtime that opens the bundle.
#include <cinttypes>

#include "internal.h"
#include "kernel_abi.h"

namespace edgert {

using namespace edge::bundle;
namespace abi = edge::abi;

#define EDGE_INVALID(...) ::edgert::set_error(EDGERT_ERROR_INVALID_BUNDLE, __VA_ARGS__)

edgert_status check_a630_kernel(const Kernel* k, uint32_t i, const Section* s) {
  const char* name = k->name() ? k->name()->c_str() : "";
  const A630Program* p = k->a630();
  if (!p) return EDGE_INVALID("kernel %u (%s): an Ir3A630 kernel without its a630 program", i, name);
  if (p->code_offset() % abi::kA630ProgramAlignment != 0 || p->code_size() == 0 || p->code_size() % 8 != 0 ||
      p->code_offset() > s->size() || p->code_size() > s->size() - p->code_offset())
    return EDGE_INVALID("kernel %u (%s): program [%" PRIu64 ", +%" PRIu64 ") is not a whole number of instructions at a "
                        "multiple of %" PRIu64 " inside its %" PRIu64 "-byte section",
                        i, name, p->code_offset(), p->code_size(), abi::kA630ProgramAlignment, s->size());
  // ir3 counts issues: an encoded instruction issues at most 8 times ((rpt7)) plus 3 nops ((nop3)).
  if (p->instructions() == 0 || p->instructions() > 11 * (p->code_size() / 8) || p->nops() > p->instructions())
    return EDGE_INVALID("kernel %u (%s): %u instructions (%u nops) in %" PRIu64 " bytes", i, name, p->instructions(),
                        p->nops(), p->code_size());
  if (p->full_regs() > abi::kA630MaxRegs || p->half_regs() > abi::kA630MaxRegs)
    return EDGE_INVALID("kernel %u (%s): register footprint %u full / %u half exceeds the a630's %u", i, name,
                        p->full_regs(), p->half_regs(), abi::kA630MaxRegs);
  if (p->constlen() > abi::kA630MaxConstVec4)  // 0: a program that reads no constant (no outputs)
    return EDGE_INVALID("kernel %u (%s): constlen %u exceeds %u vec4", i, name, p->constlen(), abi::kA630MaxConstVec4);
  if (p->branchstack() > abi::kA630BranchStack)
    return EDGE_INVALID("kernel %u (%s): branch stack %u exceeds %u", i, name, p->branchstack(), abi::kA630BranchStack);
  if (p->shared_bytes() > abi::kA630SharedBytes)
    return EDGE_INVALID("kernel %u (%s): %u bytes of shared memory exceed the a630's %u", i, name, p->shared_bytes(),
                        abi::kA630SharedBytes);
  if (p->threadsize() != 64 && p->threadsize() != 128)
    return EDGE_INVALID("kernel %u (%s): wave size %u is neither 64 nor 128", i, name, p->threadsize());
  const uint32_t const_dwords = 4 * p->constlen();
  const uint32_t num_args = k->args() ? k->args()->size() : 0;
  if (!p->args() || p->args()->size() != num_args)
    return EDGE_INVALID("kernel %u (%s): %u argument bindings for %u arguments", i, name,
                        p->args() ? p->args()->size() : 0, num_args);
  for (uint32_t a = 0; a < num_args; ++a) {
    const A630Arg* arg = p->args()->Get(a);
    if (arg->kind() == A630ArgKind::Address) {
      // A 64-bit address: two dwords, inside what the program reads.
      if (arg->slot() % 2 != 0 || arg->slot() >= const_dwords || const_dwords - arg->slot() < 2)
        return EDGE_INVALID("kernel %u (%s): argument %u's address at constant dword %u is not an aligned pair below "
                            "%u",
                            i, name, a, arg->slot(), const_dwords);
    } else if (arg->kind() == A630ArgKind::Texture) {
      if (arg->slot() >= p->num_textures())
        return EDGE_INVALID("kernel %u (%s): argument %u reads texture %u of %u", i, name, a, arg->slot(), p->num_textures());
    } else if (arg->kind() == A630ArgKind::Image) {
      if (arg->slot() >= p->num_images())
        return EDGE_INVALID("kernel %u (%s): argument %u writes image %u of %u", i, name, a, arg->slot(), p->num_images());
    } else if (arg->kind() != A630ArgKind::Unused) {
      return EDGE_INVALID("kernel %u (%s): argument %u has unknown binding kind %u", i, name, a,
                          static_cast<unsigned>(arg->kind()));
    }
  }
  const uint32_t imms = p->immediates() ? p->immediates()->size() : 0;
  // The immediates ir3 counted may run past constlen only where the program reads none of them.
  if (imms > 0 && p->immediates_dword() > const_dwords)
    return EDGE_INVALID("kernel %u (%s): immediates at constant dword %u past constlen %u vec4", i, name,
                        p->immediates_dword(), p->constlen());
  for (uint32_t reg : {p->work_group_id_reg(), p->local_id_reg()})
    if (reg != abi::kA630UnusedReg && reg >= 4 * abi::kA630MaxRegs)
      return EDGE_INVALID("kernel %u (%s): system value register id %u is no register", i, name, reg);
  const uint32_t dims = k->local_size() ? k->local_size()->size() : 0;
  // Stops once past the limit: a product of many large sizes must not wrap back under it, and
  // a zero size is no work-group.
  uint64_t items = dims == 0 ? 0 : 1;
  for (uint32_t d = 0; d < dims && items != 0 && items <= abi::kA630MaxWorkGroup; ++d) items *= k->local_size()->Get(d);
  if (items == 0 || items > abi::kA630MaxWorkGroup)
    return EDGE_INVALID("kernel %u (%s): work-group of %" PRIu64 " work-items (%u dims): an a630 program needs a "
                        "local_size of at most %u",
                        i, name, items, dims, abi::kA630MaxWorkGroup);
  return EDGERT_OK;
}

#undef EDGE_INVALID

}  // namespace edgert
