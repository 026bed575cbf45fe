import CLibPQ

/// An error from PostgreSQL or from talking to it. Carries SQLSTATE when the server sent one,
/// so callers map e.g. a unique violation to a domain error without parsing messages.
public struct PostgresError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable, Equatable {
        /// Could not connect, or the connection broke. The database may be down or restarting.
        case unavailable
        /// The server rejected a statement; `sqlState` says why.
        case server
        /// No pooled connection became free within the acquire timeout.
        case poolTimeout
        /// A value in a result could not be decoded to the requested Swift type.
        case decoding
    }

    public let kind: Kind
    public let sqlState: String?
    public let message: String
    public let detail: String?
    public let constraint: String?
    /// The table and column an error names, when the server says (`PG_DIAG_TABLE_NAME`, `PG_DIAG_COLUMN_NAME`).
    public let table: String?
    public let column: String?

    public init(kind: Kind, sqlState: String? = nil, message: String, detail: String? = nil, constraint: String? = nil,
                table: String? = nil, column: String? = nil) {
        self.kind = kind
        self.sqlState = sqlState
        self.message = message
        self.detail = detail
        self.constraint = constraint
        self.table = table
        self.column = column
    }

    /// The error a failed result reports (which the caller still clears); `broken`: the connection
    /// it came on has failed, so whatever the server said, the database is unavailable to it.
    /// The connection `handle` failed (its socket, or libpq itself): libpq's last message for it.
    init(connectionFailed handle: OpaquePointer) {
        self.init(kind: .unavailable, message: String(cString: PQerrorMessage(handle)).trimmingTrailingNewlines())
    }

    init(failed result: OpaquePointer, broken: Bool) {
        func field(_ code: UInt8) -> String? { PQresultErrorField(result, Int32(code)).map { String(cString: $0) } }
        let sqlState = field(UInt8(ascii: "C"))
        self.init(kind: broken || SQLState.meansUnavailable(sqlState) ? .unavailable : .server, sqlState: sqlState,
                  message: field(UInt8(ascii: "M")) ?? String(cString: PQresultErrorMessage(result)).trimmingTrailingNewlines(),
                  detail: field(UInt8(ascii: "D")), constraint: field(UInt8(ascii: "n")), table: field(UInt8(ascii: "t")),
                  column: field(UInt8(ascii: "c")))
    }

    public var description: String {
        var s = "PostgresError(\(kind)"
        if let sqlState { s += ", \(sqlState)" }
        s += "): \(message)"
        // Not the detail: it can quote row values ("Failing row contains (…)", a password hash
        // among them), and descriptions end up in logs. `detail` stays available to code.
        if let constraint { s += " [\(constraint)]" }
        return s
    }

    public var isUniqueViolation: Bool { sqlState == SQLState.uniqueViolation }
    public var isForeignKeyViolation: Bool { sqlState == SQLState.foreignKeyViolation }
    /// The value a client sent failed one of the database's own checks: class 22 (data exception:
    /// out of range, bad encoding, too long), a CHECK constraint (23514) or NOT NULL (23502). The
    /// request was bad, not the server; the statement wrote nothing.
    public var isRejectedValue: Bool {
        guard let sqlState else { return false }
        return sqlState.hasPrefix("22") || sqlState == SQLState.checkViolation || sqlState == SQLState.notNullViolation
    }

    /// The column a rejected value belongs to, as well as the server tells: the column it names,
    /// else the one a CHECK constraint is named after by PostgreSQL's default (`users_username_check`).
    public var rejectedColumn: String? {
        if let column { return column }
        guard let table, let constraint, constraint.hasPrefix(table + "_"), constraint.hasSuffix("_check"),
              constraint.count > table.count + "__check".count else { return nil }
        return String(constraint.dropFirst(table.count + 1).dropLast("_check".count))
    }
    /// The database is unreachable or going away: worth a 503 and a retry, not a 500.
    public var isUnavailable: Bool {
        kind == .unavailable || kind == .poolTimeout || SQLState.meansUnavailable(sqlState)
    }
}

/// SQLSTATE codes the service reacts to (PostgreSQL Appendix A).
public enum SQLState {
    public static let uniqueViolation = "23505"
    public static let foreignKeyViolation = "23503"
    public static let checkViolation = "23514"
    public static let notNullViolation = "23502"
    public static let deadlockDetected = "40P01"
    /// Raised by `cafe_capped` (the keyword lookup) past its match limit (program_limit_exceeded).
    public static let programLimitExceeded = "54000"
    /// A lock not granted within `lock_timeout`.
    public static let lockNotAvailable = "55P03"
    /// A statement cancelled, here always by `statement_timeout`.
    public static let queryCanceled = "57014"
    public static let adminShutdown = "57P01"
    public static let crashShutdown = "57P02"
    public static let cannotConnectNow = "57P03"
    public static let duplicateDatabase = "42P04"
    /// A write on a standby (read-only: it is in recovery).
    public static let readOnlyTransaction = "25006"
    /// Also how a standby cancels a query that conflicts with the WAL it replays.
    public static let serializationFailure = "40001"
    public static let databaseDropped = "57P04"
    /// A NUL in text (PostgreSQL's text cannot hold one).
    public static let characterNotInRepertoire = "22021"
    public static let inFailedTransaction = "25P02"

    /// A write on a server that is (no longer) the primary: after a failover, a connection made to the
    /// old primary that now follows the new one.
    public static let readOnlySQLTransaction = "25006"

    /// Class 08 (connection exception), 57P01–57P03 (shutdown, crash, cannot connect now), 57014
    /// (cancelled: the statement timeout, i.e. a database too busy to answer in time) and 25006 (a
    /// write reached a standby: the primary moved) — all worth a retry.
    static func meansUnavailable(_ state: String?) -> Bool {
        guard let state else { return false }
        return state.hasPrefix("08") || [adminShutdown, crashShutdown, cannotConnectNow, queryCanceled, readOnlySQLTransaction].contains(state)
    }
}
