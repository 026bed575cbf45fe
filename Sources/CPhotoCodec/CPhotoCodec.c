#include "CPhotoCodec.h"

#include <pthread.h>
#include <string.h>
#include <vips/vips.h>

// Loaders by their libvips class names. Everything libvips could load is blocked but these.
static const char *const allowed_loaders[] = {
    "VipsForeignLoadJpeg", "VipsForeignLoadPng", "VipsForeignLoadWebp", "VipsForeignLoadNsgif", "VipsForeignLoadHeif",
};

static const char *buffer_loader(int format) {
    switch (format) {
    case CAFE_PHOTO_JPEG: return "VipsForeignLoadJpegBuffer";
    case CAFE_PHOTO_PNG: return "VipsForeignLoadPngBuffer";
    case CAFE_PHOTO_WEBP: return "VipsForeignLoadWebpBuffer";
    case CAFE_PHOTO_GIF: return "VipsForeignLoadNsgifBuffer";
    case CAFE_PHOTO_HEIF: return "VipsForeignLoadHeifBuffer";
    default: return NULL;
    }
}

static pthread_once_t started = PTHREAD_ONCE_INIT;
static int start_result = -1;

// libvips' warnings (a decoder's complaint about a refused file) would be unstructured lines on
// stderr beside the service's JSON log; the refusal itself is what the caller reports.
static void quiet(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data) {
    (void)domain; (void)level; (void)message; (void)data;
}

static void start(void) {
    if (VIPS_INIT("cafe")) return;
    g_log_set_handler("VIPS", G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE | G_LOG_LEVEL_INFO, quiet, NULL);
    vips_cache_set_max(0);
    vips_cache_set_max_mem(0);
    vips_cache_set_max_files(0);
    vips_concurrency_set(1);
    vips_operation_block_set("VipsForeignLoad", TRUE);
    for (size_t i = 0; i < sizeof allowed_loaders / sizeof *allowed_loaders; i++)
        vips_operation_block_set(allowed_loaders[i], FALSE);
    start_result = 0;
}

int cafe_photo_start(void) {
    pthread_once(&started, start);
    return start_result;
}

// The loader libvips would pick for these bytes must be the one for `format`: the bytes decide, and
// a file another loader would read is refused before any of it is decoded.
static int loader_matches(const void *bytes, size_t length, int format) {
    const char *expected = buffer_loader(format);
    const char *found = vips_foreign_find_load_buffer(bytes, length);
    return expected != NULL && found != NULL && strcmp(expected, found) == 0;
}

int cafe_photo_probe(const void *bytes, size_t length, int format, int *width, int *height) {
    if (cafe_photo_start() != 0) return CAFE_PHOTO_FAILED;
    if (!loader_matches(bytes, length, format)) return CAFE_PHOTO_UNDECODABLE;
    // Opening reads the header only; the pixels are decoded when something asks for them.
    VipsImage *image = vips_image_new_from_buffer(bytes, length, "", "access", VIPS_ACCESS_SEQUENTIAL, NULL);
    if (image == NULL) return CAFE_PHOTO_UNDECODABLE;
    *width = vips_image_get_width(image);
    *height = vips_image_get_height(image);
    g_object_unref(image);
    return CAFE_PHOTO_OK;
}

// Shrinks on load where the format allows (a JPEG decoded at 1/2, 1/4 or 1/8), applies the EXIF
// orientation and imports an embedded colour profile, then converts to 8-bit sRGB.
static int thumbnail(const void *bytes, size_t length, int width, int height, const char *load_options, VipsImage **out) {
    VipsImage *thumb = NULL;
    if (vips_thumbnail_buffer((void *)bytes, length, &thumb, width, "height", height, "size", VIPS_SIZE_DOWN,
                              "option_string", load_options, NULL))
        return CAFE_PHOTO_UNDECODABLE;
    VipsImage *srgb = NULL;
    int failed = vips_colourspace(thumb, &srgb, VIPS_INTERPRETATION_sRGB, NULL);
    g_object_unref(thumb);
    if (failed) return CAFE_PHOTO_UNDECODABLE;
    // Every pixel is computed here, once, so a file that is corrupt past its header fails now.
    VipsImage *memory = vips_image_copy_memory(srgb);
    g_object_unref(srgb);
    if (memory == NULL) return CAFE_PHOTO_UNDECODABLE;
    *out = memory;
    return CAFE_PHOTO_OK;
}

// An alpha band with every pixel opaque is no transparency: dropped, so the photo can be a JPEG.
static int drop_opaque_alpha(VipsImage **image) {
    VipsImage *in = *image;
    if (!vips_image_hasalpha(in)) return CAFE_PHOTO_OK;
    int bands = vips_image_get_bands(in);
    VipsImage *alpha = NULL;
    double minimum = 0;
    if (vips_extract_band(in, &alpha, bands - 1, NULL)) return CAFE_PHOTO_FAILED;
    int failed = vips_min(alpha, &minimum, NULL);
    g_object_unref(alpha);
    if (failed) return CAFE_PHOTO_FAILED;
    if (minimum < 255) return CAFE_PHOTO_OK;
    VipsImage *opaque = NULL;
    if (vips_extract_band(in, &opaque, 0, "n", bands - 1, NULL)) return CAFE_PHOTO_FAILED;
    g_object_unref(in);
    *image = opaque;
    return CAFE_PHOTO_OK;
}

// Every metadata item goes from a copy of the image before it is saved: `strip` alone is not enough,
// libvips 8.14's WebP saver writes an EXIF chunk from the image's fields regardless of it.
static VipsImage *without_metadata(VipsImage *image) {
    VipsImage *copy = NULL;
    if (vips_copy(image, &copy, NULL)) return NULL;
    gchar **fields = vips_image_get_fields(copy);
    for (gchar **field = fields; field != NULL && *field != NULL; field++) vips_image_remove(copy, *field);
    g_strfreev(fields);
    return copy;
}

static unsigned le32(const unsigned char *p) { return p[0] | p[1] << 8 | p[2] << 16 | (unsigned)p[3] << 24; }
static void put_le32(unsigned char *p, unsigned v) { p[0] = v; p[1] = v >> 8; p[2] = v >> 16; p[3] = v >> 24; }

// libvips 8.14's WebP saver adds an EXIF chunk of its own making (orientation, resolution) even when
// told to strip. The RIFF container is rewritten in place without its EXIF, XMP and ICC chunks and with
// their flags cleared in the VP8X header: a container edit, the image data untouched.
static void webp_drop_metadata(unsigned char *data, size_t *length) {
    if (*length < 12 || memcmp(data, "RIFF", 4) != 0 || memcmp(data + 8, "WEBP", 4) != 0) return;
    size_t read = 12, write = 12;
    while (read + 8 <= *length) {
        size_t size = le32(data + read + 4), whole = 8 + size + (size & 1);
        if (read + whole > *length) return;   // not a container libwebp wrote: left as it is
        int drop = memcmp(data + read, "EXIF", 4) == 0 || memcmp(data + read, "XMP ", 4) == 0 || memcmp(data + read, "ICCP", 4) == 0;
        if (!drop) {
            if (memcmp(data + read, "VP8X", 4) == 0 && size >= 1) data[read + 8] &= (unsigned char)~(0x08 | 0x04 | 0x20);
            memmove(data + write, data + read, whole);
            write += whole;
        }
        read += whole;
    }
    put_le32(data + 4, (unsigned)(write - 8));
    *length = write;
}

static int save(VipsImage *original, int format, int quality, cafe_photo_bytes *out) {
    VipsImage *image = without_metadata(original);
    if (image == NULL) return CAFE_PHOTO_FAILED;
    void *data = NULL;
    size_t length = 0;
    int failed;
    // `strip` drops every piece of metadata: EXIF (and its GPS block), XMP, IPTC, comments, ICC.
    switch (format) {
    case CAFE_PHOTO_JPEG:
        failed = vips_jpegsave_buffer(image, &data, &length, "Q", quality, "strip", TRUE, "optimize_coding", TRUE, NULL);
        break;
    case CAFE_PHOTO_PNG:
        failed = vips_pngsave_buffer(image, &data, &length, "compression", 6, "strip", TRUE, NULL);
        break;
    case CAFE_PHOTO_WEBP:
        failed = vips_webpsave_buffer(image, &data, &length, "Q", quality, "strip", TRUE, NULL);
        break;
    default:
        failed = 1;
    }
    g_object_unref(image);
    if (failed) return CAFE_PHOTO_FAILED;
    if (format == CAFE_PHOTO_WEBP) webp_drop_metadata(data, &length);
    out->data = data;
    out->length = length;
    return CAFE_PHOTO_OK;
}

int cafe_photo_clean(const void *bytes, size_t length, int format, long long max_pixels, int max_side, int quality,
                     cafe_photo_bytes *out, int *out_format, int *width, int *height) {
    int header_width = 0, header_height = 0;
    int result = cafe_photo_probe(bytes, length, format, &header_width, &header_height);
    if (result != CAFE_PHOTO_OK) return result;
    if ((long long)header_width * (long long)header_height > max_pixels) {
        *width = header_width;
        *height = header_height;
        return CAFE_PHOTO_TOO_MANY_PIXELS;
    }

    VipsImage *image = NULL;
    // A file that ends early or whose data the decoder cannot read is refused. libjpeg only *warns* of
    // corrupt data (and fills in grey), so a JPEG must decode without a warning, as cameras' and phones'
    // files do; for the other formats a warning is often benign (libpng's "known incorrect sRGB
    // profile"), and an error or a truncation is what refuses.
    result = thumbnail(bytes, length, max_side, max_side, format == CAFE_PHOTO_JPEG ? "fail_on=warning" : "fail_on=error", &image);
    if (result != CAFE_PHOTO_OK) return result;
    result = drop_opaque_alpha(&image);
    if (result == CAFE_PHOTO_OK) {
        *out_format = vips_image_hasalpha(image) ? CAFE_PHOTO_PNG : CAFE_PHOTO_JPEG;
        *width = vips_image_get_width(image);
        *height = vips_image_get_height(image);
        result = save(image, *out_format, quality, out);
    }
    g_object_unref(image);
    return result;
}

int cafe_photo_resize(const void *bytes, size_t length, int width, int out_format, int quality,
                      cafe_photo_bytes *out, int *height) {
    if (cafe_photo_start() != 0) return CAFE_PHOTO_FAILED;
    VipsImage *image = NULL;
    int result = thumbnail(bytes, length, width, VIPS_MAX_COORD, "", &image);
    if (result != CAFE_PHOTO_OK) return result;
    *height = vips_image_get_height(image);
    result = save(image, out_format, quality, out);
    g_object_unref(image);
    return result;
}

void cafe_photo_free(cafe_photo_bytes *bytes) {
    g_free(bytes->data);
    bytes->data = NULL;
    bytes->length = 0;
}

void cafe_photo_last_error(char *buffer, size_t capacity) {
    if (capacity == 0) return;
    const char *message = vips_error_buffer();
    size_t n = strlen(message);
    if (n >= capacity) n = capacity - 1;
    memcpy(buffer, message, n);
    buffer[n] = 0;
    vips_error_clear();
}
