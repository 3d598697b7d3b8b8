/* libFuzzer target: the daemon's proto3 JSON reader (daemon/lanced/pbjson.c), which parses every
 * Connect request sent with application/json: the input is read as a TakeRequest and as a
 * GetFileRequest; what parses is written back as JSON and freed. The same bytes go through
 * ld_pb_nul_string as a binary message (the daemon calls it only on bodies protobuf-c
 * unpacked; here it must stay in bounds on any bytes). Links the daemon's pbjson.c,
 * util.c, log.c and its protobuf code (Makefile: FUZZ_DAEMON_OBJS, scripts/fuzz.sh).
 * Seeds: tests/fuzz/corpus/fuzz_pbjson/. */
#include <stdint.h>
#include <stdlib.h>
#include "../../daemon/lanced/lanced.h"
#include "../../daemon/lanced/routes.h"
#include "lanced/v1/lanced.pb-c.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const ProtobufCMessageDescriptor *ds[2] = {&lanced__v1__take_request__descriptor,
                                             &lanced__v1__get_file_request__descriptor};
  for (int i = 0; i < 2; i++) {
    (void)ld_pb_nul_string(ds[i], data, size);
    char msg[400];
    ProtobufCMessage *m = ld_pbjson_read(ds[i], (const char *)data, size, msg, sizeof msg);
    if (!m) continue;
    struct lnc_buf out = {0};
    ld_pbjson_write(m, &out);
    lnc_buf_free(&out);
    ld_pbjson_free(m);
  }
  return 0;
}
