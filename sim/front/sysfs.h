#ifndef FVSIM_SYSFS_H
#define FVSIM_SYSFS_H

struct sim_config;

/* Creates (or refreshes) the fake sysfs tree under root; returns 0 or an errno. */
int sim_sysfs_write(const char *root, const struct sim_config *cfg);

#endif
