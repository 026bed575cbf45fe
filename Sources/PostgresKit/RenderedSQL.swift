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
}
