# Fails when docs/keys.md is not exactly what `dtsim keys --format markdown` prints, so that the documented keys
# cannot drift from the schema the parser enforces. Run by the docs.keys_md test as
#   cmake -DDTSIM=<dtsim> -DDOC=<docs/keys.md> -DGENERATED=<scratch file> -P check_keys_doc.cmake
execute_process(COMMAND ${DTSIM} keys --format markdown
                OUTPUT_VARIABLE generated ERROR_VARIABLE errors RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "'dtsim keys --format markdown' failed (${status}): ${errors}")
endif()
file(READ "${DOC}" committed)
if(NOT generated STREQUAL committed)
  # The fresh page is left next to the build so that the difference can be read before regenerating.
  file(WRITE "${GENERATED}" "${generated}")
  message(FATAL_ERROR "docs/keys.md differs from what 'dtsim keys --format markdown' prints now "
                      "(the new page is ${GENERATED}). Regenerate it from the repository root with\n"
                      "  build/dtsim keys --format markdown > docs/keys.md\n"
                      "and commit it.")
endif()
