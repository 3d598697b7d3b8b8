/* The release every program and the library report (lanced --version, lancectl --version,
 * lanced_build_info); the Makefile's LIB_VERSION is the same number, for the soname's files. */
#ifndef LNC_UTIL_VERSION_H
#define LNC_UTIL_VERSION_H
#define LNC_RELEASE "0.1.0"
#endif
