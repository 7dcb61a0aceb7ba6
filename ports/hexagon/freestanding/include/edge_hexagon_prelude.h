/* Included first in every Hexagon translation unit (toolchains/hexagon.cmake): the build
 * machine's glibc headers, read for a 32-bit target that is not i386, ask for i386's
 * register-argument convention in a few declarations (pthread.h, via libstdc++); Hexagon has
 * no such attribute, and nothing here calls those functions. */
#define __regparm__(x)
