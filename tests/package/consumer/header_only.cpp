// The header-only way to use the catalog (as with <boost/json/src.hpp>): this one translation
// unit of the program compiles the whole library; main.cpp includes the public headers as usual.
// tests/package/run.cmake builds main.cpp with this file and no libcatalog on the link line.
#include <catalog/src.hpp>
