import Foundation

/// What the repository holds, from `pgbackrest info --output=json`: the backups, oldest first, and the
/// WAL archive's range.
public struct BackupInfo: Sendable {
    public struct Backup: Sendable, Equatable {
        public let label: String
        public let kind: String
        public let started: Date
        public let stopped: Date
        /// The database's size, and what this backup added to the repository (after compression and
        /// what it shares with the backups before it).
        public let databaseBytes: Int64
        public let repositoryBytes: Int64
    }

    public let backups: [Backup]
    /// The first and last WAL segment in the archive (nil when none has arrived).
    public let archiveRange: (first: String, last: String)?
    /// pgBackRest's own word on the stanza ("ok", or what is wrong).
    public let status: String
    /// The stanza is made in the repository (pgBackRest's status: ok, no backup yet, or one running).
    public let stanzaExists: Bool

    /// `12.3 MB`: a backup's size as the commands say it.
    public static func megabytes(_ bytes: Int64) -> String { String(format: "%.1f MB", Double(bytes) / 1_048_576) }

    /// The earliest point a restore can reach: the end of the oldest backup.
    public var windowStart: Date? { backups.first?.stopped }
    public var lastBackup: Backup? { backups.last }

    static func decode(_ data: Data) throws -> BackupInfo {
        let stanzas = try JSONDecoder().decode([Stanza].self, from: data)
        guard let stanza = stanzas.first else { return BackupInfo(backups: [], archiveRange: nil, status: "no stanza", stanzaExists: false) }
        let backups = (stanza.backup ?? []).map { entry in
            Backup(label: entry.label, kind: entry.type, started: Date(timeIntervalSince1970: entry.timestamp.start),
                   stopped: Date(timeIntervalSince1970: entry.timestamp.stop), databaseBytes: entry.info.size,
                   repositoryBytes: entry.info.repository.delta)
        }.sorted { $0.stopped < $1.stopped }
        let archive = stanza.archive?.last.flatMap { entry in entry.min.flatMap { min in entry.max.map { (min, $0) } } }
        return BackupInfo(backups: backups, archiveRange: archive, status: stanza.status.message,
                          stanzaExists: [0, 2, 6].contains(stanza.status.code))
    }

    private struct Stanza: Decodable {
        struct Archive: Decodable { let min: String?; let max: String? }
        struct Entry: Decodable {
            struct Stamp: Decodable { let start: Double; let stop: Double }
            struct Sizes: Decodable {
                struct Repository: Decodable { let delta: Int64 }
                let size: Int64
                let repository: Repository
            }
            let label: String
            let type: String
            let timestamp: Stamp
            let info: Sizes
        }
        /// 0 ok, 2 no valid backups, 6 a backup or expire running; the others say the stanza is missing or wrong.
        struct Status: Decodable { let code: Int; let message: String }
        let archive: [Archive]?
        let backup: [Entry]?
        let status: Status
    }
}
