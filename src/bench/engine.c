/* engine.c - the table of built-in engines and its checks. */
#include "bench/engine.h"

#include <string.h>

/* A static list rather than constructor-time registration: a constructor
 * in an unreferenced object of a static library is silently dropped. */
static const struct tw_engine_ops *const engines[] = {
    &tw_engine_libaio,
    &tw_engine_psync,
    &tw_engine_null,
};

enum tw_err tw_engine_check(const struct tw_engine_ops *ops, struct tw_error *err)
{
    if (!ops || !ops->name || !ops->queue)
        return tw_error_set(err, TW_EINVAL, "engine has no name or no queue hook");
    if (ops->version != TW_ENGINE_VERSION)
        return tw_error_set(err, TW_EINVAL,
                            "engine %s was written for interface version %d, "
                            "this build has %d",
                            ops->name, ops->version, TW_ENGINE_VERSION);
    if (!(ops->flags & TW_ENG_SYNC) &&
        (!ops->commit || !ops->getevents || !ops->event))
        return tw_error_set(err, TW_EINVAL,
                            "async engine %s lacks commit, getevents or event",
                            ops->name);
    return TW_OK;
}

const struct tw_engine_ops *tw_engine_find(const char *name, struct tw_error *err)
{
    for (size_t i = 0; i < sizeof(engines) / sizeof(engines[0]); i++) {
        if (strcmp(engines[i]->name, name) == 0)
            return tw_engine_check(engines[i], err) == TW_OK ? engines[i] : NULL;
    }
    tw_error_set(err, TW_EINVAL, "unknown engine \"%s\"; choose one of %s", name,
                 tw_engine_names());
    return NULL;
}

const char *tw_engine_names(void)
{
    return "libaio, psync, null";
}
