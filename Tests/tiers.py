#!/usr/bin/env python3
"""The tiers of `make test`, read from the tests themselves (Tests/VaultTestSupport/Tier.swift).

Each suite names its tier with a Swift Testing tag (`.tags(.alone)`; no tier tag: the fast tier), and each heavy tier
also with `.enabled(inTier: .alone)`, so that a bare `swift test` skips it. Swift Testing 6.3 has no way to select
tests by tag on the command line (`--filter` and `--skip` take regular expressions of test IDs), so this script asks
the built test binary for its tests and their tags (`--list-tests`, in the testing library's JSON event stream) and
turns a tier into the IDs of its suites. The Makefile names only tiers; no suite name is written outside its file.

  Tests/tiers.py run TIER [--races] [swift test options]
      CREDENTIAL_VAULT_TIER=TIER swift test --skip-build [options] with --filter (--skip for the fast tier) built
      from the tags; --races: only the suites tagged `races` in that tier (make proof-races). Fails when the tier
      has no test.
  Tests/tiers.py check [--scratch-path DIR]
      Fails when a test is in two tiers, when a heavy tier's test runs in a bare `swift test` (its tag without its
      condition), or when a file writes a tier's condition without its tag; prints each tier's tests and suites.
  Tests/tiers.py list TIER [--races] [--scratch-path DIR]
      Prints the tier's test IDs, one a line.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SWIFT = os.environ.get("SWIFT", "swift")
VARIABLE = "CREDENTIAL_VAULT_TIER"
# The tiers in the order make test runs them. A tier is a tag of Tests/VaultTestSupport/Tag+Tier.swift; `fast` is
# every test without one. HEAVY: skipped by a bare swift test (Tier.isSelected).
TIERS = ["fast", "cli", "alone", "proof", "fuzz"]
HEAVY = {"alone", "proof", "fuzz"}
RACES = "races"
# The test target whose suites run the built `credential-vault`: all of them are in the cli tier.
CLI_MODULE = "CredentialVaultCLITests"
# Where the test targets' sources live (Package.swift).
TEST_FOLDERS = ["Tests", "KeyService/Tests", "KeyServiceMock/Tests"]


def fail(message):
    print(f"tiers: {message}", file=sys.stderr)
    sys.exit(1)


def scratch_path(options):
    for index, option in enumerate(options):
        if option == "--scratch-path" and index + 1 < len(options):
            return options[index + 1]
        if option.startswith("--scratch-path="):
            return option.split("=", 1)[1]
    return ".build"


def test_binary(scratch):
    """The built test binary of the package (Linux: a plain executable; macOS: inside the .xctest bundle)."""
    # SwiftPM links <scratch>/debug to the host's build folder; asking `swift build --show-bin-path` would load the
    # manifest again, seconds on a busy machine, for each phase.
    bin_path = ROOT / scratch / "debug"
    if not bin_path.is_dir():
        bin_path = Path(subprocess.run(
            [SWIFT, "build", "--show-bin-path", "--scratch-path", scratch],
            cwd=ROOT, check=True, capture_output=True, text=True,
        ).stdout.strip())
    bundles = sorted(bin_path.glob("*PackageTests.xctest"))
    if not bundles:
        fail(f"no test binary under {bin_path}: build it first (swift build --build-tests)")
    bundle = bundles[0]
    if bundle.is_dir():
        return bundle / "Contents" / "MacOS" / bundle.stem
    return bundle


def events(binary, arguments, environment=None):
    """Runs the test binary with Swift Testing's JSON event stream; returns its records. Version 99 is the
    experimental one, the only one that carries tags in Swift 6.3 (`_tags`; 6.4's stable `tags` is read too)."""
    with tempfile.TemporaryDirectory() as directory:
        stream = Path(directory) / "events.jsonl"
        completed = subprocess.run(
            [str(binary), "--testing-library", "swift-testing", *arguments,
             "--event-stream-output-path", str(stream), "--experimental-event-stream-version", "99"],
            cwd=ROOT, capture_output=True, text=True, env=environment,
        )
        if not stream.exists():
            fail(f"the test binary wrote no event stream (exit {completed.returncode}):\n{completed.stderr}")
        return [json.loads(line) for line in stream.read_text().splitlines() if line.strip()]


class Catalogue:
    """Every test function of the package with its tags, its own and its suites'."""

    def __init__(self, binary):
        records = [r["payload"] for r in events(binary, ["--list-tests"]) if r.get("kind") == "test"]
        tags = {r["id"]: {t.lstrip(".") for t in (r.get("tags") or r.get("_tags") or [])} for r in records}
        self.suites = {r["id"] for r in records if r["kind"] == "suite"}
        self.functions = {}
        for record in records:
            if record["kind"] != "function":
                continue
            own = set(tags[record["id"]])
            for ancestor in self.ancestors(record["id"]):
                own |= tags.get(ancestor, set())
            self.functions[record["id"]] = own
        if not self.functions:
            fail("the test binary listed no test")

    @staticmethod
    def ancestors(test_id):
        # A function's ID is "Module.Suite/Nested/name()/File.swift:line:column"; its suites are the prefixes that
        # end before a slash.
        parts = test_id.split("/")
        return ["/".join(parts[:n]) for n in range(1, len(parts))]

    def suites_of(self, test_id):
        return [a for a in self.ancestors(test_id) if a in self.suites]

    def tiers(self, test_id):
        named = self.functions[test_id] & set(TIERS)
        return named or {"fast"}

    def tier(self, name, races=False):
        return sorted(
            test for test, tags in self.functions.items()
            if name in self.tiers(test) and (not races or RACES in tags)
        )

    def selectors(self, tests):
        """The smallest set of IDs whose subtrees hold exactly `tests`: a suite whose every test is selected stands
        for all of them."""
        chosen = set(tests)
        below = {}
        for test in self.functions:
            for ancestor in self.suites_of(test):
                below.setdefault(ancestor, []).append(test)
        result = set()
        for test in chosen:
            selector = test
            for ancestor in reversed(self.suites_of(test)):
                if not all(t in chosen for t in below[ancestor]):
                    break
                selector = ancestor
            result.add(selector)
        return sorted(result)

    def pattern(self, tests):
        """One regular expression (Swift Regex, matched against test IDs) for the subtrees of `tests`."""
        escaped = (re.sub(r"([.^$*+?()\[\]{}|\\])", r"\\\1", s) for s in self.selectors(tests))
        return "|".join(f"^{s}(/|$)" for s in escaped)

    def suite_count(self, tests):
        return len({a for t in tests for a in self.suites_of(t)})


def run(arguments):
    if not arguments or arguments[0] not in TIERS:
        fail(f"usage: Tests/tiers.py run TIER [--races] [swift test options]; tiers: {', '.join(TIERS)}")
    name, options = arguments[0], arguments[1:]
    races = "--races" in options
    options = [o for o in options if o != "--races"]
    catalogue = Catalogue(test_binary(scratch_path(options)))
    tests = catalogue.tier(name, races)
    if not tests:
        fail(f"no test is in the {name} tier{' with the races tag' if races else ''}")
    if name == "fast" and not races:
        others = [t for t in catalogue.functions if "fast" not in catalogue.tiers(t)]
        selection = ["--skip", catalogue.pattern(others)] if others else []
    else:
        selection = ["--filter", catalogue.pattern(tests)]
    os.environ[VARIABLE] = name
    command = [SWIFT, "test", "--skip-build", *options, *selection]
    sys.stdout.flush()
    os.chdir(ROOT)
    os.execvp(command[0], command)


def check(arguments):
    binary = test_binary(scratch_path(arguments))
    catalogue = Catalogue(binary)
    problems = []

    for test in sorted(catalogue.functions):
        if len(catalogue.tiers(test)) > 1:
            problems.append(f"{test} is in {len(catalogue.tiers(test))} tiers: {', '.join(sorted(catalogue.tiers(test)))}")

    # The CLI target's tests run the built binary, which waits 15 s for an answer: each is in the cli tier, so a new
    # suite there cannot land in the fast phase beside the CPU-heavy suites by forgetting its tag.
    for test in sorted(catalogue.functions):
        if test.startswith(CLI_MODULE + ".") and catalogue.tiers(test) != {"cli"}:
            problems.append(f"{test} runs the built credential-vault but is not tagged .cli")

    # A heavy tier's tests must all be skipped by a bare run: a tag without `.enabled(inTier:)` would run there.
    heavy = [t for t in catalogue.functions if catalogue.tiers(t) & HEAVY]
    environment = {k: v for k, v in os.environ.items() if k != VARIABLE}
    # An empty pattern would select every test: with no heavy test there is nothing to run.
    started = [] if not heavy else sorted(
        r["payload"]["testID"] for r in events(binary, ["--filter", catalogue.pattern(heavy)], environment)
        if r.get("kind") == "event" and r["payload"].get("kind") == "testStarted"
        and r["payload"]["testID"] in catalogue.functions
    )
    for test in started:
        problems.append(f"{test} is in a heavy tier but runs in a bare swift test: add its .enabled(inTier:)")

    # The reverse, by file: a condition without its tag would leave its suite skipped in every phase.
    for path in sorted(p for folder in TEST_FOLDERS for p in (ROOT / folder).glob("**/*.swift")):
        text = path.read_text()
        for condition in re.finditer(r"\.enabled\(inTier: \.(\w+)\)", text):
            # The attribute it is written in: from its @Suite or @Test to the declaration it marks.
            start = max(text.rfind("@Suite", 0, condition.start()), text.rfind("@Test", 0, condition.start()))
            end = re.compile(r"\b(struct|class|enum|actor|extension|func)\b").search(text, condition.end())
            attribute = text[max(start, 0):end.start() if end else len(text)]
            tier = condition.group(1)
            if not re.search(r"\.tags\([^)]*\." + tier + r"\b", attribute):
                line = text.count("\n", 0, condition.start()) + 1
                problems.append(f"{path.relative_to(ROOT)}:{line}: .enabled(inTier: .{tier}) without .tags(.{tier})")

    total = 0
    for name in TIERS:
        tests = catalogue.tier(name)
        total += len(tests)
        races = catalogue.tier(name, races=True)
        print(f"tier {name}: {len(tests)} tests in {catalogue.suite_count(tests)} suites"
              + (f" ({len(races)} tagged races)" if races else ""))
    print(f"tiers: {len(catalogue.functions)} tests, {total} in the tiers, each in exactly one"
          if not problems else "tiers: FAILED")
    for problem in problems:
        print(f"tiers: {problem}", file=sys.stderr)
    sys.exit(1 if problems else 0)


def list_tier(arguments):
    if not arguments or arguments[0] not in TIERS:
        fail(f"usage: Tests/tiers.py list TIER [--races] [--scratch-path DIR]; tiers: {', '.join(TIERS)}")
    catalogue = Catalogue(test_binary(scratch_path(arguments[1:])))
    for test in catalogue.tier(arguments[0], "--races" in arguments):
        print(test)


if __name__ == "__main__":
    commands = {"run": run, "check": check, "list": list_tier}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        fail("usage: Tests/tiers.py run|check|list ...")
    commands[sys.argv[1]](sys.argv[2:])
