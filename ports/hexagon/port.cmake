# The hexagon port (Hexagon DSP, v65 and later): included by device_runtime/CMakeLists.txt when
# EDGE_PORTS lists "hexagon" (toolchains/hexagon.cmake sets it). The cpu port's replay
# (ports/cpu/cpu_context.cc), registered as port "hexagon", with the cpu port's target check,
# code pages and clock, over hexagon_port.cc (the DSP's arch and features). The OS calls it
# makes (a POSIX subset: open, fstat, pread, mmap, mprotect, clock_gettime) come from
# ports/hexagon/freestanding/ (see README.md there). Worker threads (fixed_pool.cc: the replay's
# ports/cpu/thread_pool.h over freestanding/platform.h's threads) are EDGE_HEXAGON_POOL_SOURCES:
# device_runtime/CMakeLists.txt puts them in libedgert.a (edgert-run) and gives the FastRPC
# skeleton fastrpc/one_thread_pool.cc.
list(APPEND EDGE_PORT_SOURCES ${CMAKE_CURRENT_LIST_DIR}/../cpu/cpu_context.cc ${CMAKE_CURRENT_LIST_DIR}/../cpu/cpu_target.cc ${CMAKE_CURRENT_LIST_DIR}/../cpu/code_pages.cc
                              ${CMAKE_CURRENT_LIST_DIR}/hexagon_port.cc)
list(APPEND EDGE_PORT_INCLUDE_DIRS ${CMAKE_CURRENT_LIST_DIR}/../cpu ${CMAKE_CURRENT_LIST_DIR})
set(EDGE_HEXAGON_POOL_SOURCES ${CMAKE_CURRENT_LIST_DIR}/fixed_pool.cc)
list(APPEND EDGE_PORT_DEFINITIONS EDGERT_CPU_PORT_NAME="hexagon"
                                  EDGERT_CPU_PORT_SYMBOL=port_hexagon EDGERT_CPU_DEVICE_NAME="Hexagon DSP")
