/* Diagnostics on stderr, filtered by FVSIM_LOG (error, warn, info, debug). */
#ifndef FVSIM_LOG_H
#define FVSIM_LOG_H

enum { SIM_LOG_ERR, SIM_LOG_WARN, SIM_LOG_INFO, SIM_LOG_DEBUG };

extern int sim_log_level;

void sim_log_init(void);
void sim_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define SIM_LOG(level, ...)                                   \
	do {                                                  \
		if (sim_log_level >= (level))                 \
			sim_log((level), __VA_ARGS__);        \
	} while (0)
#define sim_err(...) SIM_LOG(SIM_LOG_ERR, __VA_ARGS__)
#define sim_warn(...) SIM_LOG(SIM_LOG_WARN, __VA_ARGS__)
#define sim_info(...) SIM_LOG(SIM_LOG_INFO, __VA_ARGS__)
#define sim_dbg(...) SIM_LOG(SIM_LOG_DEBUG, __VA_ARGS__)

#endif
