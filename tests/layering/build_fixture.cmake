# Configures and builds tests/layering/project on one fixture folder and fails when the build does, printing its
# output. Unlike running check_layering.cmake by hand, this covers how the build hands the prefix lists to it.
#   cmake -DFIXTURE=<folder> -DWORK=<scratch build folder> -P build_fixture.cmake
file(REMOVE_RECURSE "${WORK}")
execute_process(COMMAND ${CMAKE_COMMAND} -S ${CMAKE_CURRENT_LIST_DIR}/project -B ${WORK} -DFIXTURE=${FIXTURE}
                RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "configuring the fixture project failed:\n${output}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK}
                RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
message("${output}")
if(NOT status EQUAL 0)
  message(FATAL_ERROR "building the fixture project failed")
endif()
