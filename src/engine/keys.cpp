// catalog::catalog compiles <catalog/impl/engine/keys.ipp> here; a header-only host compiles it
// through <catalog/src.hpp> instead.
#include <catalog/impl/engine/keys.ipp>
