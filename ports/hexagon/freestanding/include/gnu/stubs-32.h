/* The build machine's glibc headers, read for a 32-bit target that is not i386, look for the
 * i386 list of unimplemented functions; there is nothing to list (toolchains/hexagon.cmake). */
