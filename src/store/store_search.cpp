// catalog::catalog compiles <catalog/impl/store/store_search.ipp> here; a header-only host compiles it
// through <catalog/src.hpp> instead.
#include <catalog/impl/store/store_search.ipp>
