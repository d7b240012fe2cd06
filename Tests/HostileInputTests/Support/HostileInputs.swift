import PropertyBased

/// The PropertyBased generator of one parser's inputs: its seed corpus (known good and known hostile inputs) as is
/// and mutated, structured hostile JSON in its vocabulary, random bytes, nesting cut off at and past the decoders'
/// depth limits, and inputs past its size cap. A new class takes its share from the random bytes' end of the roll,
/// so the seeds of ``CrashRegressionTests`` keep making the inputs they made.
enum HostileInputs {
    /// - Parameters:
    ///   - seeds: the corpus, each seed from a named hostile class or a valid input of the format.
    ///   - json: the parser's JSON vocabulary, when it reads JSON.
    ///   - sizeCap: the parser's size limit, when it has one: now and then an input just under, at and past it.
    /// - Returns: a generator of inputs for one parser, drawn by the classes' shares of a roll of 1000.
    static func bytes(
        seeds: [[UInt8]],
        json: HostileJSON? = nil,
        sizeCap: Int? = nil
    ) -> Generator<[UInt8], Shrink.None<[UInt8]>> {
        let randomBytes = Gen<UInt8>.uint8().array(of: 0...96)
        return Generator { rng in
            let roll = Int.random(in: 0..<1000, using: &rng)
            switch roll {
            case 0..<3 where sizeCap != nil:
                return oversized(seeds.randomElement(using: &rng)!, cap: sizeCap!, using: &rng)
            case 0..<120:
                return seeds.randomElement(using: &rng)!
            case 120..<550:
                return HostileBytes.mutate(seeds.randomElement(using: &rng)!, others: seeds, using: &rng)
            case 550..<800 where json != nil:
                return json!.document(using: &rng)
            case 800..<900 where json != nil:
                return HostileBytes.mutate(json!.document(using: &rng), others: seeds, using: &rng)
            case 985..<1000:
                return HostileBytes.deepOpen(using: &rng)
            default:
                return randomBytes.run(using: &rng)
            }
        }
    }

    /// `seed` grown to just under, at, or past `cap` bytes by repeating its middle: a parser without the cap would
    /// take it whole.
    static func oversized(_ seed: [UInt8], cap: Int, using rng: inout some RandomNumberGenerator) -> [UInt8] {
        let target = cap + [-1, 0, 1, cap].randomElement(using: &rng)!
        guard seed.count > 2 else { return Array(repeating: UInt8(ascii: "."), count: target) }
        let middle = seed.count / 2
        var out = Array(seed[..<middle])
        out.reserveCapacity(max(target, seed.count))
        // One byte repeated: `Array(repeating:count:)` fills a megabyte at memset speed, even in a debug build.
        out.append(contentsOf: [UInt8](repeating: seed[middle], count: max(0, target - seed.count)))
        out.append(contentsOf: seed[middle...])
        return out
    }
}
