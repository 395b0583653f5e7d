/* What an mbedTLS 3.1 install reports about its version: all the version guard reads. */
#ifndef RESPLOCK_TESTS_STUB_MBEDTLS_BUILD_INFO_H
#define RESPLOCK_TESTS_STUB_MBEDTLS_BUILD_INFO_H
#define MBEDTLS_VERSION_MAJOR 3
#define MBEDTLS_VERSION_MINOR 1
#define MBEDTLS_VERSION_PATCH 0
#define MBEDTLS_VERSION_NUMBER 0x03010000
#define MBEDTLS_VERSION_STRING "3.1.0"
#endif
