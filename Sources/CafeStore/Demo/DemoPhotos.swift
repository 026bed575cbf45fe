/// Pictures for the demo, drawn here rather than shipped: for each cafe a cup of coffee on a warm
/// background, its hue different for every cafe; for comments a latte seen from above, its foam a
/// heart. PNG written by hand (stored, uncompressed deflate blocks: no zlib needed); the upload
/// pipeline turns them into JPEGs like any other upload.
enum DemoPhotos {
    static let width = 480
    static let height = 300

    static func cafe(_ index: Int) -> [UInt8] {
        let hue = Double(index * 37 % 360)
        return draw(width: width, height: height) { x, y in pixel(x: x, y: y, hue: hue) }
    }

    /// A comment's photo: a latte from above on a table of the comment's own hue, 400 × 400.
    static func latte(_ index: Int) -> [UInt8] {
        let hue = Double(index * 53 % 360)
        return draw(width: 400, height: 400) { x, y in
            let dx = x - 200, dy = y - 200, r = (dx * dx + dy * dy).squareRoot()
            if r > 170 { return rgb(hue: hue, saturation: 0.25, lightness: 0.35 + y / 2000) }   // table
            if r > 130 { return (236, 230, 222) }                                                // saucer
            if r > 105 { return (250, 247, 242) }                                                // cup rim
            // Foam: a heart (|x|, y folded into two circles over a triangle), on the coffee.
            let hx = abs(dx) / 60, hy = -(dy + 10) / 60
            let heart = (hx - 0.5) * (hx - 0.5) + (hy - 0.35) * (hy - 0.35) < 0.3 || (hy <= 0.35 && hy > 1.3 * hx - 1.1)
            return heart ? (243, 226, 200) : mix((120, 72, 40), (92, 54, 30), r / 105)
        }
    }

    private static func draw(width: Int, height: Int, _ pixel: (Double, Double) -> (UInt8, UInt8, UInt8)) -> [UInt8] {
        var rows = [UInt8]()
        rows.reserveCapacity((width * 3 + 1) * height)
        for y in 0..<height {
            rows.append(0)   // filter: none
            for x in 0..<width {
                let (r, g, b) = pixel(Double(x), Double(y))
                rows += [r, g, b]
            }
        }
        return png(rows, width: width, height: height)
    }

    /// The scene: a gradient wall and table, a cup on a saucer, three wisps of steam.
    private static func pixel(x: Double, y: Double, hue: Double) -> (UInt8, UInt8, UInt8) {
        let table = y > 210
        var color = table ? rgb(hue: hue + 20, saturation: 0.35, lightness: 0.30 + (y - 210) / 900)
                          : rgb(hue: hue, saturation: 0.45, lightness: 0.72 - y / 1400)
        let cx = 240.0
        // Saucer: a flat ellipse on the table.
        if pow2((x - cx) / 110) + pow2((y - 236) / 16) <= 1 { color = (236, 230, 222) }
        // Cup: slightly tapering body with a rounded bottom, and a handle (a ring) on the right.
        let top = 140.0, bottom = 228.0
        if y >= top && y <= bottom {
            let half = 62 - (y - top) * 0.18
            if abs(x - cx) <= half - (y > bottom - 12 ? (y - (bottom - 12)) * 1.2 : 0) { color = (250, 247, 242) }
        }
        let ring = ((x - 306) * (x - 306) + (y - 178) * (y - 178)).squareRoot()
        if ring >= 16 && ring <= 25 && x > 298 { color = (250, 247, 242) }
        // Coffee surface.
        if pow2((x - cx) / 60) + pow2((y - top) / 9) <= 1 { color = (92, 54, 30) }
        // Steam: three soft sine wisps above the cup.
        for offset in [-26.0, 0, 26] where y > 60 && y < 128 {
            let wave = cx + offset + 7 * sin((y - 60) / 11 + offset)
            let d = abs(x - wave)
            if d < 3.5 {
                let a = (1 - d / 3.5) * 0.6
                color = mix(color, (255, 255, 255), a)
            }
        }
        return color
    }

    private static func pow2(_ v: Double) -> Double { v * v }

    private static func sin(_ v: Double) -> Double {
        // Enough precision for a wisp of steam, without Foundation.
        var x = v.truncatingRemainder(dividingBy: 2 * .pi)
        if x > .pi { x -= 2 * .pi } else if x < -.pi { x += 2 * .pi }
        let x2 = x * x
        return x * (1 - x2 / 6 * (1 - x2 / 20 * (1 - x2 / 42 * (1 - x2 / 72))))
    }

    private static func mix(_ a: (UInt8, UInt8, UInt8), _ b: (UInt8, UInt8, UInt8), _ t: Double) -> (UInt8, UInt8, UInt8) {
        func m(_ p: UInt8, _ q: UInt8) -> UInt8 { UInt8(Double(p) * (1 - t) + Double(q) * t) }
        return (m(a.0, b.0), m(a.1, b.1), m(a.2, b.2))
    }

    private static func rgb(hue: Double, saturation s: Double, lightness l: Double) -> (UInt8, UInt8, UInt8) {
        let c = (1 - abs(2 * l - 1)) * s
        let h = hue.truncatingRemainder(dividingBy: 360) / 60
        let x = c * (1 - abs(h.truncatingRemainder(dividingBy: 2) - 1))
        let (r, g, b): (Double, Double, Double) = switch Int(h) {
        case 0: (c, x, 0)
        case 1: (x, c, 0)
        case 2: (0, c, x)
        case 3: (0, x, c)
        case 4: (x, 0, c)
        default: (c, 0, x)
        }
        let m = l - c / 2
        return (UInt8(max(0, min(255, (r + m) * 255))), UInt8(max(0, min(255, (g + m) * 255))), UInt8(max(0, min(255, (b + m) * 255))))
    }

    // MARK: PNG

    private static func png(_ raw: [UInt8], width: Int, height: Int) -> [UInt8] {
        var ihdr = be32(UInt32(width)) + be32(UInt32(height))
        ihdr += [8, 2, 0, 0, 0]   // 8-bit RGB, deflate, no filter method extras, no interlace
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", ihdr) + chunk("IDAT", zlibStored(raw)) + chunk("IEND", [])
    }

    /// A zlib stream of stored (uncompressed) deflate blocks.
    private static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let n = min(65_535, data.count - offset)
            let final: UInt8 = offset + n == data.count ? 1 : 0
            out += [final, UInt8(n & 0xFF), UInt8(n >> 8), UInt8(~n & 0xFF), UInt8((~n >> 8) & 0xFF)]
            out += data[offset..<(offset + n)]
            offset += n
        } while offset < data.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in data { a = (a + UInt32(byte)) % 65_521; b = (b + a) % 65_521 }
        return out + be32(b << 16 | a)
    }

    private static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + data
        return be32(UInt32(data.count)) + typed + be32(crc32(typed))
    }

    private static let crcTable: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 == 1 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    private static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for b in bytes { c = crcTable[Int((c ^ UInt32(b)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }

    private static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
}
