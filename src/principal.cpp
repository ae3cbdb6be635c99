// catalog::catalog compiles <catalog/impl/principal.ipp> here; a header-only host compiles it
// through <catalog/src.hpp> instead.
#include <catalog/impl/principal.ipp>
