// catalog::catalog compiles <catalog/impl/fqn.ipp> here; a header-only host compiles it
// through <catalog/src.hpp> instead.
#include <catalog/impl/fqn.ipp>
