// catalog::catalog compiles <catalog/impl/auth/jwt.ipp> here; a header-only host compiles it
// through <catalog/src.hpp> instead.
#include <catalog/impl/auth/jwt.ipp>
