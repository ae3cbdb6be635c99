# FindUtf8proc: utf8proc (Unicode normalization and case folding; Debian libutf8proc-dev) ships
# no CMake package; this finds its header and library.
# Defines Utf8proc_FOUND and the imported target Utf8proc::Utf8proc.
find_path(Utf8proc_INCLUDE_DIR NAMES utf8proc.h)
find_library(Utf8proc_LIBRARY NAMES utf8proc)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Utf8proc REQUIRED_VARS Utf8proc_LIBRARY Utf8proc_INCLUDE_DIR)
if(Utf8proc_FOUND AND NOT TARGET Utf8proc::Utf8proc)
  add_library(Utf8proc::Utf8proc UNKNOWN IMPORTED)
  set_target_properties(Utf8proc::Utf8proc PROPERTIES
    IMPORTED_LOCATION "${Utf8proc_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${Utf8proc_INCLUDE_DIR}")
endif()
mark_as_advanced(Utf8proc_INCLUDE_DIR Utf8proc_LIBRARY)
