// catalog::catalog compiles <catalog/impl/engine/authorization.ipp> here; a header-only host
// compiles it through <catalog/src.hpp> instead.
#include <catalog/impl/engine/authorization.ipp>
