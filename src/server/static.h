/*
 * static.h - the dashboard's files from a web directory: safe path
 * resolution and content types.
 *
 * A request path is served only when every segment is a plain name (no
 * "..", no ".", no empty segment, no backslash, no control character,
 * nothing hidden) and the file it names, after resolving symbolic links,
 * is a regular file inside the web directory.  "/" is index.html.
 * These files carry no data, so they are served without a token.
 */
#ifndef TW_SERVER_STATIC_H
#define TW_SERVER_STATIC_H

#include <stdbool.h>
#include <stddef.h>

#include "core/err.h"

#define TW_STATIC_MAX_FILE (8u << 20) /* a larger file is not served */

/* The content type for a file name by its extension ("text/html;
 * charset=utf-8", ..., "application/octet-stream"). */
const char *tw_static_content_type(const char *name);

/*
 * Checks the request path URL_PATH and turns it into a path relative to
 * the web directory in REL (RELLEN bytes): "/" gives "index.html",
 * "/app.js" gives "app.js".  False for any path that could leave the
 * directory or names a hidden file.
 */
bool tw_static_rel_path(const char *url_path, char *rel, size_t rellen);

/*
 * Opens the file for URL_PATH under the web directory ROOT (an absolute,
 * resolved path, see tw_static_root): *FD is open for reading, *SIZE its
 * size, *TYPE its content type.  TW_ENOENT for a path refused by
 * tw_static_rel_path, a missing file, a directory, or a file whose real
 * path is outside ROOT (a symbolic link out); TW_EIO when it can't be read.
 */
enum tw_err tw_static_open(const char *root, const char *url_path, int *fd, size_t *size,
                           const char **type, struct tw_error *err);

/* The resolved absolute path of the web directory DIR in OUT; TW_ENOENT
 * when it is not a directory. */
enum tw_err tw_static_root(const char *dir, char *out, size_t outlen, struct tw_error *err);

#endif
