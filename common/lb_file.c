/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "lb_file.h"

int
lb_read_file(const char *path, size_t max, char **out, size_t *len)
{
	FILE *f = fopen(path, "r");
	size_t cap = 4096, n = 0;
	char *buf = NULL, *grown;
	int rc = 0;

	*out = NULL;
	if (f == NULL)
		return -errno;
	errno = 0;
	/* Grown as it is read: sockets and pipes have no size to ask first. */
	for (;;) {
		if (n == cap || buf == NULL) {
			if (buf != NULL)
				cap *= 2;
			if ((grown = realloc(buf, cap + 1)) == NULL) {
				rc = -ENOMEM;
				break;
			}
			buf = grown;
		}
		n += fread(buf + n, 1, cap - n, f);
		if (n > max) {
			rc = -EFBIG;
			break;
		}
		if (ferror(f)) {
			rc = errno != 0 ? -errno : -EIO; /* EISDIR for a folder */
			break;
		}
		if (feof(f))
			break;
	}
	fclose(f);
	if (rc != 0) {
		free(buf);
		return rc;
	}
	buf[n] = '\0';
	*out = buf;
	if (len != NULL)
		*len = n;
	return 0;
}
