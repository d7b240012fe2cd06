// The platform's C library, imported once for the whole package: every other module writes `import VaultPOSIX`
// and sees `open`, `poll`, `flock`, `errno` and the rest, on whichever C library it is built against. The shape is
// swift-argument-parser's `Sources/ArgumentParser/Utilities/Platform.swift`: one `#if` chain, Glibc first.
//
// `@_exported import` of the C module is the common practice for such a layer (Foundation itself re-exports Glibc
// and Darwin this way); its underscore marks it as not yet a settled language feature. Code that must name a C
// function a method hides (`read` inside a type with a `read` method) writes `VaultPOSIX.read`.
//
// Behaviour that differs by platform lives beside this file, each under a name of its own (``CoreDumps``,
// ``PeerCredentials``, ``ThreadPriority``, ``FileSpace``, ``StreamSocket``, ``AllocatorTuning``, ``ProcessSpawn``), so
// no other module needs an `#if os(...)`.
#if canImport(Glibc)
@_exported public import Glibc
#elseif canImport(Musl)
@_exported public import Musl
#elseif canImport(Darwin)
@_exported public import Darwin
#elseif canImport(Android)
@_exported public import Android
#endif
