// The Catch2 main, compiled once for every test program.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
