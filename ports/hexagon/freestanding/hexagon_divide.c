/* hexagon_divide.c — the integer division helpers LLVM calls on Hexagon, which has no divide
 * instruction (__hexagon_udivdi3 and friends; standard calling convention). Their own file so
 * that libedgert_skel.so (ports/hexagon/fastrpc/) carries them without the rest of the libc
 * subset: on the DSP the C library comes from QuRT, these from whoever links the code. */
#include <stdint.h>

/* Restoring division: no `/` or `%` here, which would call these very functions. Also
 * libc_subset.c's number formatting (quotient and remainder in one pass). */
uint64_t edge_udivmod64(uint64_t a, uint64_t b, uint64_t* rem) {
  uint64_t q = 0, r = 0;
  if (b == 0) {
    *rem = 0;
    return 0;
  }
  for (int i = 63; i >= 0; --i) {
    r = (r << 1) | ((a >> i) & 1);
    if (r >= b) {
      r -= b;
      q |= (uint64_t)1 << i;
    }
  }
  *rem = r;
  return q;
}
uint64_t __hexagon_udivdi3(uint64_t a, uint64_t b) {
  uint64_t r;
  return edge_udivmod64(a, b, &r);
}
uint64_t __hexagon_umoddi3(uint64_t a, uint64_t b) {
  uint64_t r;
  edge_udivmod64(a, b, &r);
  return r;
}
int64_t __hexagon_divdi3(int64_t a, int64_t b) {
  uint64_t r, q = edge_udivmod64(a < 0 ? -(uint64_t)a : (uint64_t)a, b < 0 ? -(uint64_t)b : (uint64_t)b, &r);
  return (a < 0) != (b < 0) ? -(int64_t)q : (int64_t)q;
}
int64_t __hexagon_moddi3(int64_t a, int64_t b) {
  uint64_t r;
  edge_udivmod64(a < 0 ? -(uint64_t)a : (uint64_t)a, b < 0 ? -(uint64_t)b : (uint64_t)b, &r);
  return a < 0 ? -(int64_t)r : (int64_t)r;
}
uint32_t __hexagon_udivsi3(uint32_t a, uint32_t b) { return (uint32_t)__hexagon_udivdi3(a, b); }
uint32_t __hexagon_umodsi3(uint32_t a, uint32_t b) { return (uint32_t)__hexagon_umoddi3(a, b); }
int32_t __hexagon_divsi3(int32_t a, int32_t b) { return (int32_t)__hexagon_divdi3(a, b); }
int32_t __hexagon_modsi3(int32_t a, int32_t b) { return (int32_t)__hexagon_moddi3(a, b); }
