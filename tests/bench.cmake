# bench.cmake (included by tests/CMakeLists.txt): the tests of bench/.
# bench_nightly_compare: the harness's nightly regression check. tests/test_nightly.sh runs bench/harness.py on
# data/tiny.json with the hoffopt just built, plants regressions in a copy
# of the results and checks that bench/nightly.sh's compare names them
# (exit 1) and passes a file against itself and against a rerun (exit 0).
# test_bench_index: bench/README.md indexes every file under bench/.
# Both need python3 (standard library only); the first, bash.
find_program(HOFF_BASH bash)
find_program(HOFF_PYTHON3 python3)
if(HOFF_BASH AND HOFF_PYTHON3)
  add_test(NAME bench_nightly_compare
    COMMAND ${HOFF_BASH} ${CMAKE_CURRENT_SOURCE_DIR}/test_nightly.sh
            $<TARGET_FILE:hoffopt>)
  set_tests_properties(bench_nightly_compare PROPERTIES
    TIMEOUT 300 ENVIRONMENT "${HOFF_TEST_ENV};PYTHON=${HOFF_PYTHON3}")
else()
  message(STATUS "hoffopt: bench_nightly_compare skipped (no bash or python3)")
endif()

# bench/README.md's "## Files" lists every file under bench/, and names
# no file that is not there (tests/check_bench_index.py).
if(HOFF_PYTHON3)
  add_test(NAME test_bench_index
    COMMAND ${HOFF_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/check_bench_index.py
            ${CMAKE_SOURCE_DIR})
endif()
