# The cpu port (x86-64, aarch64): included by device_runtime/CMakeLists.txt when EDGE_PORTS
# lists "cpu". Appends its sources and include directory; needs nothing beyond pthreads.
list(APPEND EDGE_PORT_SOURCES ${CMAKE_CURRENT_LIST_DIR}/cpu_port.cc ${CMAKE_CURRENT_LIST_DIR}/cpu_target.cc ${CMAKE_CURRENT_LIST_DIR}/cpu_context.cc ${CMAKE_CURRENT_LIST_DIR}/code_pages.cc
                              ${CMAKE_CURRENT_LIST_DIR}/worker_pool.cc)
list(APPEND EDGE_PORT_INCLUDE_DIRS ${CMAKE_CURRENT_LIST_DIR})
