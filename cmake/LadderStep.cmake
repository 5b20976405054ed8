# A folder is a plug-in: its CMakeLists.txt declares what the shared tests and scripts need with one
# ladder_folder(...) call, then one add_step(...) line per step. Adding a folder touches that folder
# and one line of the top-level LADDER_FOLDERS list; tests/ and scripts/ read the declarations from
# build/ladder_folders.txt and build/ladder_steps.txt, generated here.
#
# ladder_folder(
#   SIZE_FLAGS    --m --n --k              the size flags (the contract tests try bad values on each)
#   TEST_ARGS     --m 7 --n 33 --k 65      small awkward size of each step's own ctest
#   CEILING_TEST  05_2d_blocktiling        this step's ctest also runs once with the ceiling on
#   OVERSIZED     "--m 2^40 ..." ...       sizes no machine holds: exit 3 naming the bytes
#   SANITIZE      "--m 67 ..." ...         compute-sanitizer sizes that reach every code path
#   LARGE         "--n 2^31+7" ...         past 2^31 elements: ctest label "large", run serially
#   LARGE_EXCLUDE 00_cpu 01_single_thread  steps too slow for LARGE (by name)
#   NCU_SECTIONS  SpeedOfLight ...         Nsight Compute sections for scripts/profile.sh
#   NCU_METRICS   dram__throughput...      the metrics the chapter cites (profile.sh summary)
#   LIBRARIES     ladder_blas              extra libraries of the folder's harness
# )
#
# Each quoted argument of OVERSIZED, SANITIZE and LARGE is one set of flags.
function(ladder_folder)
  set(lists SIZE_FLAGS TEST_ARGS OVERSIZED SANITIZE LARGE LARGE_EXCLUDE NCU_SECTIONS NCU_METRICS
            LIBRARIES)
  cmake_parse_arguments(F "" "CEILING_TEST" "${lists}" ${ARGN})
  get_filename_component(folder ${CMAKE_CURRENT_SOURCE_DIR} NAME)
  foreach(required SIZE_FLAGS TEST_ARGS OVERSIZED SANITIZE NCU_SECTIONS)
    if(NOT F_${required})
      message(FATAL_ERROR "ladder_folder() in ${folder}: ${required} is required")
    endif()
  endforeach()
  if(NOT F_CEILING_TEST)
    message(FATAL_ERROR "ladder_folder() in ${folder}: CEILING_TEST (one step run with its ceiling) is required")
  endif()
  foreach(key ${lists} CEILING_TEST)
    set(LADDER_${key} "${F_${key}}" PARENT_SCOPE)
  endforeach()

  # One "folder.key=value" line per value, for tests/ and scripts/: the word lists on one line
  # each, every set of flags of OVERSIZED, SANITIZE and LARGE on a line of its own.
  foreach(key SIZE_FLAGS TEST_ARGS CEILING_TEST NCU_SECTIONS NCU_METRICS LARGE_EXCLUDE)
    string(TOLOWER ${key} lower)
    list(JOIN F_${key} " " words)
    set_property(GLOBAL APPEND PROPERTY LADDER_FOLDER_LINES "${folder}.${lower}=${words}")
  endforeach()
  foreach(key OVERSIZED SANITIZE LARGE)
    string(TOLOWER ${key} lower)
    foreach(args IN LISTS F_${key})
      set_property(GLOBAL APPEND PROPERTY LADDER_FOLDER_LINES "${folder}.${lower}=${args}")
    endforeach()
  endforeach()
  set_property(GLOBAL APPEND PROPERTY LADDER_DECLARED_FOLDERS ${folder})
endfunction()

# add_step(<NN_name> [TUNABLE] [NEEDS sm_XY[a] "feature"] [TEST_ARGS args...] [SANITIZE "flags" ...])
#
# TEST_ARGS and SANITIZE replace the folder's for this step alone (a step with its own sizes: a
# side ladder with other size flags, a step with a size limit). TUNABLE marks a step whose tile or
# variant is chosen at run time (--tile, --variant): the GPU tests run each of its candidates.
# NEEDS is the step's one declared requirement: the oldest GPU architecture it runs on (sm_80: that
# or newer; sm_90a: an sm_90 GPU and no other, for architecture-specific instructions) and the
# feature that needs it ("cp.async"). A step without NEEDS runs on every GPU the suite supports
# (sm_70 on). The step executable is compiled with it (common/step.h: it is checked when the device
# is opened, printed by --help), and the tests read it from build/ladder_folders.txt: on a device
# (or device profile) that lacks it the step exits 2 with "unsupported: <id> needs sm_80 ..." and
# every test of it is a skip with that reason; on one that has it, a refusal is a failure.
# Builds <folder>/<NN_name>.cu into build/bin/<folder>_<NN_name>, linked with the folder's harness
# (<folder>/<folder>.cu, built once per folder as <folder>_harness), and registers ctests:
#   <folder>_<NN_name>               the step at the folder's TEST_ARGS (or the step's own, for a
#                                    step with a size limit), --no-ceiling; label gpu; 77 = skipped
#   <folder>_<NN_name>_with_ceiling  for the folder's CEILING_TEST step: the ceiling (and transfer
#                                    floor) code paths at a small size
#   large_<folder>_<NN_name>_<i>     each LARGE size, unless the step is in LARGE_EXCLUDE; labels
#                                    gpu and large, one at a time (they fill much of a GPU)
# Every step is also recorded in build/ladder_steps.txt for the GPU tests and the scripts.
function(add_step name)
  cmake_parse_arguments(STEP "TUNABLE" "" "TEST_ARGS;SANITIZE;NEEDS" ${ARGN})
  get_filename_component(folder ${CMAKE_CURRENT_SOURCE_DIR} NAME)
  if(STEP_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "add_step(${name}) in ${folder}: unknown arguments ${STEP_UNPARSED_ARGUMENTS}")
  endif()
  set(needs_arch "")
  set(needs_feature "")
  if(STEP_NEEDS)
    list(POP_FRONT STEP_NEEDS needs_arch)
    list(JOIN STEP_NEEDS " " needs_feature)
    if(NOT needs_arch MATCHES "^sm_[0-9]+a?$" OR needs_feature STREQUAL "")
      message(FATAL_ERROR "add_step(${name}) in ${folder}: NEEDS takes an architecture (sm_80, sm_90a) and "
                          "the feature that needs it, e.g. NEEDS sm_80 \"cp.async\"")
    endif()
  endif()
  if(NOT DEFINED LADDER_SIZE_FLAGS)
    message(FATAL_ERROR "${folder}/CMakeLists.txt: call ladder_folder(...) before add_step()")
  endif()
  set(harness ${folder}_harness)
  if(NOT TARGET ${harness})
    add_library(${harness} STATIC ${CMAKE_CURRENT_SOURCE_DIR}/${folder}.cu)
    target_link_libraries(${harness} PUBLIC ladder_common ${LADDER_LIBRARIES})
  endif()

  set(target ${folder}_${name})
  add_executable(${target} ${CMAKE_CURRENT_SOURCE_DIR}/${name}.cu ${PROJECT_SOURCE_DIR}/common/step_main.cpp)
  target_compile_definitions(${target} PRIVATE LADDER_STEP_ID="${folder}/${name}"
                             LADDER_STEP_NEEDS="${needs_arch}" LADDER_STEP_NEEDS_FOR="${needs_feature}")
  target_link_libraries(${target} PRIVATE ${harness})
  set_target_properties(${target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${LADDER_BIN_DIR})

  set(test_args ${LADDER_TEST_ARGS})
  if(STEP_TEST_ARGS)
    set(test_args ${STEP_TEST_ARGS})
    list(JOIN STEP_TEST_ARGS " " words)
    set_property(GLOBAL APPEND PROPERTY LADDER_FOLDER_LINES "${folder}.test_args.${name}=${words}")
  endif()
  if(STEP_TUNABLE)
    set_property(GLOBAL APPEND PROPERTY LADDER_FOLDER_LINES "${folder}.tunable=${name}")
  endif()
  if(needs_arch)
    set_property(GLOBAL APPEND PROPERTY LADDER_FOLDER_LINES "${folder}.needs.${name}=${needs_arch} ${needs_feature}")
  endif()
  foreach(args IN LISTS STEP_SANITIZE)
    set_property(GLOBAL APPEND PROPERTY LADDER_FOLDER_LINES "${folder}.sanitize.${name}=${args}")
  endforeach()
  # Skipped: exit 77 (no GPU), or the step's own line saying the device lacks its declared NEEDS,
  # that architecture and no other (the only refusal that is a skip here; any other exit 2 fails, a
  # step without NEEDS never skips, and the GPU tests judge each refusal against the declaration and
  # the device independently: tests/step_runner.h, judge()).
  set(skips SKIP_RETURN_CODE 77)
  if(needs_arch)
    list(APPEND skips SKIP_REGULAR_EXPRESSION "unsupported: ${folder}/${name} needs ${needs_arch}[ ,]")
  endif()
  # Label "step" as well: `ctest -L step` runs each step once, checked, the quick look at a new GPU.
  add_test(NAME ${target} COMMAND ${target} ${test_args} --no-ceiling --reps 3 --warmup 1)
  set_tests_properties(${target} PROPERTIES LABELS "gpu;step" ${skips} TIMEOUT 300)
  if(name STREQUAL LADDER_CEILING_TEST)
    add_test(NAME ${target}_with_ceiling COMMAND ${target} ${test_args} --reps 3 --warmup 1)
    set_tests_properties(${target}_with_ceiling PROPERTIES LABELS "gpu;step" ${skips} TIMEOUT 300)
  endif()
  if(NOT name IN_LIST LADDER_LARGE_EXCLUDE)
    set(i 0)
    foreach(args IN LISTS LADDER_LARGE)
      separate_arguments(args UNIX_COMMAND "${args}")
      add_test(NAME large_${target}_${i} COMMAND ${target} ${args} --no-ceiling --reps 1 --warmup 0)
      set_tests_properties(large_${target}_${i} PROPERTIES LABELS "gpu;large" ${skips}
                           TIMEOUT 600 RUN_SERIAL TRUE)
      math(EXPR i "${i} + 1")
    endforeach()
  endif()

  set_property(GLOBAL APPEND PROPERTY LADDER_STEPS "${folder}/${name}=$<TARGET_FILE:${target}>")
  set_property(GLOBAL APPEND PROPERTY LADDER_STEP_TARGETS ${target})
endfunction()
