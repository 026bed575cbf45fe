#ifndef CAFE_PHOTO_CODEC_H
#define CAFE_PHOTO_CODEC_H

#include <stddef.h>

// libvips (Debian libvips-dev) behind a header with no GLib or vips types: its calls are variadic,
// which Swift cannot make, and GLib's headers are not worth importing into Swift for five functions.

/// The formats this service reads and writes. Loaders of every other format libvips knows (its
/// ImageMagick, PDF, SVG and TIFF loaders among them) are blocked in this process.
enum {
    CAFE_PHOTO_JPEG = 1,
    CAFE_PHOTO_PNG = 2,
    CAFE_PHOTO_WEBP = 3,
    CAFE_PHOTO_GIF = 4,
    CAFE_PHOTO_HEIF = 5,   // HEIC (HEVC) and AVIF (AV1) alike: libheif reads both
};

enum {
    CAFE_PHOTO_OK = 0,
    CAFE_PHOTO_UNDECODABLE = 1,   // not a whole image of the format its bytes claim
    CAFE_PHOTO_TOO_MANY_PIXELS = 2,
    CAFE_PHOTO_FAILED = 3,        // libvips could not encode (out of memory, say)
};

/// Bytes libvips allocated; give them back with `cafe_photo_free`.
typedef struct {
    unsigned char *data;
    size_t length;
} cafe_photo_bytes;

/// Starts libvips once (later calls do nothing): no operation cache, one thread per operation (the
/// service bounds how many run at once), only the loaders above. 0 on success.
int cafe_photo_start(void);

/// The width and height from the image's header alone, no pixels decoded. `format` must be what the
/// bytes are; CAFE_PHOTO_UNDECODABLE when libvips' loader for it refuses them.
int cafe_photo_probe(const void *bytes, size_t length, int format, int *width, int *height);

/// Decodes every pixel (a truncated or corrupt file is refused), applies the EXIF orientation,
/// converts to sRGB, fits the image within `max_side` × `max_side` (never enlarged), drops all
/// metadata and encodes it: JPEG, or PNG when some pixel is not opaque. Refuses, before decoding,
/// an image whose header claims more than `max_pixels` (its header's size then in `width`, `height`). `out_format` is CAFE_PHOTO_JPEG or _PNG.
int cafe_photo_clean(const void *bytes, size_t length, int format, long long max_pixels, int max_side, int quality,
                     cafe_photo_bytes *out, int *out_format, int *width, int *height);

/// A `width`-pixel-wide copy of a cleaned photo (decoded at a reduced scale where the format allows,
/// then resampled), encoded as `out_format` (JPEG, PNG or WEBP) with no metadata; its height in `height`.
int cafe_photo_resize(const void *bytes, size_t length, int width, int out_format, int quality,
                      cafe_photo_bytes *out, int *height);

void cafe_photo_free(cafe_photo_bytes *bytes);

/// The last libvips error message of this process, copied into `buffer` (NUL-terminated), and cleared.
void cafe_photo_last_error(char *buffer, size_t capacity);

#endif
