// catalog::catalog compiles <catalog/impl/engine/lifecycle.ipp> here; a header-only host compiles it
// through <catalog/src.hpp> instead.
#include <catalog/impl/engine/lifecycle.ipp>
