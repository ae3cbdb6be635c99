// catalog::catalog compiles <catalog/impl/json.ipp> here; a header-only host compiles it
// through <catalog/src.hpp> instead.
#include <catalog/impl/json.ipp>
