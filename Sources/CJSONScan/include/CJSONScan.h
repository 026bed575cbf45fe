#ifndef CJSON_SCAN_H
#define CJSON_SCAN_H

#include <stddef.h>
#include <stdint.h>

/// How many of the `length` bytes at `bytes` a JSON string may hold as they are: the index of the first
/// byte that must be escaped (below 0x20, '"' or '\\'), or `length` if none must.
size_t cafe_json_plain_length(const uint8_t *bytes, size_t length);

#endif
