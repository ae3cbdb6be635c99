// catalog::catalog compiles <catalog/impl/storage/memory_backend.ipp> here; a header-only host compiles it
// through <catalog/src.hpp> instead.
#include <catalog/impl/storage/memory_backend.ipp>
