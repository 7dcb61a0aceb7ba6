# The opencl port (any OpenCL 1.2 device): included by device_runtime/CMakeLists.txt when
# EDGE_PORTS lists "opencl". Needs only the Khronos headers at build time: libOpenCL is
# loaded with dlopen when a context is created, so nothing links against it.
edge_header_only_dir(EDGE_OPENCL_INCLUDE_DIR CL/cl.h)  # see the top-level CMakeLists.txt
list(APPEND EDGE_PORT_SOURCES ${CMAKE_CURRENT_LIST_DIR}/cl_api.cc ${CMAKE_CURRENT_LIST_DIR}/opencl_port.cc
                              ${CMAKE_CURRENT_LIST_DIR}/opencl_context.cc)
list(APPEND EDGE_PORT_INCLUDE_DIRS ${CMAKE_CURRENT_LIST_DIR} ${EDGE_OPENCL_INCLUDE_DIR})
# dlopen/dlsym: in libc since glibc 2.34, in libdl before and on other libcs.
list(APPEND EDGE_PORT_LIBS ${CMAKE_DL_LIBS})
