/* arm_args.c - the ARM options every command shares (see arm_args.h). */
#include "cli/arm_args.h"

#include <stdio.h>
#include <string.h>

bool tw_arm_args_take(struct tw_arm_args *a, int c, const char *arg)
{
    switch (c) {
    case TW_ARM_OPT_ARM_URL: a->arm_url = arg; return true;
    case TW_ARM_OPT_IMDS_URL: a->imds_url = arg; return true;
    case TW_ARM_OPT_LOGIN_URL: a->login_url = arg; return true;
    case TW_ARM_OPT_CONFIG: a->config = arg; return true;
    case TW_ARM_OPT_SECRET_FILE: a->client_secret_file = arg; return true;
    case TW_ARM_OPT_NO_PACING: a->no_pacing = true; return true;
    default: return false;
    }
}

void tw_arm_env_close(struct tw_arm_env *env)
{
    tw_arm_cred_free(env->cred);
    tw_arm_pacer_free(env->pacer);
    volatile unsigned char *p = (volatile unsigned char *)env;
    for (size_t i = 0; i < sizeof(*env); i++)
        p[i] = 0;
}

enum tw_err tw_arm_args_open(const struct tw_arm_args *a, struct tw_arm_env *env,
                             struct tw_error *err)
{
    memset(env, 0, sizeof(*env));
    enum tw_err rc = tw_arm_cred_from_env(&env->cred_opts, a->client_secret_file, env->secret,
                                          sizeof(env->secret), err);
    if (rc != TW_OK) {
        tw_arm_env_close(env);
        return rc;
    }
    bool msi = env->cred_opts.kind == TW_ARM_CRED_MANAGED_IDENTITY;
    struct tw_az_ep_args ep = {.config_path = a->config};
    ep.url[TW_AZ_EP_ARM] = a->arm_url;
    ep.url[TW_AZ_EP_IMDS] = a->imds_url;
    ep.url[TW_AZ_EP_LOGIN] = a->login_url;
    ep.only = (1u << TW_AZ_EP_ARM) | (1u << (msi ? TW_AZ_EP_IMDS : TW_AZ_EP_LOGIN)) | a->also;
    if ((rc = tw_az_endpoints_resolve(&ep, &env->ep, err)) != TW_OK) {
        tw_arm_env_close(env);
        return rc;
    }
    env->cred_opts.imds_url = env->ep.url[TW_AZ_EP_IMDS];
    env->cred_opts.login_url = env->ep.url[TW_AZ_EP_LOGIN];
    tw_az_http_opts_default(&env->http);
    rc = tw_arm_cred_new(&env->cred_opts, &env->http, &env->cred, err);
    /* The credential keeps its own copy of the secret. */
    if (rc == TW_OK && !a->no_pacing)
        rc = tw_arm_pacer_new(NULL, &env->pacer, err);
    if (rc != TW_OK) {
        tw_arm_env_close(env);
        return rc;
    }
    return TW_OK;
}

enum tw_err tw_arm_env_client(const struct tw_arm_env *env, const char *region,
                              struct tw_arm **out, struct tw_error *err)
{
    struct tw_arm_opts o = {.arm_url = env->ep.url[TW_AZ_EP_ARM], .http = env->http,
                            .region = region};
    return tw_arm_new(&o, env->cred, env->pacer, out, err);
}

const char *tw_arm_env_cred_words(const struct tw_arm_env *env, char *buf, size_t cap)
{
    if (env->cred_opts.kind == TW_ARM_CRED_CLIENT_SECRET)
        snprintf(buf, cap, "client credentials of client %.80s in tenant %.80s (login %s)",
                 env->cred_opts.client_id, env->cred_opts.tenant_id,
                 env->ep.url[TW_AZ_EP_LOGIN]);
    else
        snprintf(buf, cap, "managed identity (IMDS %s)", env->ep.url[TW_AZ_EP_IMDS]);
    return buf;
}
