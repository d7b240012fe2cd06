import Foundation
import VaultCrypto

enum Vectors {
    /// Loads a vector file that the test target carries as a resource.
    static func load<T: Decodable>(_ name: String, as type: T.Type) throws -> T {
        let url = Bundle.module.url(forResource: "Vectors/\(name)", withExtension: nil)!
        return try JSONDecoder().decode(T.self, from: Data(contentsOf: url))
    }
}

extension Data {
    init(hex: String) {
        var bytes = [UInt8]()
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        self.init(bytes)
    }

    var hex: String { Hex.encode(self) }
}
