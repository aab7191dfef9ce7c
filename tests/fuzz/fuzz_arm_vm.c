/*
 * fuzz_arm_vm.c - ARM's VM answers: the first byte modulo 3 picks one VM
 * (a GET with its instance view), a list page, or an instance view alone;
 * the rest is the answer.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "azure/arm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool vm_ok(const struct tw_arm_vm *vm)
{
    if (!vm->vm.name[0] || !memchr(vm->power_state, '\0', sizeof(vm->power_state)) ||
        vm->n_data > sizeof(vm->data) / sizeof(vm->data[0]) ||
        !tw_arm_id_split(vm->vm.resource_id, NULL, 0, NULL, 0, NULL, 0))
        return false;
    for (size_t i = 0; i < vm->n_data; i++)
        if (vm->data[i].lun < 0 || vm->data[i].lun > 255 ||
            !memchr(vm->data[i].caching, '\0', sizeof(vm->data[i].caching)))
            return false;
    return true;
}

static enum tw_err each(void *arg, const struct tw_arm_vm *vm)
{
    (void)arg;
    if (!vm_ok(vm))
        abort();
    return TW_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *buf = (const char *)data + 1;
    size_t len = size - 1;
    struct tw_error err = {0};
    switch (data[0] % 3) {
    case 0: {
        static struct tw_arm_vm vm;
        enum tw_err rc = tw_arm_vm_parse(buf, len, &vm, &err);
        if (rc != TW_OK && (!err.msg[0] || vm.vm.name[0]))
            abort();
        if (rc == TW_OK && !vm_ok(&vm))
            abort();
        break;
    }
    case 1: {
        char next[512];
        enum tw_err rc = tw_arm_vm_page_parse(buf, len, each, NULL, next, sizeof(next), &err);
        if (rc != TW_OK && (!err.msg[0] || next[0]))
            abort();
        break;
    }
    default: {
        char power[16], prov[16];
        bool hib;
        enum tw_err rc = tw_arm_instance_view_parse2(buf, len, power, sizeof(power), &hib, prov,
                                                     sizeof(prov), &err);
        if (rc != TW_OK && (!err.msg[0] || power[0] || prov[0]))
            abort();
        if (!memchr(power, '\0', sizeof(power)) || !memchr(prov, '\0', sizeof(prov)))
            abort();
        break;
    }
    }
    return 0;
}
