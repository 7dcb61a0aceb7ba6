// A freestanding Hexagon program whose dynamic instruction count is known: a hardware loop of
// ITERS iterations over two packets, four instructions, one of them HVX:
//   { v0.w = vadd(v1.w,v2.w); acc = add(acc,#1) }
//   { acc = add(acc,#2); other = xor(other,acc) }:endloop0
// (xor: no duplex form, so the assembler keeps the packet as two words and adds no nop)
// plus a few packets of start and exit. test_hexagon.py builds it twice (two ITERS) and checks
// what count.py reports. Exit code 0 when the loop ran ITERS times.
#ifndef ITERS
#error "build with -DITERS=N"
#endif

static void sys_exit(int code) {
  register int r0 asm("r0") = code;
  register int r6 asm("r6") = 93;  // exit, the generic Linux syscall table
  asm volatile("trap0(#1)" ::"r"(r0), "r"(r6));
  for (;;) {
  }
}

void _start(void) {
  int acc = 0, other = 1, n = ITERS;
  asm volatile(
      "loop0(1f, %2)\n"
      ".falign\n"
      "1:\n"
      "{ v0.w = vadd(v1.w, v2.w)\n"
      "  %0 = add(%0, #1) }\n"
      "{ %0 = add(%0, #2)\n"
      "  %1 = xor(%1, %0) }:endloop0\n"
      : "+r"(acc), "+r"(other)
      : "r"(n)
      : "v0", "lc0", "sa0");
  sys_exit(acc == 3 * ITERS ? 0 : 1);
}
