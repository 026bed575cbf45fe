import CafeDomain
import CPhotoCodec

/// How a stored photo or one of its sizes is encoded.
public enum PhotoEncoding: String, Sendable, CaseIterable {
    case jpeg, png, webp

    public var contentType: String { "image/\(rawValue)" }

    var code: Int32 {
        switch self {
        case .jpeg: Int32(CAFE_PHOTO_JPEG)
        case .png: Int32(CAFE_PHOTO_PNG)
        case .webp: Int32(CAFE_PHOTO_WEBP)
        }
    }

    init?(code: Int32) {
        guard let encoding = Self.allCases.first(where: { $0.code == code }) else { return nil }
        self = encoding
    }
}

/// Bytes this service encoded: never an upload as it came.
public struct EncodedPhoto: Sendable {
    public let bytes: [UInt8]
    public let encoding: PhotoEncoding
    public let width: Int
    public let height: Int
}

/// What an upload may be, and how a cleaned photo is encoded.
public struct PhotoLimits: Sendable {
    /// Pixels the header may claim (`PHOTO_MAX_PIXELS`); more are refused before any is decoded.
    public var maxPixels: Int
    /// The stored photo's long side at most (`PHOTO_MAX_SIDE`); larger ones are scaled down.
    public var maxSide: Int
    public var quality: Int
    /// Scans a JPEG may have (`PHOTO_MAX_JPEG_SCANS`); more are refused before any is decoded (`JPEGScans`).
    public var maxJPEGScans: Int

    public init(maxPixels: Int = 50_000_000, maxSide: Int = 2560, quality: Int = 85, maxJPEGScans: Int = 64) {
        self.maxPixels = maxPixels
        self.maxSide = maxSide
        self.quality = quality
        self.maxJPEGScans = maxJPEGScans
    }

    /// What is refused from the bytes alone, before a decoder sees them: a JPEG with more scans than
    /// `maxJPEGScans`. Every `PhotoCoding`'s `clean` asks this first.
    public func refuseBeforeDecoding(_ bytes: [UInt8], format: ImageFormat) throws(PhotoRefusal) {
        if format == .jpeg, let scans = JPEGScans.count(bytes), scans > maxJPEGScans {
            throw .tooManyScans(scans: scans, limit: maxJPEGScans)
        }
    }
}

public enum PhotoRefusal: Error, Equatable, Sendable {
    /// Not a whole image of its format: no header, a truncated file, data the decoder cannot read.
    case undecodable(String)
    case tooManyPixels(width: Int, height: Int, limit: Int)
    /// A JPEG with more scans than a camera writes: each one is a pass over the whole image.
    case tooManyScans(scans: Int, limit: Int)
    /// libvips could not encode what it decoded (memory, say): the service's fault, not the client's.
    case failed(String)
}

/// libvips, in the only ways this service uses it. Every call is synchronous and costs CPU: the
/// service runs it only in its helper processes (`PhotoCodecServer`), which `PhotoCodecProcesses` bounds.
public enum PhotoCodec {
    /// The widths a client may ask for (`GET /v1/files/{id}?w=`).
    public static let widths = [160, 320, 640, 1280]
    /// Quality of every size (the stored photo has `PhotoLimits.quality`).
    public static let sizeQuality = 80

    /// Decodes all of `bytes` (which `ImageFormat.detect` found to be `format`), applies the EXIF
    /// orientation, converts to sRGB, fits it within `limits.maxSide`, drops every piece of metadata
    /// and encodes it as JPEG, or PNG where some pixel is transparent.
    public static func clean(_ bytes: [UInt8], format: ImageFormat, limits: PhotoLimits) throws(PhotoRefusal) -> EncodedPhoto {
        var out = cafe_photo_bytes(), encoding: Int32 = 0, width: Int32 = 0, height: Int32 = 0
        let result = bytes.withUnsafeBytes { raw in
            cafe_photo_clean(raw.baseAddress, raw.count, format.codecFormat, Int64(limits.maxPixels), Int32(clamping: limits.maxSide),
                             Int32(clamping: limits.quality), &out, &encoding, &width, &height)
        }
        try check(result, width: Int(width), height: Int(height), limit: limits.maxPixels)
        defer { cafe_photo_free(&out) }
        guard let encoding = PhotoEncoding(code: encoding) else { throw .failed("libvips chose no encoding") }
        return EncodedPhoto(bytes: copy(out), encoding: encoding, width: Int(width), height: Int(height))
    }

    /// A `width`-wide copy of a cleaned photo, as `encoding`.
    public static func resize(_ photo: [UInt8], width: Int, to encoding: PhotoEncoding) throws(PhotoRefusal) -> EncodedPhoto {
        var out = cafe_photo_bytes(), height: Int32 = 0
        let result = photo.withUnsafeBytes { raw in
            cafe_photo_resize(raw.baseAddress, raw.count, Int32(clamping: width), encoding.code, Int32(sizeQuality), &out, &height)
        }
        try check(result, width: width, height: Int(height), limit: 0)
        defer { cafe_photo_free(&out) }
        return EncodedPhoto(bytes: copy(out), encoding: encoding, width: width, height: Int(height))
    }

    /// The width `GET ?w=requested` answers with for a photo `storedWidth` wide: never wider than it is.
    public static func servedWidth(requested: Int, storedWidth: Int) -> Int { min(requested, max(1, storedWidth)) }

    private static func check(_ result: Int32, width: Int, height: Int, limit: Int) throws(PhotoRefusal) {
        switch Int(result) {
        case Int(CAFE_PHOTO_OK): return
        case Int(CAFE_PHOTO_TOO_MANY_PIXELS): throw .tooManyPixels(width: width, height: height, limit: limit)
        case Int(CAFE_PHOTO_UNDECODABLE): throw .undecodable(lastError())
        default: throw .failed(lastError())
        }
    }

    private static func copy(_ bytes: cafe_photo_bytes) -> [UInt8] {
        guard let data = bytes.data, bytes.length > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: bytes.length))
    }

    private static func lastError() -> String {
        var buffer = [CChar](repeating: 0, count: 512)
        cafe_photo_last_error(&buffer, buffer.count)
        let message = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return message.split(separator: "\n").first.map(String.init) ?? "libvips refused the image"
    }
}

extension ImageFormat {
    var codecFormat: Int32 {
        switch self {
        case .jpeg: Int32(CAFE_PHOTO_JPEG)
        case .png: Int32(CAFE_PHOTO_PNG)
        case .webp: Int32(CAFE_PHOTO_WEBP)
        case .gif: Int32(CAFE_PHOTO_GIF)
        case .heic, .heif, .avif: Int32(CAFE_PHOTO_HEIF)
        }
    }
}
