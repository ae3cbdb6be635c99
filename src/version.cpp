// catalog::catalog compiles <catalog/impl/version.ipp> here; a header-only host compiles it
// through <catalog/src.hpp> instead.
#include <catalog/impl/version.ipp>
