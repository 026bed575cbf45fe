#include "CJSONScan.h"

#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>

/// A mask with bit k set where byte k of `v` must be escaped.
static inline unsigned special_bytes(__m128i v) {
    const __m128i below_space = _mm_set1_epi8(0x1F), quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
    __m128i control = _mm_cmpeq_epi8(_mm_min_epu8(v, below_space), v);   // unsigned v <= 0x1F
    __m128i special = _mm_or_si128(control, _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)));
    return (unsigned)_mm_movemask_epi8(special);
}

static inline __m128i load8(const uint8_t *p) { uint64_t w; memcpy(&w, p, 8); return _mm_cvtsi64_si128((long long)w); }
static inline __m128i load4(const uint8_t *p) { uint32_t w; memcpy(&w, p, 4); return _mm_cvtsi32_si128((int)w); }
#endif

// Sixteen bytes a step where the machine has SSE2 (every x86-64), and the last few in overlapping
// loads rather than one by one: a cafe's name is ten bytes, its introduction a hundred. Swift's SIMD
// types compiled this scan to byte-wise code (callgrind: a list page's scan 17k -> 101k instructions).
// Every load stays within the `length` bytes.
size_t cafe_json_plain_length(const uint8_t *bytes, size_t length) {
    size_t i = 0;
#if defined(__SSE2__)
    unsigned mask;
    for (; i + 16 <= length; i += 16) {
        if ((mask = special_bytes(_mm_loadu_si128((const __m128i *)(bytes + i)))) != 0) return i + (size_t)__builtin_ctz(mask);
    }
    if (i == length) return length;
    // Fewer than 16 left. Windows overlap what was already found plain, so a window's first special
    // byte is the first one from i on.
    if (length >= 16) {
        size_t at = length - 16;
        mask = special_bytes(_mm_loadu_si128((const __m128i *)(bytes + at)));
        return mask != 0 ? at + (size_t)__builtin_ctz(mask) : length;
    }
    if (length - i >= 8) {
        if ((mask = special_bytes(load8(bytes + i)) & 0xFF) != 0) return i + (size_t)__builtin_ctz(mask);
        size_t at = length - 8;
        mask = special_bytes(load8(bytes + at)) & 0xFF;
        return mask != 0 ? at + (size_t)__builtin_ctz(mask) : length;
    }
    if (length - i >= 4) {
        if ((mask = special_bytes(load4(bytes + i)) & 0xF) != 0) return i + (size_t)__builtin_ctz(mask);
        size_t at = length - 4;
        mask = special_bytes(load4(bytes + at)) & 0xF;
        return mask != 0 ? at + (size_t)__builtin_ctz(mask) : length;
    }
#endif
    for (; i < length; i++) {
        uint8_t c = bytes[i];
        if (c < 0x20 || c == '"' || c == '\\') return i;
    }
    return length;
}
