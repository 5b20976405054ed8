# add_step(<NN_name> [TEST_ARGS args...])
#
# Called from a folder's CMakeLists.txt, one line per step. Builds <folder>/<NN_name>.cu into
# build/bin/<folder>_<NN_name>, linked with the folder's harness (<folder>/<folder>.cu, built once
# per folder as <folder>_harness), and registers the executable as a ctest at a small size:
# label "gpu", exit 77 (no usable device) reported as skipped. TEST_ARGS are the small-size flags.
# Every step is also recorded for tests/ (GPU tests of every registered step) and scripts/.
function(add_step name)
  cmake_parse_arguments(STEP "" "" "TEST_ARGS" ${ARGN})
  get_filename_component(folder ${CMAKE_CURRENT_SOURCE_DIR} NAME)
  set(harness ${folder}_harness)
  if(NOT TARGET ${harness})
    add_library(${harness} STATIC ${CMAKE_CURRENT_SOURCE_DIR}/${folder}.cu)
    target_link_libraries(${harness} PUBLIC ladder_common)
  endif()

  set(target ${folder}_${name})
  add_executable(${target} ${CMAKE_CURRENT_SOURCE_DIR}/${name}.cu ${PROJECT_SOURCE_DIR}/common/step_main.cpp)
  target_compile_definitions(${target} PRIVATE LADDER_STEP_ID="${folder}/${name}")
  target_link_libraries(${target} PRIVATE ${harness})
  set_target_properties(${target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${LADDER_BIN_DIR})

  add_test(NAME ${target} COMMAND ${target} ${STEP_TEST_ARGS} --no-ceiling --reps 3 --warmup 1)
  set_tests_properties(${target} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 300)

  set_property(GLOBAL APPEND PROPERTY LADDER_STEPS "${folder}/${name}=$<TARGET_FILE:${target}>")
  set_property(GLOBAL APPEND PROPERTY LADDER_STEP_TARGETS ${target})
endfunction()
