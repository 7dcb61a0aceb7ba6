#include "codegen/ir3_cost.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <sstream>

#include "graph/graph.h"

namespace edgec {

A630Cost& A630Cost::operator+=(const A630Cost& o) {
  alu += o.alu, global += o.global, image += o.image, shared += o.shared, private_mem += o.private_mem;
  control += o.control, nop += o.nop, bytes += o.bytes;
  return *this;
}

A630Cost A630Cost::scaled(uint64_t n) const {
  A630Cost c = *this;
  for (uint64_t* f : {&c.alu, &c.global, &c.image, &c.shared, &c.private_mem, &c.control, &c.nop, &c.bytes}) *f *= n;
  return c;
}

namespace {

struct Line {
  std::string mnemonic;  // e.g. "ldg.u32", "add.f", "nop"
  std::string operands;
  unsigned repeat = 1;   // (rptN): N + 1 issues
  unsigned nops = 0;     // (nopN)
};

// "(sy)(rpt2)(nop3) ldg.u32 r0.x, g[r1.x], 4" -> flags, mnemonic, operands.
Line parse(const std::string& text) {
  Line l;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i < text.size() && text[i] == '(') {
      size_t e = text.find(')', i);
      if (e == std::string::npos) break;
      std::string flag = text.substr(i + 1, e - i - 1);
      if (flag.rfind("rpt", 0) == 0) l.repeat = 1 + static_cast<unsigned>(std::atoi(flag.c_str() + 3));
      if (flag.rfind("nop", 0) == 0) l.nops = static_cast<unsigned>(std::atoi(flag.c_str() + 3));
      i = e + 1;
      continue;
    }
    break;
  }
  size_t e = i;
  while (e < text.size() && !std::isspace(static_cast<unsigned char>(text[e]))) ++e;
  l.mnemonic = text.substr(i, e - i);
  l.operands = e < text.size() ? text.substr(e) : "";
  return l;
}

bool starts(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }
std::string base_of(const std::string& m) { return m.substr(0, m.find('.')); }

enum class Kind { Alu, Global, Image, Shared, Private, Control, Nop };

Kind classify(const std::string& m) {
  const std::string b = base_of(m);
  if (b == "nop") return Kind::Nop;
  static const char* control[] = {"br", "brao", "braa", "brax", "jump", "end", "getone", "getlast", "shps", "shpe",
                                  "bar", "kill", "demote", "chmask", "chsh", "predt", "predf", "prede", "call",
                                  "ret", "bkt", "flow_rev", "fence", "ballot", "brac", "bany", "ball", "predgetone"};
  for (const char* c : control)
    if (b == c) return Kind::Control;
  if (b == "ldg" || b == "stg" || b == "ldgb" || b == "stgb" || b == "ldc" || b == "ldc_k" || starts(b, "atomic"))
    return Kind::Global;
  if (b == "ldl" || b == "stl" || b == "ldlw" || b == "stlw" || b == "ldlv") return Kind::Shared;
  if (b == "ldp" || b == "stp") return Kind::Private;
  if (b == "isam" || b == "isaml" || b == "isamm" || starts(b, "sam") || b == "ldib" || b == "stib" || b == "resinfo" ||
      b == "getsize" || b == "gather4r" || b == "getinfo")
    return Kind::Image;
  return Kind::Alu;
}

unsigned type_bytes(const std::string& m) {
  for (const char* t : {"u8", "s8"})
    if (m.find(std::string(".") + t) != std::string::npos) return 1;
  for (const char* t : {"u16", "s16", "f16", "b16"})
    if (m.find(std::string(".") + t) != std::string::npos) return 2;
  for (const char* t : {"u64", "s64"})
    if (m.find(std::string(".") + t) != std::string::npos) return 8;
  return 4;
}

// Bytes one issue of a memory instruction moves: its type times the trailing component
// count of ldg / stg / ldl / stl / ldp / stp ("..., 4"); a texture sample reads 4 channels.
uint64_t memory_bytes(const Line& l, Kind k) {
  if (k == Kind::Image) {
    const bool half = l.mnemonic.find(".f16") != std::string::npos || l.mnemonic.find(".u16") != std::string::npos ||
                      l.mnemonic.find(".s16") != std::string::npos;
    return 4 * (half ? 2 : 4);
  }
  size_t comma = l.operands.rfind(',');
  unsigned n = 1;
  if (comma != std::string::npos) {
    const std::string last = l.operands.substr(comma + 1);
    char* end = nullptr;
    const long v = std::strtol(last.c_str(), &end, 10);
    if (end != last.c_str() && v > 0 && v <= 4) n = static_cast<unsigned>(v);
  }
  return uint64_t{type_bytes(l.mnemonic)} * n;
}

}  // namespace

A630Cost a630_work_item_cost(const std::string& disassembly, const std::vector<uint32_t>& loop_trips) {
  std::vector<uint32_t> loop_trips_used = loop_trips;
  std::vector<Line> lines;
  std::istringstream in(disassembly);
  std::string text;
  while (std::getline(in, text)) {
    size_t a = text.find_first_not_of(" \t");
    if (a == std::string::npos || text[a] == ';' || text[a] == '#') continue;
    lines.push_back(parse(text));
  }
  // The nops after the last `end` pad the program to whole instruction groups: never issued.
  for (size_t i = lines.size(); i-- > 0;)
    if (base_of(lines[i].mnemonic) == "end") {
      lines.resize(i + 1);
      break;
    }
  // Loops: backward branches, [target, branch] in instructions; several back edges to one
  // target are one loop.
  std::map<long, long> loops;  // start -> end
  for (size_t i = 0; i < lines.size(); ++i) {
    const Kind k = classify(lines[i].mnemonic);
    if (k != Kind::Control) continue;
    const size_t hash = lines[i].operands.find('#');
    if (hash == std::string::npos) continue;
    const long offset = std::strtol(lines[i].operands.c_str() + hash + 1, nullptr, 10);
    if (offset >= 0) continue;
    const long start = static_cast<long>(i) + offset;
    if (start < 0) throw CompileError("a630 cost: a branch before the program's start");
    loops[start] = std::max(loops[start], static_cast<long>(i));
  }
  // Pre-order: by start, the enclosing loop first.
  std::vector<std::pair<long, long>> order(loops.begin(), loops.end());
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : a.second > b.second;
  });
  // No loop left: ir3 unrolled (or removed) every loop, and the straight code is exact.
  if (order.empty()) loop_trips_used.clear();
  else if (order.size() != loop_trips.size())
    throw CompileError("a630 cost: the machine code has " + std::to_string(order.size()) + " loops, the kernel " +
                       std::to_string(loop_trips.size()));
  A630Cost c;
  for (size_t i = 0; i < lines.size(); ++i) {
    uint64_t times = 1;
    for (size_t j = 0; j < order.size(); ++j)
      if (static_cast<long>(i) >= order[j].first && static_cast<long>(i) <= order[j].second) times *= loop_trips_used[j];
    const Line& l = lines[i];
    const Kind k = classify(l.mnemonic);
    const uint64_t issues = uint64_t{l.repeat} * times;
    c.nop += uint64_t{l.nops} * times;
    switch (k) {
      case Kind::Alu: c.alu += issues; break;
      case Kind::Global: c.global += issues; break;
      case Kind::Image: c.image += issues; break;
      case Kind::Shared: c.shared += issues; break;
      case Kind::Private: c.private_mem += issues; break;
      case Kind::Control: c.control += issues; break;
      case Kind::Nop: c.nop += issues; break;
    }
    if (k == Kind::Global || k == Kind::Image || k == Kind::Shared || k == Kind::Private)
      c.bytes += memory_bytes(l, k) * issues;
  }
  return c;
}

}  // namespace edgec
