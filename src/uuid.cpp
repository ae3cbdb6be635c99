// catalog::catalog compiles <catalog/impl/uuid.ipp> here; a header-only host compiles it
// through <catalog/src.hpp> instead.
#include <catalog/impl/uuid.ipp>
