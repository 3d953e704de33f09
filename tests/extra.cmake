# extra.cmake (included by tests/CMakeLists.txt): fuzzing of the readers.
# - fuzz_graph, fuzz_sched (ctest): tests/fuzz_driver.c replays
#   tests/corpus/<kind> and runs HOFF_FUZZ_ITERS deterministic mutants
#   through the same entry points libFuzzer uses, under whatever sanitizers
#   the build has (HOFF_SANITIZE=ON in CI); HOFF_FUZZ_SECONDS caps each.
# - With clang and a working -fsanitize=fuzzer, the libFuzzer targets
#   fuzz_graph and fuzz_sched (not run by ctest; see tests/fuzz.sh).
#   They compile the reader sources themselves so that libFuzzer's coverage
#   instrumentation sees them.
set(HOFF_FUZZ_ITERS 150000 CACHE STRING "Mutants per fuzz driver test")
set(HOFF_FUZZ_SECONDS 20 CACHE STRING "Time cap of each fuzz driver test")

foreach(kind graph sched)
  add_executable(fuzz_driver_${kind}
    ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_driver.c
    ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_${kind}.c)
  target_link_libraries(fuzz_driver_${kind} PRIVATE hoff_formats)
  add_test(NAME fuzz_${kind}
    COMMAND fuzz_driver_${kind} ${CMAKE_CURRENT_SOURCE_DIR}/corpus/${kind}
            ${HOFF_FUZZ_ITERS} 1 ${HOFF_FUZZ_SECONDS})
  set_tests_properties(fuzz_${kind} PROPERTIES
    TIMEOUT 120 ENVIRONMENT "${HOFF_TEST_ENV}")
endforeach()

if(CMAKE_C_COMPILER_ID STREQUAL "Clang")
  include(CheckCSourceCompiles)
  set(CMAKE_REQUIRED_FLAGS "-fsanitize=fuzzer")
  set(CMAKE_REQUIRED_LINK_OPTIONS "-fsanitize=fuzzer")
  check_c_source_compiles([=[
    #include <stddef.h>
    #include <stdint.h>
    int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
    { (void)d; (void)n; return 0; }]=] HOFF_HAVE_LIBFUZZER)
  unset(CMAKE_REQUIRED_FLAGS)
  unset(CMAKE_REQUIRED_LINK_OPTIONS)
  if(HOFF_HAVE_LIBFUZZER)
    set(HOFF_FUZZ_SRC
      ${CMAKE_SOURCE_DIR}/src/hoff.c ${CMAKE_SOURCE_DIR}/src/graph.c
      ${CMAKE_SOURCE_DIR}/src/strmap.c ${CMAKE_SOURCE_DIR}/src/sched.c
      ${CMAKE_SOURCE_DIR}/formats/jscan.c ${CMAKE_SOURCE_DIR}/formats/fileio.c
      ${CMAKE_SOURCE_DIR}/formats/graph_json.c
      ${CMAKE_SOURCE_DIR}/formats/sched_json.c)
    foreach(kind graph sched)
      add_executable(fuzz_${kind}
        ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_${kind}.c ${HOFF_FUZZ_SRC})
      target_include_directories(fuzz_${kind} PRIVATE
        ${CMAKE_SOURCE_DIR}/src ${CMAKE_SOURCE_DIR}/formats)
      target_compile_options(fuzz_${kind} PRIVATE
        -fsanitize=fuzzer,address,undefined -fno-omit-frame-pointer -g)
      target_link_options(fuzz_${kind} PRIVATE
        -fsanitize=fuzzer,address,undefined)
      target_link_libraries(fuzz_${kind} PRIVATE PkgConfig::CJSON
        ${MATH_LIB})
    endforeach()
    message(STATUS "hoffopt: libFuzzer targets fuzz_graph, fuzz_sched")
  endif()
endif()

# The PyTorch front end (formats/torch, tests/torch): one ctest test a group
# of test_export.py, run by Debian's interpreter (the one python3-torch
# installs into); skipped (exit 77) without it or without torch.
find_program(HOFF_SYSTEM_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
# A group of another file is MODULE.GROUP; its test is torch_GROUP.
# test_replay.Resnet and test_replay.Vit are the heavy ones (a minute or
# two each on a busy 2-core machine): one ctest test each, run once.
foreach(spec Models Memory Unit Gen test_frontend.Outputs test_frontend.Args
        test_frontend.V2 test_replay.Small test_replay.Resnet
        test_replay.Vit)
  string(REGEX REPLACE "^.*[.]" "" group ${spec})
  if(HOFF_SYSTEM_PYTHON3)
    add_test(NAME torch_${group}
      COMMAND ${HOFF_SYSTEM_PYTHON3} -B
              ${CMAKE_CURRENT_SOURCE_DIR}/torch/run.py ${spec})
  else()
    add_test(NAME torch_${group} COMMAND sh -c "echo no /usr/bin/python3; exit 77")
  endif()
  set_tests_properties(torch_${group} PROPERTIES
    SKIP_RETURN_CODE 77 TIMEOUT 900 ENVIRONMENT "${HOFF_TEST_ENV}")
endforeach()
