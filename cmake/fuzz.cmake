# DTSIM_FUZZ=ON: the libFuzzer build (tests/fuzz/). It needs clang and a build folder of its own, since every
# library is then compiled with coverage instrumentation and AddressSanitizer + UndefinedBehaviorSanitizer:
#   cmake -S . -B build-fuzz -DDTSIM_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++-14 -DDTSIM_CUDA=OFF
#   cmake --build build-fuzz --target fuzzers
# `make fuzz` does both and runs every target (tests/fuzz/run_fuzzers.sh). Building the target `fuzzers`
# builds only the libraries the targets link (scenario, config, models, gpu), not SimGrid's layers.
# Included from the top-level CMakeLists.txt before the libraries, so that the flags reach them.
option(DTSIM_FUZZ "Build the libFuzzer targets of tests/fuzz (clang), with ASan and UBSan on every library" OFF)

if(DTSIM_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "DTSIM_FUZZ=ON needs clang for libFuzzer (found ${CMAKE_CXX_COMPILER_ID}): "
                        "configure a separate folder with -DCMAKE_CXX_COMPILER=clang++-14")
  endif()
  if(DTSIM_WITH_CUDA)
    message(FATAL_ERROR "DTSIM_FUZZ=ON builds no CUDA code: configure with -DDTSIM_CUDA=OFF")
  endif()
  # fuzzer-no-link: coverage for libFuzzer without its main(); the fuzz targets link -fsanitize=fuzzer.
  # -fno-sanitize-recover: an UBSan report stops the run, so that libFuzzer keeps the input as a crash.
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
                      -fno-omit-frame-pointer -g)
  add_link_options(-fsanitize=address,undefined)
  message(STATUS "dtsim: libFuzzer build with ASan and UBSan (tests/fuzz)")
endif()
