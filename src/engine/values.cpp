// catalog::catalog compiles <catalog/impl/engine/values.ipp> here; a header-only host compiles it
// through <catalog/src.hpp> instead.
#include <catalog/impl/engine/values.ipp>
