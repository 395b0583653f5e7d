/* As in mbedTLS 3.x and later: the version comes from build_info.h. */
#ifndef RESPLOCK_TESTS_STUB_MBEDTLS_VERSION_H
#define RESPLOCK_TESTS_STUB_MBEDTLS_VERSION_H
#include "mbedtls/build_info.h"
#endif
