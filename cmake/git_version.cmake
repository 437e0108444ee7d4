# Run at every build (cmake -DSOURCE_DIR=... -DOUT=... -P git_version.cmake): writes OUT with the
# checkout's `git describe`, touching it only when the text changes, so that --version names the
# commit a binary was built from without rebuilding anything else.
execute_process(COMMAND git -C "${SOURCE_DIR}" describe --always --dirty --tags
                OUTPUT_VARIABLE describe OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR describe STREQUAL "")
  set(describe "not built from a git checkout")
else()
  set(describe "git ${describe}")
endif()
set(text "#define SHAPESCOPE_GIT \"${describe}\"\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT "${old}" STREQUAL "${text}")
  file(WRITE "${OUT}" "${text}")
endif()
