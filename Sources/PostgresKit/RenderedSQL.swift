/// A statement rendered once (`SQL.rendered`: numbered placeholders, values in order) and how it is
/// sent: what `DatabaseClient.read` and the statement loop take, and what a search keeps of a first
/// page it planned, to send again and again (`FirstPageReads`).
public struct RenderedSQL: Sendable {
    let text: String
    let binds: [PostgresBind]
    let format: ResultFormat
    /// Sent unnamed, planned for its values every time (`Connection.queryPlannedPerCall`).
    let plannedPerCall: Bool

    public init(_ sql: SQL, format: ResultFormat = .text, plannedPerCall: Bool = false) {
        (text, binds) = sql.rendered
        self.format = format
        self.plannedPerCall = plannedPerCall
    }

    /// The values, once none is text holding a NUL: text parameters travel as C strings, where a NUL
    /// would silently cut the value short. Refused (PostgreSQL's text cannot hold NUL anyway) with the
    /// error the server gives for it, before anything is sent — on a connection and on the loop alike.
    func checkedBinds() throws -> [PostgresBind] {
        for case .text(let s) in binds where s.utf8.contains(0) {
            throw PostgresError(kind: .server, sqlState: SQLState.characterNotInRepertoire, message: "invalid byte sequence for encoding \"UTF8\": 0x00")
        }
        return binds
    }
}
