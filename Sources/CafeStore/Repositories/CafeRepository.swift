import CafeDomain
import Foundation
import PostgresKit

/// Cafes and their aggregates (read from `cafe_stats`; only the aggregation worker writes those).
public struct CafeRepository: DatabaseBound, Sendable {
    public var db: DatabaseClient
    /// How keyword searches are tried (`list`, `find`); one per process shares its statistics.
    let search: SearchPlanner

    public init(pool: ConnectionPool, search: SearchPlanner? = nil) {
        self.db = pool.client
        self.search = search ?? SearchPlanner(pool: pool)
    }

    public struct NewCafe: Sendable {
        public var name: String
        public var catchCopy: String
        public var introduction: String
        public var imageID: FileID?
        public var publishDate: String?
        public var place: PlaceChanges
        public init(name: String, catchCopy: String, introduction: String, imageID: FileID?, publishDate: String?, place: PlaceChanges = .init()) {
            self.place = place
            self.name = name
            self.catchCopy = catchCopy
            self.introduction = introduction
            self.imageID = imageID
            self.publishDate = publishDate
        }
    }

    /// A partial update: nil leaves a field as it is; for nullable fields `.some(nil)` clears it.
    public struct CafeChanges: Sendable {
        public var name: String?
        public var catchCopy: String?
        public var introduction: String?
        public var imageID: FileID??
        public var publishDate: String??
        public var place: PlaceChanges
        public init(name: String? = nil, catchCopy: String? = nil, introduction: String? = nil,
                    imageID: FileID?? = nil, publishDate: String?? = nil, place: PlaceChanges = .init()) {
            self.place = place
            self.name = name
            self.catchCopy = catchCopy
            self.introduction = introduction
            self.imageID = imageID
            self.publishDate = publishDate
        }
    }

    /// A cafe's place and hours as a write sets them: nil leaves a field as it is, `.some(nil)` clears it
    /// (a new cafe starts without any).
    public struct PlaceChanges: Sendable {
        public var location: GeoPoint??
        public var address: String??
        public var timeZone: String??
        public var openingHours: OpeningHours??
        public init(location: GeoPoint?? = nil, address: String?? = nil, timeZone: String?? = nil, openingHours: OpeningHours?? = nil) {
            self.location = location
            self.address = address
            self.timeZone = timeZone
            self.openingHours = openingHours
        }

        /// `SET` assignments of the given fields, for an UPDATE of `cafes`.
        var assignments: SQL {
            var set: [SQL] = []
            if let location {
                set.append("location = \(PlaceChanges.point(location))")
            }
            if let address { set.append("address = \(address)::text") }
            if let timeZone { set.append("time_zone = \(timeZone)::text") }
            if let openingHours { set.append("opening_hours = \(openingHours?.json)::jsonb") }
            return set.isEmpty ? "" : ", \(set.joined(separator: ", "))"
        }

        /// The geography of `point` (NULL for none), its two numbers bound.
        static func point(_ point: GeoPoint?) -> SQL {
            "ST_SetSRID(ST_MakePoint(\(point?.longitude)::float8, \(point?.latitude)::float8), 4326)::geography"
        }
    }

    public func find(_ id: CafeID) async throws -> Cafe? {
        try await db.read(CafeColumns.whole(id.rawValue)).first.map { try CafeColumns.decodeWhole($0) }
    }

    /// Whether the cafe is listed (exists and is not archived).
    public func exists(_ id: CafeID) async throws -> Bool {
        await !(try db.read("SELECT 1 FROM cafe_stats WHERE cafe_id = \(id.rawValue)").isEmpty)
    }

    public func create(_ new: NewCafe) async throws -> Cafe {
        try await db.transaction { tx in
            let id: Int64 = try await Self.mapImageError {
                try await tx.query("""
                    INSERT INTO cafes (name, catch_copy, introduction, image_id, publish_date, location, address, time_zone, opening_hours)
                    VALUES (\(new.name), \(new.catchCopy), \(new.introduction), \(new.imageID.raw), \(new.publishDate),
                            \(PlaceChanges.point(new.place.location ?? nil)), \(new.place.address ?? nil)::text, \(new.place.timeZone ?? nil)::text,
                            \((new.place.openingHours ?? nil)?.json)::jsonb)
                    RETURNING id
                    """).one().decode(0)
            }
            return try await CafeColumns.decodeWhole(try tx.query(CafeColumns.whole(id)).one())
        }
    }

    /// A listed cafe only (`.notFound` for an archived one: restore it first).
    public func update(_ id: CafeID, _ changes: CafeChanges) async throws -> Cafe {
        try await db.transaction { tx in
            let updated = try await Self.mapImageError {
                try await tx.query("""
                    UPDATE cafes SET
                        name = coalesce(\(changes.name), name),
                        catch_copy = coalesce(\(changes.catchCopy), catch_copy),
                        introduction = coalesce(\(changes.introduction), introduction),
                        image_id = CASE WHEN \(changes.imageID != nil)::bool THEN \(changes.imageID.flatMap { $0 }.raw)::bigint ELSE image_id END,
                        publish_date = CASE WHEN \(changes.publishDate != nil)::bool THEN \(changes.publishDate.flatMap { $0 })::text ELSE publish_date END,
                        updated_at = now()\(changes.place.assignments)
                    WHERE id = \(id.rawValue) AND archived_at IS NULL
                    """)
            }
            guard updated.affectedRows == 1 else { throw StoreError.notFound }
            return try await CafeColumns.decodeWhole(try tx.query(CafeColumns.whole(id.rawValue)).one())
        }
    }

    /// The database's refusals of a cafe's write, in the request's terms.
    static func mapImageError<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as PostgresError where error.isForeignKeyViolation {
            throw StoreError.invalidReference(field: "imageId")
        } catch let error as PostgresError where error.constraint == "cafes_hours_need_zone" {
            throw ValidationError(field: "timeZone", message: "is required with openingHours")
        }
    }

    static func page<T>(_ rows: [T], limit: Int, keyset: (T) -> Keyset) -> Page<T> {
        guard rows.count > limit else { return Page(items: rows, next: nil) }
        let items = Array(rows.prefix(limit))
        return Page(items: items, next: keyset(items[items.count - 1]))
    }
}
