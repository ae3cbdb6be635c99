// catalog::catalog compiles <catalog/impl/store/counting.ipp> here; a header-only host compiles it
// through <catalog/src.hpp> instead.
#include <catalog/impl/store/counting.ipp>
