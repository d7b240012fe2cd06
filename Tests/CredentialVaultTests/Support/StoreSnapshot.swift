import Foundation

/// Every file of a store directory that holds data (lock files left out), by name, with its bytes.
struct StoreSnapshot: Equatable {
    let files: [String: Data]

    init(of directory: URL) throws {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path)
        where name != ".lock" && name != ".session.lock" {
            files[name] = try Data(contentsOf: directory.appending(path: name))
        }
        self.files = files
    }

    /// The one file whose name ends with `suffix`.
    func file(endingWith suffix: String) throws -> Data {
        let found = files.filter { $0.key.hasSuffix(suffix) }
        guard found.count == 1, let data = found.first?.value else {
            throw FixtureError("expected one file ending with \(suffix), found \(files.keys.sorted())")
        }
        return data
    }
}
