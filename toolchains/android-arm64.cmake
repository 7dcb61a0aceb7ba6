# Cross-compiling for Android on 64-bit ARM (arm64-v8a) with the Android NDK, by way of the
# NDK's own toolchain file (NDK r23 or later):
#   export ANDROID_NDK=/path/to/android-ndk-r26d        (or -DANDROID_NDK=...)
#   cmake -S . -B build-android -DCMAKE_TOOLCHAIN_FILE=toolchains/android-arm64.cmake \
#         -DEDGE_BUILD_COMPILER=OFF [-DANDROID_PLATFORM=android-24] [-DEDGE_BUILD_TESTS=OFF]
# Defaults: API level 24 (Android 7.0), libc++ linked statically (the runtime needs no C++
# library at run time; nothing extra to ship). Bundles: `edgec compile --target aarch64`.
# Not exercised by the tests here (no NDK on the CI machine): see README, "Cross-compiling".
if(NOT ANDROID_NDK)
  foreach(var ANDROID_NDK ANDROID_NDK_HOME ANDROID_NDK_ROOT)
    if(DEFINED ENV{${var}})
      set(ANDROID_NDK "$ENV{${var}}")
      break()
    endif()
  endforeach()
endif()
if(NOT EXISTS "${ANDROID_NDK}/build/cmake/android.toolchain.cmake")
  message(FATAL_ERROR "toolchains/android-arm64.cmake: set ANDROID_NDK (environment or -DANDROID_NDK=) "
                      "to an Android NDK (r23 or later); got '${ANDROID_NDK}'")
endif()
# try_compile projects re-read this file: hand them the NDK location.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES ANDROID_NDK)

set(ANDROID_ABI arm64-v8a)
if(NOT ANDROID_PLATFORM)
  set(ANDROID_PLATFORM android-24)
endif()
if(NOT ANDROID_STL)
  set(ANDROID_STL c++_static)
endif()
include("${ANDROID_NDK}/build/cmake/android.toolchain.cmake")
