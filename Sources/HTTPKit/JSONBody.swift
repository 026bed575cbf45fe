import Foundation

extension Request {
    /// Decodes the JSON body into `T`, answering bad input with a problem instead of a crash:
    /// wrong media type → 415 `unsupported_media_type`; not JSON (or not UTF-8) → 400 `invalid_json`;
    /// wrong types or missing fields → 400 `validation_failed` naming the field; a field not in
    /// `allowedFields` (when given) → 400 `validation_failed`, so a typo is never silently ignored.
    public func decodeJSON<T: Decodable>(_ type: T.Type, allowedFields: Set<String>? = nil) throws -> T {
        if let mediaType, mediaType != "application/json" {
            throw Problem.unsupportedMediaType("Send the body as application/json.")
        }
        guard !body.isEmpty else { throw Problem.badRequest("invalid_json", "The request body is empty; a JSON object is expected.") }
        guard JSONNesting.depth(body) <= JSONNesting.limit else {
            throw Problem.badRequest("invalid_json", "The request body nests deeper than \(JSONNesting.limit) levels.")
        }
        let data = Data(body)
        if let allowedFields {
            guard let object = (try? JSONSerialization.jsonObject(with: data, options: [])) as? [String: Any] else {
                throw Problem.badRequest("invalid_json", "The request body is not a JSON object.")
            }
            let unknown = object.keys.filter { !allowedFields.contains($0) }.sorted()
            if !unknown.isEmpty {
                throw Problem.validation(unknown.map { .init(field: $0, message: "unknown field") })
            }
            // PostgreSQL text cannot hold U+0000; refuse it here rather than store a shortened string.
            let withNUL = object.compactMap { key, value in (value as? String)?.unicodeScalars.contains("\u{0}") == true ? key : nil }.sorted()
            if !withNUL.isEmpty {
                throw Problem.validation(withNUL.map { .init(field: $0, message: "must not contain the NUL character") })
            }
        }
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch let error as DecodingError {
            throw Self.problem(for: error)
        } catch {
            throw Problem.badRequest("invalid_json", "The request body is not valid JSON.")
        }
    }

    static func problem(for error: DecodingError) -> Problem {
        func path(_ codingPath: [any CodingKey], _ last: (any CodingKey)? = nil) -> String {
            let keys = codingPath + (last.map { [$0] } ?? [])
            let text = keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
            return text.isEmpty ? "body" : text
        }
        switch error {
        case .keyNotFound(let key, let context):
            return .validation([.init(field: path(context.codingPath, key), message: "is required")])
        case .valueNotFound(let type, let context):
            return .validation([.init(field: path(context.codingPath), message: "must not be null (expected \(Self.jsonTypeName(type)))")])
        case .typeMismatch(let type, let context):
            return .validation([.init(field: path(context.codingPath), message: "must be \(Self.jsonTypeName(type))")])
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                return .badRequest("invalid_json", "The request body is not valid JSON.")
            }
            return .validation([.init(field: path(context.codingPath), message: context.debugDescription)])
        @unknown default:
            return .badRequest("invalid_json", "The request body could not be decoded.")
        }
    }

    static func jsonTypeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type, is Int64.Type, is Int32.Type: "an integer"
        case is Double.Type: "a number"
        case is Bool.Type: "a boolean"
        default: "\(type)"
        }
    }
}

/// How deeply a JSON text nests arrays and objects (brackets inside strings do not count).
public enum JSONNesting {
    public static let limit = 32

    public static func depth(_ bytes: [UInt8]) -> Int {
        var depth = 0, deepest = 0, inString = false, escaped = false
        for b in bytes {
            if inString {
                if escaped { escaped = false } else if b == 0x5C { escaped = true } else if b == 0x22 { inString = false }
                continue
            }
            switch b {
            case 0x22: inString = true
            case 0x5B, 0x7B: depth += 1; deepest = max(deepest, depth)
            case 0x5D, 0x7D: depth -= 1
            default: break
            }
        }
        return deepest
    }
}
