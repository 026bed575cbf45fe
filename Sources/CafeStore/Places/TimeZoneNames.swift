import PostgresKit
import Synchronization

/// The IANA time zone names a cafe may have: PostgreSQL's own list (`pg_timezone_names`), whose rules
/// every hours computation uses, without the `posix/` and `right/` copies and the files that are not
/// zones. Read once per process (the list changes only with the server's time zone data).
public final class TimeZoneNames: Sendable {
    private let names = Mutex<Set<String>?>(nil)

    public init() {}

    public func contains(_ name: String, on db: DatabaseClient) async throws -> Bool {
        if let known = names.withLock({ $0 }) { return known.contains(name) }
        let rows = try await db.read("""
            SELECT name FROM pg_timezone_names
            WHERE name NOT LIKE 'posix/%' AND name NOT LIKE 'right/%' AND name NOT IN ('posixrules', 'localtime', 'Factory')
            """)
        let read = Set(try rows.map { try $0.decode(0, as: String.self) })
        names.withLock { $0 = read }
        return read.contains(name)
    }
}
