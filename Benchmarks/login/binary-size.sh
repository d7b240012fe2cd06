#!/bin/sh
# Prints the size of the credential-vault release binary ($1) as built and stripped (`strip` from binutils), in MB.
# Run by `make bench-login` after the login benchmark.
set -eu
binary=$1
stripped=$(mktemp)
trap 'rm -f "$stripped"' EXIT
strip -o "$stripped" "$binary"
size() { echo "$(($(stat -c %s "$1") / 1000))" | awk '{ printf "%.1f MB", $1 / 1000 }'; }
echo
echo "credential-vault release binary: $(size "$binary") as built, $(size "$stripped") stripped"
echo "(before issue 23, with URLSession on Linux, at commit dac6612: about 40 MB as built, about 10 MB stripped)"
