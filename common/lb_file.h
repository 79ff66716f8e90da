/* SPDX-License-Identifier: BSD-3-Clause */
/* A small file (a certificate, a key, a configuration) read whole. */
#ifndef LB_FILE_H
#define LB_FILE_H

#include <stddef.h>

/*
 * Read path into a malloc'd, NUL-terminated *out (*len: its bytes, without
 * the NUL; len may be NULL). Returns 0, -errno, or -EFBIG when the file has
 * more than max bytes. *out is NULL on failure.
 */
int lb_read_file(const char *path, size_t max, char **out, size_t *len);

#endif /* LB_FILE_H */
