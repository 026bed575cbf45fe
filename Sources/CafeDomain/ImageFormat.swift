/// The photo formats accepted for upload, recognised by their bytes — the declared Content-Type must
/// match what the bytes really are. HEIC and AVIF are both HEIF files; the brands in their `ftyp` box
/// say which codec is inside.
public enum ImageFormat: String, Sendable, CaseIterable {
    case png = "image/png"
    case jpeg = "image/jpeg"
    case webp = "image/webp"
    case gif = "image/gif"
    case heic = "image/heic"
    case heif = "image/heif"
    case avif = "image/avif"

    public var contentType: String { rawValue }

    /// The format a declared media type names, its common aliases included (`image/jpg`, `image/pjpeg`,
    /// `image/x-png`, `image/heic-sequence`…), case-insensitively.
    public init?(declared mediaType: String) {
        let type = mediaType.lowercased()
        if let exact = ImageFormat(rawValue: type) { self = exact; return }
        switch type {
        case "image/jpg", "image/pjpeg": self = .jpeg
        case "image/x-png", "image/apng": self = .png
        case "image/heic-sequence": self = .heic
        case "image/heif-sequence": self = .heif
        default: return nil
        }
    }

    /// Whether bytes detected as `self` may be uploaded as `declared`: the same format, or a HEIF
    /// file declared as HEIC or HEIF (phones name the same HEVC files either way).
    public func matches(declared: ImageFormat) -> Bool {
        switch (self, declared) {
        case (.heic, .heif), (.heif, .heic): true
        default: self == declared
        }
    }

    public static func detect(_ bytes: [UInt8]) -> ImageFormat? {
        func starts(_ prefix: some Collection<UInt8>, at offset: Int = 0) -> Bool {
            bytes.count >= offset + prefix.count && bytes[offset..<(offset + prefix.count)].elementsEqual(prefix)
        }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if starts([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts("GIF87a".utf8) || starts("GIF89a".utf8) { return .gif }
        if starts("RIFF".utf8) && starts("WEBP".utf8, at: 8) { return .webp }
        return heifBrand(bytes)
    }

    /// An ISO-BMFF `ftyp` box first: its major brand, then its compatible brands, name the codec.
    private static func heifBrand(_ bytes: [UInt8]) -> ImageFormat? {
        guard bytes.count >= 16, bytes[4..<8].elementsEqual("ftyp".utf8) else { return nil }
        let boxSize = Int(bytes[0]) << 24 | Int(bytes[1]) << 16 | Int(bytes[2]) << 8 | Int(bytes[3])
        guard boxSize >= 16, boxSize <= min(bytes.count, 4096) else { return nil }
        var brands = [String(decoding: bytes[8..<12], as: UTF8.self)]
        var offset = 16
        while offset + 4 <= boxSize {
            brands.append(String(decoding: bytes[offset..<(offset + 4)], as: UTF8.self))
            offset += 4
        }
        let avif: Set = ["avif", "avis"], heic: Set = ["heic", "heix", "hevc", "hevx", "heim", "heis"], heif: Set = ["mif1", "msf1"]
        if avif.contains(brands[0]) { return .avif }
        if heic.contains(brands[0]) { return .heic }
        guard heif.contains(brands[0]) else { return nil }
        if brands.contains(where: avif.contains) { return .avif }
        if brands.contains(where: heic.contains) { return .heic }
        return .heif
    }
}
