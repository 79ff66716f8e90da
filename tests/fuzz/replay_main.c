/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Replay driver: the ordinary-test twin of libFuzzer's main(). Linked with
 * one harness (the same .c the fuzzer binary is built from), it feeds every
 * file under the directories given on the command line to
 * LLVMFuzzerTestOneInput, once, in sorted order. A crash, a sanitizer
 * report or a failed assertion fails the test; a missing directory (an
 * empty regressions/ folder is not kept by git) is skipped.
 */
#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static unsigned long n_inputs;

static int
run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long len;

	if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 ||
		fseek(f, 0, SEEK_SET) != 0) {
		fprintf(stderr, "replay: cannot read %s\n", path);
		if (f != NULL)
			fclose(f);
		return -1;
	}
	/* Exactly len bytes, so ASan sees any read past the input. */
	buf = malloc(len ? (size_t)len : 1);
	if (buf == NULL || fread(buf, 1, (size_t)len, f) != (size_t)len) {
		fprintf(stderr, "replay: cannot read %s\n", path);
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)len);
	free(buf);
	n_inputs++;
	return 0;
}

static int
run_path(const char *path)
{
	struct dirent **ents;
	struct stat st;
	char sub[4096];
	int i, n, rc = 0;

	if (stat(path, &st) != 0)
		return 0;
	if (!S_ISDIR(st.st_mode))
		return S_ISREG(st.st_mode) ? run_file(path) : 0;
	n = scandir(path, &ents, NULL, alphasort);
	if (n < 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (ents[i]->d_name[0] != '.' && strcmp(ents[i]->d_name, "README") != 0) {
			snprintf(sub, sizeof(sub), "%s/%s", path, ents[i]->d_name);
			if (run_path(sub) != 0)
				rc = -1;
		}
		free(ents[i]);
	}
	free(ents);
	return rc;
}

int
main(int argc, char **argv)
{
	int i, rc = 0;

	if (LLVMFuzzerInitialize != NULL)
		LLVMFuzzerInitialize(&argc, &argv);
	for (i = 1; i < argc; i++)
		if (run_path(argv[i]) != 0)
			rc = 1;
	printf("replay: %lu inputs, %s\n", n_inputs, rc == 0 ? "ok" : "unreadable files");
	if (n_inputs == 0) {
		fprintf(stderr, "replay: no inputs found\n");
		rc = 1;
	}
	return rc;
}
