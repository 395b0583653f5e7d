/* What an mbedTLS 4.0 install reports about its version: all the version guard reads. */
#ifndef RESPLOCK_TESTS_STUB_MBEDTLS_BUILD_INFO_H
#define RESPLOCK_TESTS_STUB_MBEDTLS_BUILD_INFO_H
#define MBEDTLS_VERSION_MAJOR 4
#define MBEDTLS_VERSION_MINOR 0
#define MBEDTLS_VERSION_PATCH 0
#define MBEDTLS_VERSION_NUMBER 0x04000000
#define MBEDTLS_VERSION_STRING "4.0.0"
#endif
