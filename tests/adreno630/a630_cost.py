"""A second, independent static a630 cost counter over Mesa's ir3 disassembly text (edgec's is
host_compiler/codegen/ir3_cost.cc): the instruction issues of one work-item, each loop body
counted trip-count times, split into ALU / global / image / shared / private / control / nop,
and the bytes its memory instructions move.

It also works out each loop's trip count from the machine code alone (the compare that ends
the loop, its counter's start value and step), so kernels from another compiler (tinygrad's
NULL:IR3 device) are counted exactly as edgec's are. The e2e test checks it against edgec's
counter and the kernel IR's trip counts.

Static figures: conditional code counts as executed, and nothing here ran on an a630."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

CONTROL = {"br", "brao", "braa", "brax", "jump", "end", "getone", "getlast", "shps", "shpe", "bar", "kill", "demote",
           "chmask", "chsh", "predt", "predf", "prede", "call", "ret", "bkt", "flow_rev", "fence", "ballot", "brac",
           "bany", "ball", "predgetone"}
GLOBAL = {"ldg", "stg", "ldgb", "stgb", "ldc", "ldc_k"}
SHARED = {"ldl", "stl", "ldlw", "stlw", "ldlv"}
PRIVATE = {"ldp", "stp"}
IMAGE = {"isam", "isaml", "isamm", "ldib", "stib", "resinfo", "getsize", "gather4r", "getinfo"}
CLASSES = ("alu", "global", "image", "shared", "private", "control", "nop")


@dataclass
class Instr:
    mnemonic: str
    operands: str
    repeat: int = 1  # (rptN): N + 1 issues
    nops: int = 0    # (nopN): N more


@dataclass
class Cost:
    counts: dict = field(default_factory=lambda: {c: 0 for c in CLASSES})
    bytes: int = 0

    @property
    def memory(self):
        return sum(self.counts[c] for c in ("global", "image", "shared", "private"))

    @property
    def issues(self):
        return sum(self.counts.values())

    def scaled(self, n):
        return Cost({c: v * n for c, v in self.counts.items()}, self.bytes * n)

    def add(self, o):
        for c in CLASSES:
            self.counts[c] += o.counts[c]
        self.bytes += o.bytes


def kind(mnemonic: str) -> str:
    base = mnemonic.split(".")[0]
    if base == "nop": return "nop"
    if base in CONTROL: return "control"
    if base in GLOBAL or base.startswith("atomic"): return "global"
    if base in SHARED: return "shared"
    if base in PRIVATE: return "private"
    if base in IMAGE or base.startswith("sam"): return "image"
    return "alu"


def parse(disasm: str):
    """Instructions (the padding after the last `end` dropped) and the label -> index map
    (Mesa prints `lN:` before instruction N when asked for branch labels)."""
    out = []
    for raw in disasm.splitlines():
        line = raw.strip()
        if not line or line[0] in ";#" or re.fullmatch(r"l\d+:", line): continue
        repeat = nops = 0
        while line.startswith("("):
            flag, line = line[1:line.index(")")], line[line.index(")") + 1:].lstrip()
            if flag.startswith("rpt"): repeat = int(flag[3:])
            elif flag.startswith("nop"): nops = int(flag[3:])
        mnemonic, _, operands = line.partition(" ")
        out.append(Instr(mnemonic, operands.strip(), repeat + 1, nops))
    ends = [i for i, x in enumerate(out) if x.mnemonic.split(".")[0] == "end"]
    return out[:ends[-1] + 1] if ends else out


def branch_target(i: int, ins: Instr):
    m = re.search(r"#(l?)(-?\d+)", ins.operands)
    if not m or kind(ins.mnemonic) != "control": return None
    return int(m.group(2)) if m.group(1) else i + int(m.group(2))


def loops_of(code):
    """[(start, end)] of every loop (backward branches; several to one start are one loop),
    outermost first."""
    loops = {}
    for i, ins in enumerate(code):
        t = branch_target(i, ins)
        if t is not None and t <= i:
            loops[t] = max(loops.get(t, i), i)
    return sorted(loops.items(), key=lambda se: (se[0], -se[1]))


def _value(text: str, consts: dict):
    text = text.strip()
    if re.fullmatch(r"-?\d+", text): return int(text)
    m = re.fullmatch(r"c(\d+)\.([xyzw])", text)
    if m: return consts.get(4 * int(m.group(1)) + "xyzw".index(m.group(2)))
    return None


def derive_trips(code, start: int, end: int, consts: dict):
    """The loop's trip count from its machine code, or None when its shape is not the counted
    loop compilers emit (a counter set before the loop, stepped by a constant once per trip,
    compared with a constant bound by the branch that leaves or repeats the loop)."""
    for b in range(end, start - 1, -1):  # the deciding branch: leaves the loop or jumps back
        ins = code[b]
        t = branch_target(b, ins)
        m = re.match(r"(!?)(p0\.[xyzw])\s*,", ins.operands)
        if t is None or not m or not ins.mnemonic.startswith("br"): continue
        leaves = t > end or t < start
        if not leaves and t != start: continue
        negated, pred = m.group(1) == "!", m.group(2)
        break
    else:
        return None
    cmp_at = next((i for i in range(b - 1, start - 1, -1) if code[i].operands.startswith(pred + ",")
                   and code[i].mnemonic.startswith("cmps.")), None)
    if cmp_at is None: return None
    _, sign, cond = code[cmp_at].mnemonic.split(".")[:3]
    _, a, c = [x.strip() for x in code[cmp_at].operands.split(",")]
    counter, bound = (a, _value(c, consts)) if _value(a, consts) is None else (c, _value(a, consts))
    if bound is None or not re.fullmatch(r"r\d+\.[xyzw]", counter): return None
    if counter == c:  # bound OP counter -> counter OP' bound
        cond = {"lt": "gt", "gt": "lt", "le": "ge", "ge": "le"}.get(cond, cond)
    def dst(i):
        return code[i].operands.split(",")[0].strip()

    writes = [i for i in range(start, end + 1) if dst(i) == counter]
    before = [i for i in writes if i < cmp_at]
    step_i = before[-1] if before else (writes[0] if len(writes) == 1 else None)
    m = None
    if step_i is not None and code[step_i].mnemonic.split(".")[0] == "add":  # add D, S, k or add D, k, S
        m = re.fullmatch(rf"{re.escape(counter)},\s*(r\d+\.[xyzw]),\s*(-?\d+)", code[step_i].operands)
        m2 = re.fullmatch(rf"{re.escape(counter)},\s*(-?\d+),\s*(r\d+\.[xyzw])", code[step_i].operands)
        m = (m.group(1), int(m.group(2))) if m else (m2.group(2), int(m2.group(1))) if m2 else None
    if not m: return None
    source, step = m
    stepped_first = step_i < cmp_at
    if not stepped_first:
        if source != counter or writes != [step_i]: return None
    else:
        # next = current + step is compared; the registers holding it are followed through the
        # moves to the jump back (ir3 parks and rotates it), where `current` must hold it. Both
        # may hold other values in between; current is not written before the step.
        if any(start <= i < step_i for i in range(start, end + 1) if dst(i) == source): return None
        holders = {counter}
        for i in range(step_i + 1, end + 1):
            d = dst(i)
            if not re.fullmatch(r"r\d+\.[xyzw]", d): continue
            src = code[i].operands.split(",")[1].strip() if "," in code[i].operands else ""
            if code[i].mnemonic.startswith("mov.") and code[i].repeat == 1 and src in holders: holders.add(d)
            else: holders.discard(d)
        if source not in holders: return None
        counter = source
    init = None
    for i in range(start - 1, -1, -1):  # the counter's last write before the loop
        if dst(i) == counter:
            if code[i].mnemonic.startswith("mov.") and code[i].repeat == 1:
                init = _value(code[i].operands.split(",")[1], consts)
            break
    if init is None or step == 0: return None
    test = {"lt": lambda x: x < bound, "le": lambda x: x <= bound, "gt": lambda x: x > bound,
            "ge": lambda x: x >= bound, "eq": lambda x: x == bound, "ne": lambda x: x != bound}[cond]
    i, trips = init, 0
    while trips < 1 << 26:
        trips += 1
        if stepped_first: i += step
        p = test(i) != negated
        if not stepped_first: i += step
        if p == leaves: return trips
    return None


def memory_bytes(ins: Instr, k: str) -> int:
    m = ins.mnemonic
    if k == "image":
        return 4 * (2 if re.search(r"\.[fsu]16", m) else 4)
    size = 1 if re.search(r"\.[us]8", m) else 2 if re.search(r"\.([us]16|f16|b16)", m) else \
        8 if re.search(r"\.[us]64", m) else 4
    n = 1
    last = ins.operands.rsplit(",", 1)[-1].strip()
    if "," in ins.operands and re.fullmatch(r"\d+", last) and 0 < int(last) <= 4: n = int(last)
    return size * n


def work_item_cost(disasm: str, trips=None, consts=None):
    """(cost of one work-item, the trip counts used). `trips`: the loops' trip counts in the
    order they open (edgec's kernel IR); None: worked out from the code (all loops must be)."""
    code = parse(disasm)
    loops = loops_of(code)
    if trips is None:
        trips = [derive_trips(code, s, e, consts or {}) for s, e in loops]
        if None in trips:
            raise ValueError(f"cannot work out the trip count of loop {trips.index(None)} of {len(loops)}")
    elif not loops:
        trips = []  # every loop unrolled: the straight code is exact
    elif len(trips) != len(loops):
        raise ValueError(f"the code has {len(loops)} loops, {len(trips)} trip counts given")
    c = Cost()
    for i, ins in enumerate(code):
        times = 1
        for (s, e), t in zip(loops, trips):
            if s <= i <= e: times *= t
        k = kind(ins.mnemonic)
        c.counts[k] += ins.repeat * times
        c.counts["nop"] += ins.nops * times
        if k in ("global", "image", "shared", "private"):
            c.bytes += memory_bytes(ins, k) * ins.repeat * times
    return c, list(trips)
