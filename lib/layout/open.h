/* Opening a data file whole: the format floor's structure (format/file.c), then this floor's
 * pass over what only the layouts understand. lance.h's lnc_file_open* are these. */
#ifndef LNC_LAYOUT_OPEN_H
#define LNC_LAYOUT_OPEN_H
#include "../format/reader.h"

/* Opens the Lance file whose bytes src serves (src consumed in every case); name for
 * messages. How the engine opens a file of an object-store mount. */
int lnc_file_open_source(struct lnc_s3_source *src, const char *name, lnc_file **out,
                         struct lnc_error *err);

#endif
