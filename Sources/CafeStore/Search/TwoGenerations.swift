/// A map bounded to `capacity` entries in two generations: once the newer holds half of them, the
/// older is dropped and the newer becomes the older. An entry found in the older moves to the newer,
/// so those in use stay. What the search keeps per process (`KeywordFormCache`, `FirstPageReads`);
/// no per-entry bookkeeping, and a lookup of an entry in use reads the newer generation alone.
struct TwoGenerations<Key: Hashable, Value> {
    private(set) var newer: [Key: Value] = [:]
    private var older: [Key: Value] = [:]

    var count: Int { newer.count + older.count }

    func contains(_ key: Key) -> Bool { newer[key] != nil || older[key] != nil }

    /// The value of `key`, moved to the newer generation when found in the older.
    mutating func take(_ key: Key, capacity: Int) -> Value? {
        if let value = newer[key] { return value }
        guard let value = older.removeValue(forKey: key) else { return nil }
        keep(key, value, capacity: capacity)
        return value
    }

    /// Into the newer generation; when that holds half the capacity already, it becomes the older
    /// one first (so neither ever holds more than half). Capacity 0 keeps nothing.
    mutating func keep(_ key: Key, _ value: Value, capacity: Int) {
        guard capacity > 0 else { return }
        if newer.count >= max(1, capacity / 2) {
            older = capacity >= 2 ? newer : [:]
            newer = [:]
        }
        newer[key] = value
    }
}
