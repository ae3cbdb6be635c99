// catalog::catalog compiles <catalog/impl/kind.ipp> here; a header-only host compiles it
// through <catalog/src.hpp> instead.
#include <catalog/impl/kind.ipp>
