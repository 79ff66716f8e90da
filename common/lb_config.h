/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Configuration loading over libconfig: the helpers every daemon's loader
 * uses, and lb_ftable_load*(), which read a flow table (lb_ftable.h) from a
 * file. Loading only: the table's types and operations are lb_ftable.h's.
 *
 * Every error names the file, the line and the field, as
 * "mux.cfg:14: flow_table.services[0].backends[1].weight: 70000 is out of
 * range 0..65535", so an operator can go straight to it. Unknown fields are
 * errors too: a misspelt option must not be silently ignored.
 */
#ifndef LB_CONFIG_H
#define LB_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include <libconfig.h>

#include "lb_addr.h"
#include "lb_ftable.h"

#define LB_CFG_ERR_LEN 512
#define LB_CFG_FILE_LEN 256 /* a file's path as a configuration gives it, with the NUL */

struct lb_cfg_err {
	char msg[LB_CFG_ERR_LEN];
};

/* Read and parse a file; syntax errors come back as "file:line: message". */
int lb_cfg_read_file(config_t *cfg, const char *path, struct lb_cfg_err *err);

/* Format an error located at setting s (field path and line). Returns -LB_ECONFIG. */
int lb_cfg_error(struct lb_cfg_err *err, const config_setting_t *s, const char *field,
	const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Fail on any member of group whose name is not in the NULL-terminated list. */
int lb_cfg_check_fields(
	const config_setting_t *group, const char *const *allowed, struct lb_cfg_err *err);

/*
 * The setting g is a group (else refused with shape, what one looks like:
 * "expected a group { url = ...; }") whose members are all in allowed.
 */
int lb_cfg_group(const config_setting_t *g, const char *const *allowed, const char *shape,
	struct lb_cfg_err *err);

/*
 * Integer member in [min, max]; def is used when absent and !required.
 * A group that is not there (NULL) has no members.
 */
int lb_cfg_get_int(const config_setting_t *group, const char *name, bool required, long long min,
	long long max, long long def, long long *out, struct lb_cfg_err *err);

int lb_cfg_get_bool(const config_setting_t *group, const char *name, bool def, bool *out,
	struct lb_cfg_err *err);

/* An optional whole-number field, for a table of them (lb_cfg_get_u32s()). */
struct lb_cfg_u32 {
	const char *name;
	long long min, max, def; /* its range; def when absent */
	bool zero_off;		 /* 0 is allowed too (off) */
	uint32_t *out;
};

/*
 * Fields f[0..n) of group g (NULL: none there, every field its def), in
 * order. 0 or -LB_ECONFIG with err (the first refused).
 */
int lb_cfg_get_u32s(
	const config_setting_t *g, const struct lb_cfg_u32 *f, size_t n, struct lb_cfg_err *err);

/* String member; *out points into the config and lives as long as it. */
int lb_cfg_get_string(const config_setting_t *group, const char *name, bool required,
	const char *def, const char **out, struct lb_cfg_err *err);

/*
 * How a daemon takes the file names of its configuration
 * (lb_cfg_get_file()). The daemons word their refusals apart, and write a
 * name beside the file differently ("./ca.pem" or "ca.pem"): tests match
 * both, so each keeps its own.
 */
struct lb_cfg_file_rules {
	bool dot_dir;		/* the folder as dirname(3) has it: "." for none, "/" for root */
	const char *empty;	/* refuses an empty name; NULL: taken, as the folder itself */
	const char *too_long;	/* refuses a path that does not fit out */
	const char *unreadable; /* put before "PATH: why" */
};

/*
 * A file name member, relative to the folder of the configuration file
 * cfg_path unless absolute, into out[0..len) ("" when absent and not
 * required); with must_exist, it must be readable. Refused as r words it.
 */
int lb_cfg_get_file(const config_setting_t *group, const char *name, bool required, bool must_exist,
	const char *cfg_path, const struct lb_cfg_file_rules *r, char *out, size_t len,
	struct lb_cfg_err *err);

/*
 * A member naming one of n names (its index in *out); absent: def. Refused
 * naming the field and what the names are ("what" says what it is).
 */
int lb_cfg_get_name(const config_setting_t *group, const char *name, const char *const *names,
	int n, int def, const char *what, uint8_t *out, struct lb_cfg_err *err);

/*
 * A data plane worker's polling, the same two members in sluice-mux's and
 * sluice-agent's groups: busy_poll (never nap: benchmarks) and
 * idle_sleep_us, the longest nap of an idle worker (1..100000, 200 when
 * absent).
 */
int lb_cfg_get_poll(const config_setting_t *group, bool *busy_poll, uint32_t *idle_sleep_us,
	struct lb_cfg_err *err);

/* A zone name (lb_choice.h) into out[LB_ZONE_LEN]; absent: "". */
int lb_cfg_get_zone(
	const config_setting_t *group, const char *name, char *out, struct lb_cfg_err *err);

/*
 * An address member of a family allow names (LB_ADDR_V4, LB_ADDR_V6,
 * LB_ADDR_ANY, with LB_ADDR_LINK_LOCAL: lb_addr.h): a unicast address as
 * text. Refused naming the field, as lb_addr_parse() says why: not an
 * address, a prefix, a zone index, another family, unspecified,
 * multicast, link-local. Absent and not required: *af = LB_AF_NONE and out
 * all zero.
 */
int lb_cfg_get_addr(const config_setting_t *group, const char *name, bool required, unsigned allow,
	struct lb_addr *out, uint8_t *af, struct lb_cfg_err *err);

/* An IPv4 address member (lb_cfg_get_addr() with LB_ADDR_V4); 0 when absent. */
int lb_cfg_get_ipv4(const config_setting_t *group, const char *name, bool required, lb_be32_t *out,
	struct lb_cfg_err *err);

/*
 * The list member name of group, ( ... ), or with arrays [ ... ] too, into
 * *l with its length *n: its count the caller checks, in its own words.
 * Absent: refused with missing, or when missing is NULL, *l = NULL and
 * *n = 0. Neither a list nor an array: refused with shape.
 */
int lb_cfg_get_list(const config_setting_t *group, const char *name, bool arrays,
	const char *missing, const char *shape, const config_setting_t **l, int *n,
	struct lb_cfg_err *err);

/* One address of a list, with its family. */
struct lb_cfg_addr {
	struct lb_addr a;
	uint8_t af; /* LB_AF_INET or LB_AF_INET6 */
};

/*
 * A list (or array) member of min..max addresses of the families allow
 * names into out[0..*n); with min 0 the member may be absent (*n = 0).
 */
int lb_cfg_get_addr_list(const config_setting_t *group, const char *name, int min, int max,
	unsigned allow, struct lb_cfg_addr *out, uint16_t *n, struct lb_cfg_err *err);

/* The longest list lb_cfg_get_addr_split() takes. */
#define LB_CFG_ADDRS_MAX 64

/*
 * An address list of either family (lb_cfg_get_addr_list() with
 * LB_ADDR_ANY; max at most LB_CFG_ADDRS_MAX) split by family, in order:
 * the IPv4 ones into v4[0..*n4), the IPv6 ones into v6[0..*n6).
 * Returns 0, -LB_ECONFIG with err, or -LB_EINVAL when max is larger.
 */
int lb_cfg_get_addr_split(const config_setting_t *group, const char *name, int min, int max,
	lb_be32_t *v4, uint16_t *n4, struct lb_addr *v6, uint16_t *n6, struct lb_cfg_err *err);

/* "aa:bb:cc:dd:ee:ff" member. */
int lb_cfg_get_mac(const config_setting_t *group, const char *name, bool required, uint8_t out[6],
	struct lb_cfg_err *err);

/*
 * The top-level "eal" list of strings into out[0..*n) (at most max), or
 * the lab default (no hugepages, 256 MB, no PCI) when absent.
 */
int lb_cfg_get_eal(
	const config_setting_t *root, const char **out, int max, int *n, struct lb_cfg_err *err);

/*
 * Load the flow_table group: hash_seed, maglev_size and the services list.
 * Validates ranges, duplicates and that maglev_size is prime. On error *ft is
 * left empty. Returns 0 or -LB_ECONFIG / -LB_ENOMEM.
 */
int lb_ftable_load(const config_setting_t *group, struct lb_ftable *ft, struct lb_cfg_err *err);

/*
 * The flow table of a daemon's file (root). With a top-level "manager"
 * group the daemon is managed: *manager points at it, the flow_table is
 * optional and, when present, checked (a broken file is refused whole) and
 * dropped (*ignored says so); *ft stays empty. Without one, flow_table is
 * required and loaded into *ft.
 */
int lb_ftable_load_unless_managed(const config_setting_t *root, struct lb_ftable *ft,
	const config_setting_t **manager, bool *ignored, struct lb_cfg_err *err);

/*
 * The top of a daemon's configuration file, which sluice-mux and
 * sluice-agent share: the file read, the top-level field names checked,
 * the "eal" list taken, the daemon's own groups loaded by load(cfg, root),
 * then the flow table unless a "manager" group makes the daemon managed
 * (lb_ftable_load_unless_managed()). The daemon's struct keeps the results
 * in fields of the same names in both daemons; LB_CFG_DAEMON() points at them.
 */
struct lb_cfg_daemon {
	size_t size;		   /* of the daemon's struct: zeroed first, and again on error */
	const char *const *fields; /* the top-level groups allowed, NULL-terminated */
	config_t *file;		   /* keeps the strings other fields point into */
	const char **eal_args;
	int max_eal_args;
	int *n_eal_args;
	struct lb_ftable *ftable;
	const config_setting_t **manager;
	bool *ftable_ignored;
	bool *managed;
	int (*load)(void *cfg, const config_setting_t *root, struct lb_cfg_err *err);
};

#define LB_CFG_DAEMON(cfg, fields_, max_eal_args_, load_)                                          \
	{                                                                                          \
		.size = sizeof(*(cfg)), .fields = (fields_), .file = &(cfg)->file,                 \
		.eal_args = (cfg)->eal_args, .max_eal_args = (max_eal_args_),                      \
		.n_eal_args = &(cfg)->n_eal_args, .ftable = &(cfg)->ftable,                        \
		.manager = &(cfg)->manager, .ftable_ignored = &(cfg)->ftable_ignored,              \
		.managed = &(cfg)->managed, .load = (load_)                                        \
	}

/*
 * Load path as d says into cfg, the daemon's struct. On error the file is
 * destroyed and cfg left zeroed.
 * Returns 0, -LB_ECONFIG (err says where), -LB_EIO or -LB_ENOMEM.
 */
int lb_cfg_load_daemon(
	const struct lb_cfg_daemon *d, void *cfg, const char *path, struct lb_cfg_err *err);

#endif /* LB_CONFIG_H */
