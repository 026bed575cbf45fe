import CJSONScan

/// Appends JSON straight into one growing byte buffer: no intermediate dictionaries, no `JSONEncoder`
/// (which dominated the profile of a comparable Swift service). Commas are placed automatically.
///
///     let w = JSONWriter()
///     w.object { w.field("id", "42"); w.key("tags"); w.array { w.value("a") } }
///
/// The buffer is raw memory rather than a `[UInt8]`: a page of 100 comments is ~1,500 small appends,
/// and each append to an array checked its uniqueness and capacity and, for an array literal, allocated
/// (the writer was a third of the CPU of `GET /v1/cafes/{id}/comments`; docs/performance.md).
public final class JSONWriter {
    private var storage: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private var count = 0
    private var needsComma = false

    /// 32 KiB at first: a list page and a page of 100 comments (25 KB with reviews of a line or two)
    /// fit without growing. Memory that is never touched costs nothing, while each growth copied all
    /// written so far (16 KiB a comments page, a tenth of its `memmove`; docs/performance.md,
    /// "Writing pages"). A page cached with room to spare is compacted (`ResponseBody.compacted`).
    public init(capacity: Int = 32 << 10) {
        self.capacity = max(capacity, 64)
        storage = .allocate(capacity: self.capacity)
    }

    deinit { storage.deallocate() }

    /// What has been written so far, as an array (a copy).
    public var bytes: [UInt8] { [UInt8](UnsafeBufferPointer(start: storage, count: count)) }

    /// What has been written, as an answer's body: the buffer itself is handed over, not copied.
    /// The writer starts again empty.
    public func body() -> ResponseBody {
        let written = ResponseBody(adopting: storage, count: count, allocated: capacity)
        capacity = 64
        storage = .allocate(capacity: capacity)
        count = 0
        needsComma = false
        return written
    }

    public func object(_ body: () -> Void) {
        separator()
        put(UInt8(ascii: "{"))
        needsComma = false
        body()
        put(UInt8(ascii: "}"))
        needsComma = true
    }

    public func array(_ body: () -> Void) {
        separator()
        put(UInt8(ascii: "["))
        needsComma = false
        body()
        put(UInt8(ascii: "]"))
        needsComma = true
    }

    /// Keys are literals: written as they are, without scanning for characters to escape
    /// (they contain none; a profile showed the scan at a tenth of a list response).
    public func key(_ name: StaticString) {
        Self.withBytes(of: name) { key(bytes: $0) }
    }

    /// A literal's UTF-8 bytes, read through its pointer when it has one (every multi-character literal):
    /// `withUTF8Buffer`'s closure and its check for a one-scalar literal were most of a key's cost
    /// (~1,200 keys on a page of 100 comments).
    @inline(__always)
    private static func withBytes<R>(of literal: StaticString, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        guard literal.hasPointerRepresentation else { return literal.withUTF8Buffer(body) }
        return body(UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    @inline(__always)
    private func key(bytes name: UnsafeBufferPointer<UInt8>) {
        // Through locals: a store through `storage` may alias this object's fields as far as the
        // compiler knows, so `count += …` between stores reloaded and stored it each time.
        let n = name.count
        if count &+ n &+ 4 > capacity { grow(to: count &+ n &+ 4) }
        let out = storage
        var at = count
        if needsComma { out[at] = UInt8(ascii: ","); at &+= 1 }
        out[at] = UInt8(ascii: "\"")
        if let base = name.baseAddress { Self.copy(from: UnsafeRawPointer(base), to: UnsafeMutableRawPointer(out + (at &+ 1)), count: n) }
        at &+= n &+ 1
        out[at] = UInt8(ascii: "\"")
        out[at &+ 1] = UInt8(ascii: ":")
        count = at &+ 2
        needsComma = false
    }

    /// Whole members written as they are, `"a":null,"b":null`: a literal the caller has checked is
    /// valid JSON members (keys are not escaped). For fixed runs, such as a row without a photo.
    public func members(_ literal: StaticString) {
        if needsComma { put(UInt8(ascii: ",")) }
        append(literal)
        needsComma = true
    }

    /// A short copy (a key, a number's digits) in two overlapping words, without a call to `memcpy`, which cost more
    /// than the copy itself for the eleven keys of each comment of a page.
    @inline(__always)
    private static func copy(from source: UnsafeRawPointer, to target: UnsafeMutableRawPointer, count n: Int) {
        switch n {
        case 8...16:
            target.storeBytes(of: source.loadUnaligned(as: UInt64.self), as: UInt64.self)
            target.storeBytes(of: source.loadUnaligned(fromByteOffset: n &- 8, as: UInt64.self), toByteOffset: n &- 8, as: UInt64.self)
        case 4..<8:
            target.storeBytes(of: source.loadUnaligned(as: UInt32.self), as: UInt32.self)
            target.storeBytes(of: source.loadUnaligned(fromByteOffset: n &- 4, as: UInt32.self), toByteOffset: n &- 4, as: UInt32.self)
        case 1..<4:
            target.storeBytes(of: source.load(as: UInt8.self), as: UInt8.self)
            target.storeBytes(of: source.load(fromByteOffset: n &- 1, as: UInt8.self), toByteOffset: n &- 1, as: UInt8.self)
            target.storeBytes(of: source.load(fromByteOffset: n / 2, as: UInt8.self), toByteOffset: n / 2, as: UInt8.self)
        default:
            if n > 0 { target.copyMemory(from: source, byteCount: n) }
        }
    }

    public func value(_ s: String) {
        separator()
        var s = s
        s.withUTF8 { appendQuoted($0) }
    }
    /// A value serialised as JSON already (an object rendered once and sent in many messages).
    public func value(json bytes: [UInt8]) {
        separator()
        bytes.withUnsafeBufferPointer { append($0) }
    }
    /// A value serialised as JSON already, read in place (a `jsonb` column's text, which the database wrote).
    public func value(json bytes: UnsafeBufferPointer<UInt8>) {
        separator()
        append(bytes)
    }
    /// A string value from UTF-8 bytes that are valid already (a text column: the server checked them).
    public func value(utf8 bytes: UnsafeBufferPointer<UInt8>) { separator(); appendQuoted(bytes) }
    /// An integer as a JSON string (`"42"`): ids, which JavaScript cannot hold as numbers past 2^53.
    public func value(quoted n: Int64) {
        separator()
        reserve(22)   // two quotes, a sign and 19 digits
        storage[count] = UInt8(ascii: "\"")
        count = writeDecimal(Int(n), at: count &+ 1)
        storage[count] = UInt8(ascii: "\"")
        count &+= 1
    }
    /// A string of an ASCII prefix and a number (`"/v1/files/42"`), without a `String` in between.
    public func value(asciiPrefix prefix: StaticString, decimal n: Int64) {
        separator()
        put(UInt8(ascii: "\""))
        append(prefix)
        appendDecimal(Int(n))
        put(UInt8(ascii: "\""))
    }
    /// A number given in hundredths, `cents / 100`, written as the shortest decimal that is it:
    /// `2.33`, `2.5`, `3` — what `value(Double)` writes for `Double(cents) / 100`, without the
    /// floating-point printing.
    public func value(hundredths cents: Int) {
        separator()
        if cents < 0 { put(UInt8(ascii: "-")) }
        let magnitude = cents.magnitude
        appendDecimal(Int(magnitude / 100))
        let fraction = Int(magnitude % 100)
        guard fraction > 0 else { return }
        reserve(3)
        storage[count] = UInt8(ascii: ".")
        storage[count + 1] = UInt8(truncatingIfNeeded: 48 + fraction / 10)
        count += 2
        if fraction % 10 != 0 { storage[count] = UInt8(truncatingIfNeeded: 48 + fraction % 10); count += 1 }
    }
    /// A number given as the text a database printed (`2.878049`), written as it is; null if it is not
    /// a plain decimal (digits, at most one point, a leading minus), so nothing else can get in.
    public func value(decimalText text: UnsafeBufferPointer<UInt8>) {
        var points = 0, digits = 0
        for (i, byte) in text.enumerated() {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digits &+= 1
            case UInt8(ascii: "."): points &+= 1
            case UInt8(ascii: "-") where i == 0: break
            default: return null()
            }
        }
        guard digits > 0, points <= 1, text.last != UInt8(ascii: ".") else { return null() }
        separator()
        append(text)
    }
    public func value(_ n: Int) { separator(); appendDecimal(n) }
    public func value(_ b: Bool) { separator(); append(b ? "true" : "false") }
    public func value(_ d: Double) {
        separator()
        if d.isFinite {
            if d == d.rounded(), abs(d) < 1e15 { appendDecimal(Int(d)) } else { appendASCII(d.description) }
        } else {
            append("null")
        }
    }
    public func null() { separator(); append("null") }

    /// A string value of exactly `length` bytes that need no escaping (ASCII without `"`, `\` or
    /// control characters), written in place by `write`: timestamps, without a `String` in between.
    public func value(asciiLength length: Int, _ write: (UnsafeMutableBufferPointer<UInt8>) -> Void) {
        separator()
        reserve(length + 2)
        storage[count] = UInt8(ascii: "\"")
        write(UnsafeMutableBufferPointer(start: storage + count + 1, count: length))
        storage[count + length + 1] = UInt8(ascii: "\"")
        count += length + 2
    }

    public func field(_ name: StaticString, _ v: String?) { key(name); if let v { value(v) } else { null() } }
    public func field(_ name: StaticString, _ v: Int?) { key(name); if let v { value(v) } else { null() } }
    public func field(_ name: StaticString, _ v: Bool?) { key(name); if let v { value(v) } else { null() } }
    public func field(_ name: StaticString, _ v: Double?) { key(name); if let v { value(v) } else { null() } }

    private static let hex: StaticString = "0123456789abcdef"

    @inline(__always)
    private func separator() {
        if needsComma { put(UInt8(ascii: ",")) }
        needsComma = true
    }

    /// Room for `more` bytes after `count`.
    @inline(__always)
    private func reserve(_ more: Int) {
        if count + more > capacity { grow(to: count + more) }
    }

    /// Four times larger each time: a page of long reviews grows once from the first 32 KiB.
    private func grow(to needed: Int) {
        var size = capacity
        while size < needed { size *= 4 }
        let larger = UnsafeMutablePointer<UInt8>.allocate(capacity: size)
        larger.update(from: storage, count: count)
        storage.deallocate()
        storage = larger
        capacity = size
    }

    @inline(__always)
    private func put(_ byte: UInt8) {
        reserve(1)
        storage[count] = byte
        count += 1
    }

    private func append(_ literal: StaticString) {
        Self.withBytes(of: literal) { append($0) }
    }

    private func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        reserve(bytes.count)
        (storage + count).update(from: base, count: bytes.count)
        count += bytes.count
    }

    private func appendASCII(_ s: String) {
        var s = s
        s.withUTF8 { append($0) }
    }

    private func appendDecimal(_ n: Int) {
        reserve(20)   // Int.min: a sign and 19 digits
        count = writeDecimal(n, at: count)
    }

    /// Writes `n` at `at`, where 20 bytes are free; returns the index after it.
    @inline(__always)
    private func writeDecimal(_ n: Int, at start: Int) -> Int {
        let room = UnsafeMutableRawPointer(storage + start)
        var sign = 0
        if n < 0 { room.storeBytes(of: UInt8(ascii: "-"), as: UInt8.self); sign = 1 }
        var magnitude = n.magnitude
        // An Int's magnitude has at most 19 digits, below 10^19, which a UInt holds: the threshold never wraps.
        var length = 1, threshold: UInt = 10
        while magnitude >= threshold {
            length &+= 1
            threshold &*= 10
        }
        // Two digits a step from the end, from the pair table.
        let pairs = UnsafeRawPointer(Self.digitPairs.utf8Start), digits = room + sign
        var at = length
        while magnitude >= 100 {
            at &-= 2
            digits.storeBytes(of: pairs.loadUnaligned(fromByteOffset: 2 &* Int(magnitude % 100), as: UInt16.self), toByteOffset: at, as: UInt16.self)
            magnitude /= 100
        }
        if magnitude >= 10 {
            digits.storeBytes(of: pairs.loadUnaligned(fromByteOffset: 2 &* Int(magnitude), as: UInt16.self), as: UInt16.self)
        } else {
            digits.storeBytes(of: UInt8(truncatingIfNeeded: 48 &+ magnitude), as: UInt8.self)
        }
        return start &+ sign &+ length
    }

    /// "00" to "99" back to back, each pair of digits as two bytes (read as one `UInt16`): a literal,
    /// read through its pointer (no lazy global, no bounds check). Timestamps are written with it too.
    public static var digitPairs: StaticString { "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899" }

    /// RFC 8259 string: escapes `"`, `\\` and control characters; everything else is copied as UTF-8.
    /// Text is mostly plain (a cafe's introduction is hundreds of bytes without one to escape): each
    /// plain run is found sixteen bytes at a time (`cafe_json_plain_length`) and copied at once.
    private func appendQuoted(_ utf8: UnsafeBufferPointer<UInt8>) {
        reserve(utf8.count &+ 2)
        storage[count] = UInt8(ascii: "\"")
        count &+= 1
        if let base = utf8.baseAddress {
            var start = 0
            while start < utf8.count {
                let plain = cafe_json_plain_length(base + start, utf8.count &- start)
                append(UnsafeBufferPointer(start: base + start, count: plain))
                start &+= plain
                guard start < utf8.count else { break }
                appendEscaped(base[start])
                start &+= 1
            }
        }
        put(UInt8(ascii: "\""))
    }

    private func appendEscaped(_ c: UInt8) {
        reserve(6)
        storage[count] = 0x5C
        switch c {
        case 0x22: storage[count + 1] = 0x22; count += 2
        case 0x5C: storage[count + 1] = 0x5C; count += 2
        case 0x0A: storage[count + 1] = UInt8(ascii: "n"); count += 2
        case 0x0D: storage[count + 1] = UInt8(ascii: "r"); count += 2
        case 0x09: storage[count + 1] = UInt8(ascii: "t"); count += 2
        default:
            Self.hex.withUTF8Buffer { hex in
                storage[count + 1] = UInt8(ascii: "u")
                storage[count + 2] = 0x30
                storage[count + 3] = 0x30
                storage[count + 4] = hex[Int(c >> 4)]
                storage[count + 5] = hex[Int(c & 0xF)]
            }
            count += 6
        }
    }
}
