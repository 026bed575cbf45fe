#if canImport(Glibc)
import Glibc
#endif
import DatabaseSetup
import Foundation
import PostgresKit

/// pgBackRest (Debian `pgbackrest`): every command reads one configuration file and runs as the
/// server's account, so that the repository, the lock files and the restored directories stay that
/// account's (PostgreSQL runs `archive-push` as it too). The stanza is always `cafe`. The embedded
/// cluster's file is written from `BackupSettings` beside it; a deployment of its own (`make cluster`)
/// writes one for its nodes with `cafe backup configure` and names it in `BACKUP_CONFIG`.
public struct PgBackRest: Sendable {
    public static let stanza = "cafe"
    public static let program = "/usr/bin/pgbackrest"

    /// A PostgreSQL server pgBackRest backs up: its data directory, port and socket directory.
    public struct Node: Sendable {
        public let dataDirectory: URL
        public let port: Int
        public let socketDirectory: URL
        public init(dataDirectory: URL, port: Int, socketDirectory: URL) {
            self.dataDirectory = dataDirectory
            self.port = port
            self.socketDirectory = socketDirectory
        }
    }

    public let configFile: URL
    /// The configuration file's directory: its lock files and each command's output.
    public var home: URL { configFile.deletingLastPathComponent() }
    /// The database role pgBackRest connects as (`pg1-user`), and the superuser of a restored copy.
    public let user: String
    let account: ServerAccount

    /// The embedded cluster's configuration, in `pgbackrest/` beside its data directory.
    public static func configure(_ settings: BackupSettings, dataDirectory: URL) throws -> PgBackRest {
        try configure(settings, nodes: [Node(dataDirectory: dataDirectory, port: EmbeddedPostgres.port, socketDirectory: dataDirectory)], user: "cafe",
                      configFile: dataDirectory.deletingLastPathComponent().appendingPathComponent("pgbackrest/pgbackrest.conf"))
    }

    /// Writes the configuration for `settings` and `nodes` (several: a primary and its standbys, backed
    /// up from a standby) to `configFile`, with a `lock` directory beside it. The file holds the S3 keys.
    public static func configure(_ settings: BackupSettings, nodes: [Node], user: String, configFile: URL) throws -> PgBackRest {
        let account = try installed()
        let home = configFile.deletingLastPathComponent()
        try account.makeDirectory(home)
        try account.makeDirectory(home.appendingPathComponent("lock"))
        if case .directory(let repository) = settings.repository { try account.makeDirectory(repository) }
        let backRest = PgBackRest(configFile: configFile, user: user, account: account)
        var settings = settings
        if case .s3(let location) = settings.repository, let bundle = location.caBundle {
            // PostgreSQL's account reads it for every archived segment: a copy of its own, wherever the original is.
            let copy = home.appendingPathComponent("ca-bundle.pem")
            guard let bytes = FileManager.default.contents(atPath: bundle) else { throw BackupError("AWS_CA_BUNDLE \(bundle) cannot be read") }
            try backRest.write(bytes, to: copy)
            settings.repository = .s3(location.withCABundle(copy.path))
        }
        try backRest.write(Data(configuration(settings, nodes: nodes, user: user, lockPath: home.appendingPathComponent("lock")).utf8), to: configFile)
        return backRest
    }

    /// A configuration file written before (`BACKUP_CONFIG`); its `pg1-user` is the role, else pgBackRest's default.
    public static func existing(_ configFile: URL) throws -> PgBackRest {
        let account = try installed()
        guard let text = try? String(contentsOf: configFile, encoding: .utf8) else {
            throw BackupError("BACKUP_CONFIG \(configFile.path) cannot be read (cafe backup configure writes it)")
        }
        let user = text.split(separator: "\n").lazy.compactMap { line -> String? in
            let parts = line.split(separator: "=", maxSplits: 1)
            return parts.count == 2 && parts[0].trimmingCharacters(in: .whitespaces) == "pg1-user" ? parts[1].trimmingCharacters(in: .whitespaces) : nil
        }.first
        return PgBackRest(configFile: configFile, user: user ?? "postgres", account: account)
    }

    private static func installed() throws -> ServerAccount {
        guard FileManager.default.isExecutableFile(atPath: program) else {
            throw BackupError("pgBackRest is not installed: apt-get install -y pgbackrest (make run and make test install it), or set BACKUP_REPO=off")
        }
        return try ServerAccount.current()
    }

    /// Writes `file` whole or not at all (processes starting at once read one whole file), mode 0600, the server account's.
    func write(_ bytes: Data, to file: URL) throws {
        let temporary = file.deletingLastPathComponent().appendingPathComponent(".\(file.lastPathComponent).\(getpid())")
        guard FileManager.default.createFile(atPath: temporary.path, contents: bytes, attributes: [.posixPermissions: 0o600]) else {
            throw BackupError("cannot write \(temporary.path)")
        }
        try account.own(temporary)
        guard rename(temporary.path, file.path) == 0 else { throw BackupError("cannot write \(file.path)") }
    }

    /// The file's text. Time-based retention keeps the full backups (and their differentials and WAL)
    /// that any point of the last `retentionDays` needs. lz4: a tenth of gzip's CPU for a slightly
    /// larger repository; two processes, this machine's cores.
    /// With several nodes, backups are read from a standby (`backup-standby`), so that the primary's
    /// disks serve the service alone; pgBackRest still asks the primary to start and stop each backup.
    static func configuration(_ settings: BackupSettings, nodes: [Node], user: String, lockPath: URL) -> String {
        var global = [
            "repo1-retention-full-type=time", "repo1-retention-full=\(settings.retentionDays)",
            "compress-type=lz4", "process-max=2", "start-fast=y", "log-level-file=off",
            "log-level-console=warn", "log-level-stderr=off", "lock-path=\(lockPath.path)",
        ]
        if nodes.count > 1 { global.append("backup-standby=y") }
        switch settings.repository {
        case .off, .configured: break
        case .directory(let url): global.append("repo1-path=\(url.path)")
        case .s3(let location):
            global += ["repo1-type=s3", "repo1-s3-bucket=\(location.bucket)", "repo1-path=/\(location.prefix)",
                       "repo1-s3-region=\(location.region)", "repo1-s3-key=\(location.accessKey)", "repo1-s3-key-secret=\(location.secretKey)"]
            if let endpoint = location.endpoint.flatMap(URLComponents.init(string:)), let host = endpoint.host {
                // An endpoint of its own (MinIO, SeaweedFS): path-style, on its port.
                global += ["repo1-s3-endpoint=\(host)", "repo1-s3-uri-style=path"]
                if let port = endpoint.port { global.append("repo1-storage-port=\(port)") }
            } else {
                global.append("repo1-s3-endpoint=s3.\(location.region).amazonaws.com")
            }
            if let ca = location.caBundle { global.append("repo1-storage-ca-file=\(ca)") }
        }
        let database = nodes.enumerated().flatMap { index, node in
            ["pg\(index + 1)-path=\(node.dataDirectory.path)", "pg\(index + 1)-socket-path=\(node.socketDirectory.path)",
             "pg\(index + 1)-port=\(node.port)", "pg\(index + 1)-user=\(user)"]
        }
        return "[global]\n" + global.joined(separator: "\n") + "\n\n[\(stanza)]\n" + database.joined(separator: "\n") + "\n"
    }

    /// What PostgreSQL runs for each finished WAL segment.
    public var archiveCommand: String {
        "'\(Self.program)' '--config=\(configFile.path)' --stanza=\(Self.stanza) archive-push %p"
    }

    /// The server settings that archive through this configuration: every segment pushed within `maxLoss`.
    public func archiveSettings(maxLoss: Double) -> [String: String] {
        ["archive_mode": "on", "archive_command": archiveCommand, "archive_timeout": String(max(1, Int(maxLoss)))]
    }

    /// Runs `pgbackrest COMMAND ARGUMENTS`; its standard output on success, else a `BackupError` with
    /// what it printed.
    /// Once `stopping` turns true (the worker stops), pgBackRest is sent SIGTERM: it stops at once, and the
    /// next backup resumes what it had copied.
    @discardableResult
    public func run(_ command: String, _ arguments: [String] = [], stopping: () -> Bool = { false }) throws -> String {
        let output = home.appendingPathComponent("output.\(getpid()).\(UInt32.random(in: 0...UInt32.max))")
        defer { try? FileManager.default.removeItem(at: output) }
        // Created by us, so that we can read it whichever account writes it.
        FileManager.default.createFile(atPath: output.path, contents: nil, attributes: [.posixPermissions: 0o600])
        try account.own(output)
        let status = try account.run(Self.program, ["--config=\(configFile.path)", "--stanza=\(Self.stanza)", "--log-level-stderr=off"] + arguments + [command],
                                     output: output, dieWithParent: true, stopping: stopping)
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        guard status == 0 else {
            let message = text.split(separator: "\n").filter { $0.hasPrefix("ERROR") || $0.hasPrefix("WARN") }.joined(separator: "; ")
            throw BackupError("pgbackrest \(command) failed (status \(status)): \(message.isEmpty ? text : message)", status: status)
        }
        return text
    }

    /// Makes the stanza, or checks that it matches this cluster; harmless when done already. False when
    /// another pgBackRest process holds the stanza's lock (another worker making it, a backup running).
    @discardableResult
    public func createStanza(stopping: () -> Bool = { false }) throws -> Bool {
        do {
            try run("stanza-create", stopping: stopping)
            return true
        } catch let error as BackupError where error.status == Self.lockHeld {
            return false
        }
    }

    /// pgBackRest's exit status for a lock another process holds (LockAcquireError).
    static let lockHeld: Int32 = 50

    public func info() throws -> BackupInfo {
        let text = try run("info", ["--output=json", "--log-level-console=error"])
        // Warnings come before the JSON on the same stream.
        guard let start = text.firstIndex(of: "[") else { throw BackupError("pgbackrest info printed no JSON: \(text)") }
        return try BackupInfo.decode(Data(text[start...].utf8))
    }

    /// A full or differential backup; the expiry of what retention no longer needs follows it.
    public func backup(_ kind: BackupKind, stopping: () -> Bool = { false }) throws {
        try run("backup", ["--type=\(kind.rawValue)"], stopping: stopping)
    }

    /// Checks that the repository is reachable and that a WAL switch arrives in it.
    public func check() throws { try run("check") }

    /// Restores into `directory` (empty or absent), recovering to `target` and promoting at the end.
    public func restore(into directory: URL, to target: RecoveryTarget) throws {
        var arguments = ["--pg1-path=\(directory.path)"]
        switch target {
        case .latest: break
        case .time(let date): arguments += ["--type=time", "--target=\(RecoveryTarget.postgresText(date))", "--target-action=promote"]
        }
        try run("restore", arguments)
    }

    /// Pushes one WAL or timeline history file as the server's own `archive_command` would.
    public func archivePush(_ file: URL) throws { try run("archive-push", [file.path]) }
}

public enum BackupKind: String, Sendable {
    case full, diff
}

public struct BackupError: Error, CustomStringConvertible {
    public let description: String
    /// pgBackRest's exit status, when it is what failed.
    public let status: Int32?
    public init(_ description: String, status: Int32? = nil) {
        self.description = description
        self.status = status
    }
}
