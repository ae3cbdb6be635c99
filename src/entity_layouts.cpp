// catalog::catalog compiles <catalog/impl/entity_layouts.ipp> here; a header-only host compiles
// it through <catalog/src.hpp> instead.
#include <catalog/impl/entity_layouts.ipp>
