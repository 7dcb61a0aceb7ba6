#include "codegen/ir3_inspect.h"

#include <cstdio>

#include "codegen/ir3_mesa.h"
#include "graph/graph.h"

namespace edgec {

namespace eb = edge::bundle;

std::vector<A630KernelReport> a630_reports(const eb::Bundle* b, const uint8_t* data, uint64_t data_size, bool disassemble) {
  std::vector<A630KernelReport> out;
  const unsigned num_kernels = b->kernels() ? b->kernels()->size() : 0;
  for (unsigned i = 0; i < num_kernels; ++i) {
    const eb::Kernel* k = b->kernels()->Get(i);
    A630KernelReport r;
    r.name = k->name() ? k->name()->str() : "";
    r.work_items = 1;
    for (unsigned d = 0; k->global_size() && d < k->global_size()->size(); ++d) r.work_items *= k->global_size()->Get(d);
    const eb::Section* s = b->sections() && k->section() < b->sections()->size() ? b->sections()->Get(k->section()) : nullptr;
    if (s && s->format() == eb::CodeFormat::Ir3A630) r.program = k->a630();
    if (r.program && disassemble) {
      const eb::A630Program* p = r.program;
      // The verifier checked these ranges; inspect also shows bundles it refused for other reasons.
      if (s->offset() > data_size || s->size() > data_size - s->offset() || p->code_offset() > s->size() ||
          p->code_size() > s->size() - p->code_offset())
        throw CompileError("kernel " + r.name + ": its a630 program lies outside the bundle");
      mesa::Ir3Disassembly d = mesa::Mesa::get().disassemble(data + s->offset() + p->code_offset(), p->code_size());
      r.disassembly = d.text;
      r.decoded = d.instructions;
      r.decode_errors = d.decode_errors;
      // The last instruction before the padding nops is `end`.
      std::string last;
      size_t at = 0;
      while (at < d.text.size()) {
        size_t e = d.text.find('\n', at);
        if (e == std::string::npos) e = d.text.size();
        std::string line = d.text.substr(at, e - at);
        const size_t a = line.find_first_not_of(" \t");
        if (a != std::string::npos) {
          line = line.substr(a);
          while (!line.empty() && line[0] == '(') line = line.substr(line.find(')') + 1);
          if (line.rfind("nop", 0) != 0) last = line;
        }
        at = e + 1;
      }
      r.ends_with_end = last.rfind("end", 0) == 0;
      std::vector<uint32_t> trips;
      for (unsigned t = 0; p->loop_trips() && t < p->loop_trips()->size(); ++t) trips.push_back(p->loop_trips()->Get(t));
      r.per_item = a630_work_item_cost(d.text, trips);
      r.total = r.per_item.scaled(r.work_items);
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::string a630_summary(const A630KernelReport& r) {
  const eb::A630Program* p = r.program;
  if (!p) return "";
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "a630: %u instructions (%u nops), %u full / %u half registers, %u waves, constlen %u, branchstack %u, "
                "wave %u%s",
                p->instructions(), p->nops(), p->full_regs(), p->half_regs(), p->max_waves(), p->constlen(),
                p->branchstack(), p->threadsize(), p->private_bytes() ? ", spills to private memory" : "");
  std::string s = buf;
  if (!r.disassembly.empty() || r.decoded) {
    std::snprintf(buf, sizeof buf, "; decoded %u, %u decode errors, %s", r.decoded, r.decode_errors,
                  r.ends_with_end ? "ends with end" : "does NOT end with end");
    s += buf;
  }
  return s;
}

std::string a630_cost_table(const std::vector<A630KernelReport>& reports) {
  std::string s;
  char buf[512];
  std::snprintf(buf, sizeof buf, "a630 instruction issues per run (static: loop bodies x trip counts x work-items)\n"
                                 "%-36s %10s %14s %14s %12s %12s %12s %12s %14s\n",
                "kernel", "items", "issues", "alu", "global", "image", "shared", "control", "bytes");
  s += buf;
  A630Cost total;
  for (const A630KernelReport& r : reports) {
    if (!r.program) continue;
    const A630Cost& c = r.total;
    std::snprintf(buf, sizeof buf, "%-36.36s %10llu %14llu %14llu %12llu %12llu %12llu %12llu %14llu\n", r.name.c_str(),
                  (unsigned long long)r.work_items, (unsigned long long)c.issues(), (unsigned long long)c.alu,
                  (unsigned long long)c.global, (unsigned long long)c.image, (unsigned long long)c.shared,
                  (unsigned long long)c.control, (unsigned long long)c.bytes);
    s += buf;
    total += c;
  }
  std::snprintf(buf, sizeof buf, "%-36s %10s %14llu %14llu %12llu %12llu %12llu %12llu %14llu\n", "total", "",
                (unsigned long long)total.issues(), (unsigned long long)total.alu, (unsigned long long)total.global,
                (unsigned long long)total.image, (unsigned long long)total.shared, (unsigned long long)total.control,
                (unsigned long long)total.bytes);
  s += buf;
  std::snprintf(buf, sizeof buf, "(issues include %llu nops and %llu private-memory instructions; memory = global + image "
                                 "+ shared + private)\n",
                (unsigned long long)total.nop, (unsigned long long)total.private_mem);
  s += buf;
  return s;
}

}  // namespace edgec
