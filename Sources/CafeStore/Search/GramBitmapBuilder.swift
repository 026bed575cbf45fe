import CafeDomain
import Foundation
import PostgresKit
import Synchronization

/// Keeps the gram bitmaps (`GramBitmaps`, migration 0017) to the grams that are common, building a
/// new gram's bitmaps from the stored search texts a few chunks at a time, without blocking writers
/// for longer than it takes the ones in flight to commit. The worker runs it; a bulk load (the
/// synthetic seed) empties the set first and builds everything at its end.
///
/// Why a bit is never missing, whatever runs meanwhile:
/// 1. `sync` adds a gram with `next_chunk = -1`; from its commit on, every statement that writes a
///    cafe sets that cafe's bit (the triggers read the gram table afresh).
/// 2. `step` first *fences* the new grams: under a momentary `SHARE` lock on `cafes` — which waits
///    for every writer in flight, i.e. every one that may have missed them — it sets `next_chunk = 0`.
/// 3. Only fenced grams are built: their bits are ORed from the texts a snapshot after the fence
///    sees, chunk by chunk; a gram is `ready` (used by searches) once every chunk is done.
/// A cafe edited while its chunk is read may keep a stale set bit; candidates are checked by text.
public struct GramBitmapBuilder: Sendable {
    let pool: ConnectionPool
    /// Chunks one `step` reads (~123,000 cafes): about a second, so an aggregation pass on the same
    /// worker thread waits at most that long.
    static let chunksPerStep = 4
    /// A gram stays in the set until it falls under half the threshold: no build, drop, build again
    /// for a gram whose frequency hovers around it.
    static let keepAbove = GramFrequencies.rareBelow / 2

    public init(pool: ConnectionPool) { self.pool = pool }

    public struct Progress: Sendable, Equatable {
        /// Chunks still to build for the gram furthest behind; 0 when every gram is ready.
        public var chunksLeft: Int
        public var chunks: Int
    }

    /// Makes the set of grams with bitmaps follow PostgreSQL's statistics of `cafes.search_grams`:
    /// grams in at least `GramFrequencies.rareBelow` of cafes are added (to be built), grams under
    /// `keepAbove` dropped. Without statistics (a table never analysed) nothing changes.
    @discardableResult
    public func sync() async throws -> (added: Int, removed: Int) {
        let row = try await pool.query("""
            WITH stats AS (
                SELECT e.gram, e.frequency
                FROM pg_stats s, unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs::text::float8[]) AS e(gram, frequency)
                WHERE s.tablename = 'cafes' AND s.attname = 'search_grams' AND e.gram IS NOT NULL
            ), added AS (
                INSERT INTO search_bitmap_grams (gram, next_chunk)
                SELECT gram, -1 FROM stats WHERE frequency >= \(GramFrequencies.rareBelow) ORDER BY gram
                ON CONFLICT (gram) DO NOTHING RETURNING gram
            ), removed AS (
                DELETE FROM search_bitmap_grams b
                WHERE EXISTS (SELECT 1 FROM stats)
                  AND NOT EXISTS (SELECT 1 FROM stats WHERE stats.gram = b.gram AND stats.frequency >= \(Self.keepAbove))
                RETURNING gram
            )
            SELECT (SELECT count(*) FROM added), (SELECT count(*) FROM removed)
            """).one()
        return (try row.decode(0), try row.decode(1))
    }

    /// Fences new grams and builds the next `chunksPerStep` chunks of those not ready. Nil when
    /// another worker holds the build, or writers held the fence's lock for over a second.
    public func step() async throws -> Progress? {
        do {
            try await pool.transaction { tx in
                guard try await tx.query("SELECT 1 FROM search_bitmap_grams WHERE next_chunk < 0 LIMIT 1").first != nil else { return }
                try await tx.execute(script: "SET LOCAL lock_timeout = '1s'; LOCK TABLE cafes IN SHARE MODE")
                try await tx.query("UPDATE search_bitmap_grams SET next_chunk = 0 WHERE next_chunk < 0")
            }
        } catch let error as PostgresError where error.sqlState == SQLState.lockNotAvailable {
            return nil
        }
        return try await pool.transaction { tx -> Progress? in
            guard try await tx.query("SELECT pg_try_advisory_xact_lock(hashtext('search_gram_bitmaps'))").one().decode(0, as: Bool.self) else { return nil }
            let building = try await tx.query("SELECT gram, next_chunk FROM search_bitmap_grams WHERE NOT ready AND next_chunk >= 0 ORDER BY gram")
            guard !building.isEmpty else { return Progress(chunksLeft: 0, chunks: 0) }
            let chunks: Int = try await tx.query("SELECT coalesce(max(id), 0) / \(Int64(GramBitmaps.chunkBits)) + 1 FROM cafes").one().decode(0)
            var grams: [String] = []
            var from = Int.max
            for row in building {
                grams.append(try row.decode(0))
                from = min(from, try row.decode(1, as: Int.self))
            }
            let to = min(from + Self.chunksPerStep, chunks)
            let keys = GramKeys(grams)
            try await build(chunks: from..<max(from, to), keys: keys, grams: grams, on: tx)
            try await tx.query("UPDATE search_bitmap_grams SET next_chunk = greatest(next_chunk, \(to)) WHERE gram = ANY(\(PostgresTextArray(grams))::text[])")
            try await tx.query("UPDATE search_bitmap_grams SET ready = true WHERE NOT ready AND next_chunk >= \(chunks)")
            return Progress(chunksLeft: chunks - to, chunks: chunks)
        }
    }

    /// `sync`, then `step` until every gram is ready (a bulk load's last step; tests).
    public func buildAll(progress: (Progress) -> Void = { _ in }) async throws {
        try await sync()
        while let done = try await step() {
            progress(done)
            if done.chunksLeft <= 0 { return }
        }
    }

    /// ORs the bits of the cafes in `chunks` into the bitmaps of `grams`, written gram by gram so
    /// that a gram's rows share pages (an AND then reads a few pages per gram, not one per row).
    private func build(chunks: Range<Int>, keys: GramKeys, grams: [String], on tx: DatabaseClient) async throws {
        let rowBytes = GramBitmaps.chunkBits / 8
        let width = Int64(GramBitmaps.chunkBits)
        // Each chunk is read and cut on a connection and core of its own (any snapshot after the
        // fence sees enough); then one row of bits per (gram, chunk), gram-major.
        let scanned = Mutex([Int: (present: [Bool], bits: [UInt8])]())
        try Blocking.forEach(Array(0..<chunks.count), lanes: chunks.count) { offset in
            let first = Int64(chunks.lowerBound + offset) * width
            var present = [Bool](repeating: false, count: grams.count)
            var bits = [UInt8](repeating: 0, count: grams.count * rowBytes)
            for row in try await pool.query("SELECT id, search_text FROM cafes WHERE id >= \(first) AND id < \(first + width)") {
                let position = Int(try row.decode(0, as: Int64.self) - first)
                let text: String = try row.decode(1)
                keys.forEachGram(in: text) { index in
                    present[index] = true
                    bits[index * rowBytes + position >> 3] |= 0x80 >> UInt8(position & 7)
                }
            }
            scanned.withLock { $0[offset] = (present, bits) }
        }
        let chunkBits = scanned.withLock { $0 }
        // Gram-major: every chunk of the first gram, then of the next. By offset from the first chunk, as
        // the scans keyed them (`chunks.indices` are the chunk numbers: from the second step on, none).
        let built = grams.indices.flatMap { index in
            (0..<chunks.count).compactMap { offset in chunkBits[offset]?.present[index] == true ? (index, offset) : nil }
        }
        // The bits go as one comma-separated hex string per statement, split in SQL: as an array
        // literal of thousands of 7,680-digit elements, escaping it cost more than the build (and
        // `substr` of one long text is a scan from its start per row).
        for batch in stride(from: 0, to: built.count, by: 256).map({ built[$0..<min($0 + 256, built.count)] }) {
            var hex = [UInt8]()
            hex.reserveCapacity(batch.count * (rowBytes * 2 + 1))
            for (index, offset) in batch {
                if !hex.isEmpty { hex.append(UInt8(ascii: ",")) }
                if let bits = chunkBits[offset]?.bits { Self.appendHex(bits[(index * rowBytes)..<((index + 1) * rowBytes)], to: &hex) }
            }
            try await tx.query("""
                INSERT INTO search_gram_bitmaps AS b (gram, chunk, bits)
                SELECT t.gram, t.chunk, ('x' || t.hex)::bit(\(fixed: String(GramBitmaps.chunkBits)))
                FROM unnest(\(PostgresTextArray(batch.map { grams[$0.0] }))::text[],
                            \(PostgresBigintArray(batch.map { chunks.lowerBound + $0.1 }))::bigint[]::integer[],
                            string_to_array(\(String(decoding: hex, as: UTF8.self)), ','))
                     WITH ORDINALITY AS t(gram, chunk, hex, n)
                JOIN search_bitmap_grams USING (gram)
                ORDER BY t.n
                ON CONFLICT (gram, chunk) DO UPDATE SET bits = b.bits | EXCLUDED.bits
                """)
        }
    }

    private static func appendHex(_ bytes: ArraySlice<UInt8>, to out: inout [UInt8]) {
        let digits: StaticString = "0123456789abcdef"
        digits.withUTF8Buffer { digits in
            for byte in bytes {
                out.append(digits[Int(byte >> 4)])
                out.append(digits[Int(byte & 15)])
            }
        }
    }
}

/// The grams being built, keyed by their one or two Unicode scalars, and the walk that finds them in
/// a text exactly as `cafe_short_grams` cuts it: every code point, and every two adjacent ones.
///
/// A build looks up every code point and pair of every cafe (~200 million lookups at 1M cafes), so
/// the table is open addressing with a multiplicative hash, not a `Dictionary` (whose SipHash made
/// it several times slower).
struct GramKeys {
    private let keys: [UInt64]
    private let indexes: [Int32]
    private let shift: UInt64
    private static let empty = UInt64.max

    init(_ grams: [String]) {
        var bits: UInt64 = 4
        while (1 << bits) < grams.count * 4 { bits += 1 }
        var keys = [UInt64](repeating: Self.empty, count: 1 << bits)
        var indexes = [Int32](repeating: -1, count: 1 << bits)
        let shift = 64 - bits
        for (index, gram) in grams.enumerated() {
            let scalars = gram.unicodeScalars
            // A gram of the search index is one or two code points; anything else has nothing to build.
            guard let first = scalars.first, let last = scalars.last, scalars.count <= 2 else { continue }
            let key = scalars.count == 1 ? Self.key(first) : Self.key(first, last)
            var slot = Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> shift)
            while keys[slot] != Self.empty && keys[slot] != key { slot = (slot + 1) & (keys.count - 1) }
            keys[slot] = key
            indexes[slot] = Int32(index)
        }
        self.keys = keys
        self.indexes = indexes
        self.shift = shift
    }

    /// A lone scalar under a marker no scalar has (0x1FFFFF > U+10FFFF), a pair as two 21-bit halves.
    private static func key(_ a: Unicode.Scalar) -> UInt64 { 0x1F_FFFF << 21 | UInt64(a.value) }
    private static func key(_ a: Unicode.Scalar, _ b: Unicode.Scalar) -> UInt64 { UInt64(a.value) << 21 | UInt64(b.value) }

    private func index(of key: UInt64) -> Int? {
        var slot = Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> shift)
        while true {
            let found = keys[slot]
            if found == key { return Int(indexes[slot]) }
            if found == Self.empty { return nil }
            slot = (slot + 1) & (keys.count - 1)
        }
    }

    func forEachGram(in text: String, _ body: (Int) -> Void) {
        var previous: Unicode.Scalar?
        for scalar in text.unicodeScalars {
            if let index = index(of: Self.key(scalar)) { body(index) }
            if let previous, let index = index(of: Self.key(previous, scalar)) { body(index) }
            previous = scalar
        }
    }
}
