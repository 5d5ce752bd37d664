# dtsim_check_layering(<target> <name> <dir> ALLOWED <prefix>... FORBIDDEN <prefix>...): the build of <target> first
# runs cmake/check_layering.cmake over <dir>, so that it fails when a file there includes a header whose path starts
# with a FORBIDDEN prefix (and no ALLOWED one). Used for the top-level layers (gpu ← models ← sim) and, through
# dtsim_layer() in sim/CMakeLists.txt, for each layer inside sim/.

# Found next to this file, so that a project other than dtsim (the fixture of the layering.build_* tests) can use it.
set(DTSIM_CHECK_LAYERING_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/check_layering.cmake)

function(dtsim_check_layering target name dir)
  cmake_parse_arguments(PARSE_ARGV 3 arg "" "" "ALLOWED;FORBIDDEN")
  file(GLOB_RECURSE layer_files CONFIGURE_DEPENDS ${dir}/*.cpp ${dir}/*.hpp ${dir}/*.cu ${dir}/*.cuh)
  set(stamp ${CMAKE_CURRENT_BINARY_DIR}/layering_${target}.stamp)
  # A list must reach cmake -P as one argument that still holds its ';'. A raw ';' would split the argument in
  # two, and an escaped "\;" arrives as a literal backslash (one prefix "models/\;sim/" that matches nothing, so
  # the check passed everything); $<SEMICOLON> becomes a plain ';' inside the one quoted argument.
  string(REPLACE ";" "$<SEMICOLON>" allowed_arg "${arg_ALLOWED}")
  string(REPLACE ";" "$<SEMICOLON>" forbidden_arg "${arg_FORBIDDEN}")
  add_custom_command(OUTPUT ${stamp}
    COMMAND ${CMAKE_COMMAND} -DLAYER=${name} -DDIR=${dir}
            "-DALLOWED=${allowed_arg}" "-DFORBIDDEN=${forbidden_arg}" -DSTAMP=${stamp}
            -P ${DTSIM_CHECK_LAYERING_SCRIPT}
    DEPENDS ${layer_files} ${DTSIM_CHECK_LAYERING_SCRIPT}
    COMMENT "Checking that ${name} includes no higher layer"
    VERBATIM)
  add_custom_target(${target}_layering DEPENDS ${stamp})
  add_dependencies(${target} ${target}_layering)
endfunction()
