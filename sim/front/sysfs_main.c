/* fvsim-sysfs DIR: writes the sysfs tree for the device set chosen by the FVSIM_*
 * environment; fvsim-run calls it before starting the program. */
#include <stdio.h>
#include <string.h>

#include "../common/config.h"
#include "sysfs.h"

int main(int argc, char **argv)
{
	struct sim_config cfg;
	int err;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	sim_config_load(&cfg);
	err = sim_sysfs_write(argv[1], &cfg);
	if (err) {
		fprintf(stderr, "fvsim-sysfs: %s: %s\n", argv[1], strerror(err));
		return 1;
	}
	return 0;
}
