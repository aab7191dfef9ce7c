/*
 * replay.c - runs a fuzz target over every file of its corpus folder(s),
 * so the corpus is checked by ordinary ctest runs under gcc and the
 * sanitizers, without libFuzzer.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: can't open %s\n", path);
        return -1;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    /* An exact-size heap copy, so ASan sees any read past the end. */
    uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "replay: can't read %s\n", path);
        fclose(f);
        free(buf);
        return -1;
    }
    fclose(f);
    LLVMFuzzerTestOneInput(buf, (size_t)n);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    int files = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: %s does not exist\n", argv[i]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (run_file(argv[i]) != 0)
                return 1;
            files++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            if (e->d_name[0] == '.')
                continue;
            char path[4096];
            snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
            if (run_file(path) != 0) {
                closedir(d);
                return 1;
            }
            files++;
        }
        if (d)
            closedir(d);
    }
    if (files == 0) {
        fprintf(stderr, "replay: no corpus files given\n");
        return 1;
    }
    printf("replayed %d inputs\n", files);
    return 0;
}
