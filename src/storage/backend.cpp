// catalog::catalog compiles <catalog/impl/storage/backend.ipp> here; a header-only host compiles it
// through <catalog/src.hpp> instead.
#include <catalog/impl/storage/backend.ipp>
