# The allocator conformance suite (tests/conformance/) as CMake functions.
#
# heaphook_add_conformance(NAME <name> ALLOCATOR_TARGET <static lib> TABLE <getter>)
#   Builds conformance_direct_<name>: the checks and main_direct.c, calling the
#   hook layer's hh__* functions with the allocator returned by the C function
#   <getter> (const hh_allocator *<getter>(void), provided by <static lib>),
#   under ${HH_SANITIZE_FLAGS}; linked with hh_hook_core. Registers the test
#   conformance.direct.<name>.
#
# heaphook_add_conformance_preload(NAME <name> LIBRARY <shared lib target> [ENV k=v ...])
#   Registers conformance.preload.<name>: hh_conformance (the libc-names build,
#   made by tests/conformance/CMakeLists.txt, or here when the tests are not
#   built) run with LD_PRELOAD=$<TARGET_FILE:<shared lib>> and the extra
#   environment.
#
# Both are there wherever heaphook is added (the top CMakeLists.txt includes
# this file), BUILD_TESTING or not, so that a project of its own that adds
# heaphook with add_subdirectory (README, "Writing an allocator") can call
# them; its tests need enable_testing() in its own CMakeLists.txt.
#
# Both tests run every check in a forked child (a crash fails one check, not
# the run); set HH_CONFORMANCE_FORK=0 in ENV to run in one process (e.g. when
# a recorder should see the whole run as one process).
include_guard(GLOBAL)

find_package(Threads REQUIRED)

set(HH_CONFORMANCE_DIR "${CMAKE_CURRENT_LIST_DIR}/../tests/conformance"
    CACHE INTERNAL "Sources of the allocator conformance suite")
set(HH_CONFORMANCE_CHECKS
    ${HH_CONFORMANCE_DIR}/checks_runner.c
    ${HH_CONFORMANCE_DIR}/checks_semantics.c
    ${HH_CONFORMANCE_DIR}/checks_alignment.c
    ${HH_CONFORMANCE_DIR}/checks_content.c
    ${HH_CONFORMANCE_DIR}/checks_random.c
    ${HH_CONFORMANCE_DIR}/checks_threads.c
    ${HH_CONFORMANCE_DIR}/checks_libc.c
    CACHE INTERNAL "Check sources of the allocator conformance suite")

# The sanitizers of the builds linked directly (the unit tests' too): a cache
# variable, so that a function called from another project's directory sees it.
set(HH_SANITIZE_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
    CACHE INTERNAL "Sanitizer flags of the tests that link heaphook's code directly")

# Wall-clock limits of the tests, in seconds: the suite takes a few seconds
# natively and well under a minute under ASan on 2 cores.
set(HH_CONFORMANCE_TIMEOUT 300 CACHE STRING "ctest timeout of a conformance run")

function(heaphook_add_conformance)
  cmake_parse_arguments(ARG "" "NAME;ALLOCATOR_TARGET;TABLE" "" ${ARGN})
  if(NOT ARG_NAME OR NOT ARG_ALLOCATOR_TARGET OR NOT ARG_TABLE)
    message(FATAL_ERROR "heaphook_add_conformance: NAME, ALLOCATOR_TARGET and TABLE are required")
  endif()
  if(NOT TARGET Threads::Threads) # imported targets are per directory
    find_package(Threads REQUIRED)
  endif()
  set(tgt conformance_direct_${ARG_NAME})
  add_executable(${tgt} ${HH_CONFORMANCE_DIR}/main_direct.c ${HH_CONFORMANCE_CHECKS})
  target_include_directories(${tgt} PRIVATE
    ${HH_CONFORMANCE_DIR} ${HH_CONFORMANCE_DIR}/../../src ${HH_CONFORMANCE_DIR}/../../include)
  target_compile_definitions(${tgt} PRIVATE HH_CONFORMANCE_TABLE=${ARG_TABLE})
  target_compile_options(${tgt} PRIVATE ${HH_SANITIZE_FLAGS} -fno-builtin)
  target_link_options(${tgt} PRIVATE ${HH_SANITIZE_FLAGS})
  target_link_libraries(${tgt} PRIVATE hh_hook_core ${ARG_ALLOCATOR_TARGET} Threads::Threads)
  add_test(NAME conformance.direct.${ARG_NAME} COMMAND ${tgt})
  set_tests_properties(conformance.direct.${ARG_NAME} PROPERTIES
    TIMEOUT ${HH_CONFORMANCE_TIMEOUT} LABELS "conformance")
endfunction()

# hh_conformance: the suite on the libc names, made once, in the directory
# that first asks for it. No sanitizer: ASan would take the libc names itself.
function(heaphook_conformance_program)
  if(TARGET hh_conformance)
    return()
  endif()
  if(NOT TARGET Threads::Threads)
    find_package(Threads REQUIRED)
  endif()
  add_executable(hh_conformance ${HH_CONFORMANCE_DIR}/main_libc.c ${HH_CONFORMANCE_CHECKS})
  target_include_directories(hh_conformance PRIVATE ${HH_CONFORMANCE_DIR})
  # The checks pass impossible sizes on purpose: keep gcc from reasoning about
  # the malloc family (main_libc.c also takes their addresses via volatile).
  target_compile_options(hh_conformance PRIVATE -fno-builtin)
  target_link_libraries(hh_conformance PRIVATE Threads::Threads)
endfunction()

function(heaphook_add_conformance_preload)
  cmake_parse_arguments(ARG "" "NAME;LIBRARY" "ENV" ${ARGN})
  if(NOT ARG_NAME OR NOT ARG_LIBRARY)
    message(FATAL_ERROR "heaphook_add_conformance_preload: NAME and LIBRARY are required")
  endif()
  heaphook_conformance_program()
  set(test conformance.preload.${ARG_NAME})
  add_test(NAME ${test} COMMAND $<TARGET_FILE:hh_conformance>)
  set_tests_properties(${test} PROPERTIES
    ENVIRONMENT "LD_PRELOAD=$<TARGET_FILE:${ARG_LIBRARY}>;${ARG_ENV}"
    TIMEOUT ${HH_CONFORMANCE_TIMEOUT} LABELS "conformance")
endfunction()
