import Foundation
import Synchronization

/// Real images for the tests, made here by libvips' own command line (`vips`, Debian libvips-tools),
/// never downloaded: noise over a gradient, so every encoder has real work, in any format libvips writes.
public enum TestPhotos {
    private static let directory: URL = {
        let dir = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("cafe-photos-\(getpid())")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }()

    private static let cache = Mutex<[String: [UInt8]]>([:])

    /// A `width` × `height` photo encoded by libvips' saver for `suffix` (`jpg`, `png`, `webp`, `gif`,
    /// `heic`, `avif`; save options in brackets, `jpg[Q=90]`). `alpha`: with a half-transparent band.
    public static func make(width: Int, height: Int, as suffix: String, alpha: Bool = false) -> [UInt8] {
        let key = "\(width)x\(height).\(suffix).\(alpha)"
        if let hit = cache.withLock({ $0[key] }) { return hit }
        let stem = directory.appendingPathComponent(UUID().uuidString).path
        vips("gaussnoise", "\(stem)-n.v", "\(width)", "\(height)", "--mean", "40", "--sigma", "12")
        vips("xyz", "\(stem)-xy.v", "\(width)", "\(height)")
        vips("extract_band", "\(stem)-xy.v", "\(stem)-x.v", "0")
        vips("linear", "\(stem)-x.v", "\(stem)-g.v", "\(180.0 / Double(max(width, 1)))", "0")
        vips("add", "\(stem)-n.v", "\(stem)-g.v", "\(stem)-r.v")
        let bands = alpha ? "\(stem)-r.v \(stem)-n.v \(stem)-g.v \(stem)-n.v" : "\(stem)-r.v \(stem)-n.v \(stem)-g.v"
        vips("bandjoin", bands, "\(stem)-c.v")
        vips("cast", "\(stem)-c.v", "\(stem)-u.v", "uchar")
        let ext = suffix.split(separator: "[").first.map(String.init) ?? suffix
        let options = suffix.dropFirst(ext.count)
        vips("copy", "\(stem)-u.v", "\(stem).\(ext)\(options)")
        let bytes = (try? [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(stem).\(ext)")))) ?? []
        for file in (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [] where file.hasPrefix(URL(fileURLWithPath: stem).lastPathComponent) {
            try? FileManager.default.removeItem(atPath: directory.appendingPathComponent(file).path)
        }
        precondition(!bytes.isEmpty, "vips made no \(suffix)")
        cache.withLock { $0[key] = bytes }
        return bytes
    }

    /// `jpeg` with an EXIF block (an orientation tag and, if given, GPS coordinates), an XMP packet and
    /// a JPEG comment inserted after its start marker: what a phone's photo carries.
    public static func withMetadata(_ jpeg: [UInt8], orientation: UInt16 = 1, gps: (latitude: Double, longitude: Double)? = nil,
                                    comment: String = "taken at home") -> [UInt8] {
        precondition(jpeg.starts(with: [0xFF, 0xD8]))
        let exif = Array("Exif".utf8) + [0, 0] + tiff(orientation: orientation, gps: gps)
        let xmp = Array("http://ns.adobe.com/xap/1.0/".utf8) + [0]
            + Array("<x:xmpmeta xmlns:x='adobe:ns:meta/'><rdf:Description exif:GPSLatitude='35,40.5N'/></x:xmpmeta>".utf8)
        return [0xFF, 0xD8] + segment(0xE1, exif) + segment(0xE1, xmp) + segment(0xFE, Array(comment.utf8)) + jpeg.dropFirst(2)
    }

    private static func segment(_ marker: UInt8, _ payload: [UInt8]) -> [UInt8] {
        let length = payload.count + 2
        return [0xFF, marker, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
    }

    /// A little-endian TIFF structure: IFD0 with Orientation and a pointer to a GPS IFD.
    private static func tiff(orientation: UInt16, gps: (latitude: Double, longitude: Double)?) -> [UInt8] {
        var out: [UInt8] = Array("II".utf8) + le16(42) + le32(8)
        let ifd0Count: UInt16 = gps == nil ? 1 : 2
        let ifd0End = 8 + 2 + Int(ifd0Count) * 12 + 4
        out += le16(ifd0Count)
        out += le16(0x0112) + le16(3) + le32(1) + le16(orientation) + le16(0)
        if gps != nil { out += le16(0x8825) + le16(4) + le32(1) + le32(UInt32(ifd0End)) }
        out += le32(0)
        guard let gps else { return out }
        let gpsEntries = 4
        let rationals = ifd0End + 2 + gpsEntries * 12 + 4
        func dms(_ value: Double) -> [UInt8] {
            let v = abs(value), d = v.rounded(.down), m = ((v - d) * 60).rounded(.down), s = ((v - d) * 60 - m) * 60
            return le32(UInt32(d)) + le32(1) + le32(UInt32(m)) + le32(1) + le32(UInt32(s * 100)) + le32(100)
        }
        out += le16(UInt16(gpsEntries))
        out += le16(1) + le16(2) + le32(2) + Array((gps.latitude >= 0 ? "N" : "S").utf8) + [0, 0, 0]
        out += le16(2) + le16(5) + le32(3) + le32(UInt32(rationals))
        out += le16(3) + le16(2) + le32(2) + Array((gps.longitude >= 0 ? "E" : "W").utf8) + [0, 0, 0]
        out += le16(4) + le16(5) + le32(3) + le32(UInt32(rationals + 24))
        out += le32(0)
        return out + dms(gps.latitude) + dms(gps.longitude)
    }

    private static func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
    private static func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8((v >> (8 * $0)) & 0xFF) } }

    /// Whether `bytes` hold any of the metadata `withMetadata` puts in, or any EXIF, XMP or GPS at all.
    public static func metadataLeft(in bytes: [UInt8]) -> [String] {
        let needles: [(String, [UInt8])] = [("EXIF", Array("Exif\0\0".utf8)), ("XMP", Array("ns.adobe.com/xap".utf8)),
                                            ("comment", Array("taken at home".utf8)), ("GPS", Array("GPSLatitude".utf8))]
        return needles.filter { _, needle in contains(bytes, needle) }.map(\.0)
    }

    private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count, let first = needle.first else { return false }
        var i = 0
        while i <= haystack.count - needle.count {
            if haystack[i] == first, haystack[i..<(i + needle.count)].elementsEqual(needle) { return true }
            i += 1
        }
        return false
    }

    /// Width and height as libvips reads them from the header (`vipsheader`).
    public static func size(of bytes: [UInt8]) -> (width: Int, height: Int)? {
        let path = directory.appendingPathComponent(UUID().uuidString).path
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let out = run("/usr/bin/vipsheader", ["-f", "width", path]), out2 = run("/usr/bin/vipsheader", ["-f", "height", path])
        guard let w = Int(out.trimmingCharacters(in: .whitespacesAndNewlines)), let h = Int(out2.trimmingCharacters(in: .whitespacesAndNewlines)) else { return nil }
        return (w, h)
    }

    private static func vips(_ args: String...) {
        _ = run("/usr/bin/vips", args)
    }

    @discardableResult
    private static func run(_ tool: String, _ args: [String]) -> String {
        guard let output = toolOutput(tool, args) else { preconditionFailure("\(tool) is missing: install libvips-tools") }
        return output
    }
}

extension TestPhotos {
    /// A valid PNG whose header claims `width` × `height` but whose single IDAT holds one row of
    /// pixels: a decompression bomb's shape, a few hundred bytes on the wire.
    public static func pixelBomb(width: UInt32, height: UInt32) -> [UInt8] {
        let small = make(width: 8, height: 8, as: "png")
        var out = Array(small.prefix(16))   // signature, IHDR length and type
        out += be32(width) + be32(height)
        out += small[24..<29]   // bit depth, colour type, compression, filter, interlace
        let crcInput = Array(out[12..<29])
        out += be32(crc32(crcInput))
        out += small[33...]   // the rest of the small PNG: its data runs out long before the claimed rows
        return out
    }

    /// `png` with a `tEXt` chunk of `length` bytes after its header: a valid PNG, larger by that, whose
    /// cleaned copy (which keeps no metadata) is as small as ever.
    public static func withText(_ png: [UInt8], length: Int) -> [UInt8] {
        let payload = Array("Comment".utf8) + [0] + [UInt8](repeating: UInt8(ascii: "x"), count: length)
        let typed = Array("tEXt".utf8) + payload
        let chunk = be32(UInt32(payload.count)) + typed + be32(crc32(typed))
        return Array(png[0..<33]) + chunk + png[33...]
    }

    /// This process's resident memory now (`/proc/self/statm`).
    public static func residentBytes() -> Int {
        let fields = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8))?.split(separator: " ") ?? []
        return (fields.count > 1 ? Int(fields[1]) ?? 0 : 0) * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    private static func be32(_ v: UInt32) -> [UInt8] { (0..<4).reversed().map { UInt8((v >> (8 * $0)) & 0xFF) } }

    private static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}
