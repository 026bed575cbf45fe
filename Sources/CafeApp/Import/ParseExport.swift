import Foundation

/// One object of a Parse export in the REST API's shape, whatever format it came in: `objectId`,
/// `createdAt`/`updatedAt` as dates, pointers as `{"__type":"Pointer",…}`, files as
/// `{"__type":"File","name":…}`, dates as `{"__type":"Date","iso":…}`. From mongoexport, Parse
/// Server's own columns keep their names when they matter (`_hashed_password`, `_wperm`); its other
/// internal columns (`_rperm`, `_acl`, `_email_verify_token`, …) are dropped.
struct ExportedObject: Sendable {
    let className: String
    let objectID: String
    let createdAt: Date?
    let updatedAt: Date?
    let fields: [String: JSONValue]
}

/// A Parse app's export: a directory with one file per class and the downloaded files in `files/`.
struct ParseExport: Sendable {
    enum Format: String, Sendable {
        case rest = "Parse REST / Dashboard JSON"
        case mongo = "mongoexport"
    }

    struct ClassFile: Sendable {
        let file: String
        let format: Format
        let objects: [ExportedObject]
    }

    /// The classes the original apps used, by the names their export files carry.
    static let classNames: [String: String] = [
        "_User": "_User", "User": "_User", "CafeMaster": "CafeMaster", "CafeTransactionComment": "CafeTransactionComment",
    ]
    /// Fields that hold a File; Parse Server keeps them in MongoDB as the file's name.
    static let fileFields: Set<String> = ["CafeImage", "CafeCommentImage"]

    let directory: URL
    var classFiles: [ClassFile] = []
    /// Files that are not an export of a known class, or cannot be read: reported, never guessed at.
    var unreadable: [(file: String, reason: String)] = []

    /// Reads every `*.json`/`*.ndjson` file of `directory` (not `files/`), each in the format its
    /// content shows.
    init(directory: URL) throws {
        self.directory = directory
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        for name in names where name.hasSuffix(".json") || name.hasSuffix(".ndjson") || name.hasSuffix(".jsonl") {
            let stem = String(name.prefix { $0 != "." })
            guard let className = Self.classNames[stem] else {
                unreadable.append((name, "not a class of the original apps (_User, CafeMaster, CafeTransactionComment): ignored"))
                continue
            }
            guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path) else {
                unreadable.append((name, "cannot be read"))
                continue
            }
            do {
                classFiles.append(try Self.read(name: name, className: className, bytes: [UInt8](data)))
            } catch let error as Unreadable {
                unreadable.append((name, error.reason))
            }
        }
    }

    /// `files/NAME`, nil if there is no such file (a name never leaves `files/`).
    func file(named name: String) -> ExportedFile? {
        guard !name.isEmpty, !name.contains("/"), !name.utf8.contains(0), name != ".", name != ".." else { return nil }
        let path = directory.appendingPathComponent("files").appendingPathComponent(name).path
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
              attributes[.type] as? FileAttributeType == .typeRegular, let size = (attributes[.size] as? NSNumber)?.intValue else { return nil }
        return ExportedFile(path: path, size: size)
    }

    struct Unreadable: Error {
        let reason: String
    }

    /// `{"results": [...]}` or `[...]` of REST objects, `[...]` of MongoDB documents
    /// (`mongoexport --jsonArray`), or one MongoDB document (or REST object) per line.
    static func read(name: String, className: String, bytes: [UInt8]) throws -> ClassFile {
        let documents: [JSONValue]
        if let whole = JSONValue.parse(bytes) {
            switch whole {
            case .object(let o):
                if case .array(let results)? = o["results"] { documents = results } else { documents = [whole] }
            case .array(let items): documents = items
            default: throw Unreadable(reason: "is neither an object nor an array of objects")
            }
        } else {
            var lines: [JSONValue] = []
            for (number, line) in bytes.split(separator: UInt8(ascii: "\n")).enumerated() {
                guard line.contains(where: { $0 > 32 }) else { continue }
                guard let value = JSONValue.parse(Array(line)) else { throw Unreadable(reason: "line \(number + 1) is not JSON") }
                lines.append(value)
            }
            documents = lines
        }
        guard let first = documents.first?.object else {
            if documents.isEmpty { return ClassFile(file: name, format: .rest, objects: []) }
            throw Unreadable(reason: "holds something other than objects")
        }
        let format: Format = first["_id"] != nil ? .mongo : .rest
        var objects: [ExportedObject] = []
        for (index, document) in documents.enumerated() {
            guard let fields = document.object else { throw Unreadable(reason: "item \(index + 1) is not an object") }
            guard let object = format == .mongo ? mongo(fields, className) : rest(fields, className) else {
                throw Unreadable(reason: "item \(index + 1) has no \(format == .mongo ? "_id" : "objectId")")
            }
            objects.append(object)
        }
        return ClassFile(file: name, format: format, objects: objects)
    }

    private static func rest(_ fields: [String: JSONValue], _ className: String) -> ExportedObject? {
        guard let id = fields["objectId"]?.string else { return nil }
        var rest = fields
        for system in ["objectId", "createdAt", "updatedAt", "className", "__type"] { rest[system] = nil }
        return ExportedObject(className: className, objectID: id, createdAt: date(fields["createdAt"]), updatedAt: date(fields["updatedAt"]),
                              fields: rest)
    }

    private static func mongo(_ document: [String: JSONValue], _ className: String) -> ExportedObject? {
        let id: String
        switch document["_id"] {
        case .string(let s)?: id = s
        case .object(let o)?: guard let oid = o["$oid"]?.string else { return nil }; id = oid
        default: return nil
        }
        var fields: [String: JSONValue] = [:]
        for (key, value) in document {
            if key.hasPrefix("_p_") {
                // Parse Server keeps a pointer as "Class$objectId".
                let field = String(key.dropFirst(3))
                if let text = value.string, let dollar = text.firstIndex(of: "$") {
                    fields[field] = .object(["__type": .string("Pointer"), "className": .string(String(text[..<dollar])),
                                             "objectId": .string(String(text[text.index(after: dollar)...]))])
                } else {
                    fields[field] = value
                }
            } else if key == "_hashed_password" || key == "_wperm" {
                fields[key] = value
            } else if !key.hasPrefix("_") {
                fields[key] = fileFields.contains(key) ? value.string.map { .object(["__type": .string("File"), "name": .string($0)]) } ?? value
                                                       : plain(value)
            }
        }
        return ExportedObject(className: className, objectID: id, createdAt: date(document["_created_at"]),
                              updatedAt: date(document["_updated_at"]), fields: fields)
    }

    /// MongoDB extended JSON (`{"$date":…}`, `{"$numberInt":…}`, …) as Parse's REST values.
    private static func plain(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(let o) where o.count == 1:
            if let d = o["$date"] { return date(d).map { .object(["__type": .string("Date"), "iso": .string(iso($0))]) } ?? value }
            for key in ["$numberInt", "$numberLong", "$numberDouble", "$numberDecimal"] {
                if let text = o[key]?.string, let n = Double(text) { return .number(n) }
            }
            return value
        case .array(let items): return .array(items.map(plain))
        default: return value
        }
    }

    /// A REST date (`{"__type":"Date","iso":…}` or an ISO string) or a MongoDB one
    /// (`{"$date": ISO | millis | {"$numberLong": millis}}`).
    static func date(_ value: JSONValue?) -> Date? {
        switch value {
        case .string(let s)?: return ParseDate.parse(s)
        case .number(let millis)?: return millis.isFinite && abs(millis) < 1e15 ? Date(timeIntervalSince1970: millis / 1000) : nil
        case .object(let o)?:
            if o["__type"] == .string("Date") { return date(o["iso"]) }
            if let inner = o["$date"] { return date(inner) }
            if let text = o["$numberLong"]?.string, let millis = Double(text) { return date(.number(millis)) }
            return nil
        default: return nil
        }
    }

    static func iso(_ date: Date) -> String { Timestamp.format(date) }
}

/// A file of the export's `files/`: its size known, its bytes read only when asked for.
struct ExportedFile: Sendable {
    let path: String
    let size: Int

    /// The first `count` bytes (enough to tell an image's format), or nil if it cannot be read.
    func prefix(_ count: Int) -> [UInt8]? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: count) else { return nil }
        return [UInt8](data)
    }

    struct Unreadable: Error, CustomStringConvertible {
        let path: String
        var description: String { "cannot read \(path)" }
    }

    func bytes() throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else { throw Unreadable(path: path) }
        return [UInt8](data)
    }
}
