import CLibPQ

/// The form a statement's values come back in. Binary is for pages of many rows made of integers,
/// text and timestamps (the types with `init(postgresBinary:type:)`): the server copies a timestamp's
/// eight bytes instead of printing it (a fifth of a microsecond each, 200 on a page of 100 comments),
/// and nothing is parsed here. A column of another type fails to decode, loudly, in a binary result.
public enum ResultFormat: Int32, Sendable {
    case text = 0
    case binary = 1
}

/// The rows of one statement's result. Owns the libpq `PGresult` and frees it when released.
/// Unchecked `Sendable`: libpq never changes a `PGresult` once it hands it over, and only `deinit` frees it.
public final class QueryResult: Sequence, @unchecked Sendable {
    let handle: OpaquePointer

    init(handle: OpaquePointer) { self.handle = handle }
    deinit { PQclear(handle) }

    public var count: Int { Int(PQntuples(handle)) }
    public var isEmpty: Bool { count == 0 }
    public var columnCount: Int { Int(PQnfields(handle)) }

    /// Rows inserted, updated or deleted (the number in the command tag), 0 if none.
    public var affectedRows: Int { Int(String(cString: PQcmdTuples(handle))) ?? 0 }

    public func columnName(_ index: Int) -> String { String(cString: PQfname(handle, Int32(index))) }

    public subscript(index: Int) -> Row {
        precondition(index >= 0 && index < count, "row \(index) out of range 0..<\(count)")
        return Row(result: self, index: Int32(index))
    }

    public var first: Row? { isEmpty ? nil : self[0] }

    /// The first row of a statement that always returns one (an aggregate, `INSERT … RETURNING`).
    /// Throws rather than traps if it returned none: a wrong assumption costs one request, not the process.
    public func one() throws -> Row {
        guard let row = first else { throw PostgresError(kind: .decoding, message: "the statement returned no row") }
        return row
    }

    public func makeIterator() -> AnyIterator<Row> {
        var next = 0
        let total = count
        return AnyIterator {
            guard next < total else { return nil }
            defer { next += 1 }
            return Row(result: self, index: Int32(next))
        }
    }
}

/// One row of a `QueryResult`; columns are read by position (as written in the SELECT) or name.
/// Unchecked `Sendable`: a position in a `QueryResult`, which never changes.
public struct Row: @unchecked Sendable {
    let result: QueryResult
    let index: Int32

    public func isNull(_ column: Int) -> Bool { PQgetisnull(result.handle, index, Int32(column)) == 1 }

    /// The column's value, which must not be NULL.
    public func decode<T: PostgresDecodable>(_ column: Int, as type: T.Type = T.self) throws -> T {
        guard let value = try decode(column, as: T?.self) else {
            throw PostgresError(kind: .decoding, message: "column \(column) (\(result.columnName(column))) is NULL, expected \(T.self)")
        }
        return value
    }

    /// The column's value, or nil for SQL NULL.
    public func decode<T: PostgresDecodable>(_ column: Int, as type: T?.Type = T?.self) throws -> T? {
        guard column >= 0 && column < result.columnCount else {
            throw PostgresError(kind: .decoding, message: "no column \(column) in a result of \(result.columnCount)")
        }
        let c = Int32(column)
        if PQgetisnull(result.handle, index, c) == 1 { return nil }
        let length = Int(PQgetlength(result.handle, index, c))
        let binary = PQfformat(result.handle, c) == 1
        let value: T? = PQgetvalue(result.handle, index, c).withMemoryRebound(to: UInt8.self, capacity: length) {
            let bytes = UnsafeBufferPointer(start: $0, count: length)
            return binary ? T(postgresBinary: bytes, type: PostgresType(rawValue: PQftype(result.handle, c))) : T(postgresText: bytes)
        }
        guard let value else {
            throw PostgresError(kind: .decoding, message: "column \(column) (\(result.columnName(column))) is not a valid \(T.self)")
        }
        return value
    }

    public func decode<T: PostgresDecodable>(_ name: String, as type: T.Type = T.self) throws -> T {
        try decode(try position(of: name), as: T.self)
    }

    public func decode<T: PostgresDecodable>(_ name: String, as type: T?.Type = T?.self) throws -> T? {
        try decode(try position(of: name), as: T?.self)
    }

    private func position(of name: String) throws -> Int {
        let n = Int(PQfnumber(result.handle, "\"" + name + "\""))
        guard n >= 0 else { throw PostgresError(kind: .decoding, message: "no column named \(name)") }
        return n
    }
}
