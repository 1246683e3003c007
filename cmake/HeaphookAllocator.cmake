# Building preloadable allocator libraries.
#
#   heaphook_add_allocator(<name> [SOURCES <files>...] [GETTER <function>] [LINK <targets>...])
#
# Builds lib<name>.so from an allocator (a source file that fills an
# hh_allocator and exports it with HH_EXPORT_ALLOCATOR, or a linked target
# with a GETTER) plus heaphook's hook layer and recorders. The result can be
# preloaded (LD_PRELOAD=lib<name>.so); when the allocator is exported with
# HH_EXPORT_ALLOCATOR (no GETTER), libheaphook.so can also load it with
# HEAPHOOK_ALLOCATOR=/path/to/lib<name>.so.
#
#   build_library(<name> <sources>...)
#
# tier4 heaphook's form: lib<name>.so from a C++ allocator, a subclass of
# heaphook::GlobalAllocator with GlobalAllocator::get_instance() defined
# (include/heaphook/heaphook.hpp); preloaded, or loaded with
# HEAPHOOK_ALLOCATOR, as above. Reports and hh_allocator_of name it <name>.
#
#   heaphook_add_conformance(...)  see HeaphookConformance.cmake
find_package(Threads REQUIRED)
set(HEAPHOOK_SOURCE_DIR ${CMAKE_CURRENT_LIST_DIR}/.. CACHE INTERNAL "heaphook source tree")

function(heaphook_preload_link_options target)
  target_link_options(${target} PRIVATE
    -Wl,--version-script=${HEAPHOOK_SOURCE_DIR}/src/hook/exports.map
    -Wl,-z,now -Wl,--no-undefined)
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${HEAPHOOK_SOURCE_DIR}/src/hook/exports.map)
endfunction()

function(heaphook_add_allocator name)
  cmake_parse_arguments(A "" "GETTER" "SOURCES;LINK" ${ARGN})
  if(NOT A_GETTER)
    set(A_GETTER hh_allocator_get)
  endif()
  add_library(${name} SHARED ${A_SOURCES}
    ${HEAPHOOK_SOURCE_DIR}/src/hook/entry.c
    ${HEAPHOOK_SOURCE_DIR}/src/hook/cxx.c
    ${HEAPHOOK_SOURCE_DIR}/src/hook/exec.c
    ${HEAPHOOK_SOURCE_DIR}/src/hook/dl.c
    ${HEAPHOOK_SOURCE_DIR}/src/hook/exit.c
    ${HEAPHOOK_SOURCE_DIR}/src/hook/jump.c
    ${HEAPHOOK_SOURCE_DIR}/src/hook/fds.c
    ${HEAPHOOK_SOURCE_DIR}/src/preload/select_fixed.c)
  target_compile_definitions(${name} PRIVATE HH_FIXED_ALLOCATOR=${A_GETTER})
  target_link_libraries(${name} PRIVATE hh_hook_core ${A_LINK})
  heaphook_preload_link_options(${name})
endfunction()

function(build_library name)
  heaphook_add_allocator(${name} SOURCES ${ARGN} ${HEAPHOOK_SOURCE_DIR}/src/preload/global_allocator.cpp)
  target_compile_definitions(${name} PRIVATE HH_GLOBAL_ALLOCATOR_NAME="${name}")
endfunction()
