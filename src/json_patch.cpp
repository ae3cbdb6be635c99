// catalog::catalog compiles <catalog/impl/json_patch.ipp> here; a header-only host compiles it
// through <catalog/src.hpp> instead.
#include <catalog/impl/json_patch.ipp>
