"""Regenerates argon2id.json with argon2-cffi (PyPI), an implementation independent of libsodium.

Run: python3 -m venv /tmp/v && /tmp/v/bin/pip install argon2-cffi==25.1.0 && /tmp/v/bin/python make_argon2id_vectors.py
libsodium takes memory in bytes and always uses one lane, so memory_cost is memlimit / 1024
and parallelism is 1. Passwords are written here already in Unicode NFKC, as the vault hashes them.
"""
import importlib.metadata
import json
import unicodedata

import argon2
from argon2.low_level import Type, hash_secret_raw

CASES = [
    ("correct horse battery staple", 2, 19 << 20, "000102030405060708090a0b0c0d0e0f"),
    ("", 3, 12 << 20, "f0e1d2c3b4a5968778695a4b3c2d1e0f"),
    ("p\u00e4ssw\u00f6rd \u03a9 \U0001f511", 1, 47 << 20, "5eed5eed5eed5eed5eed5eed5eed5eed"),
    ("hunter2", 2, 64 << 20, "a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5"),
]

vectors = []
for password, ops, mem_bytes, salt_hex in CASES:
    assert unicodedata.normalize("NFKC", password) == password
    out = hash_secret_raw(
        secret=password.encode("utf-8"),
        salt=bytes.fromhex(salt_hex),
        time_cost=ops,
        memory_cost=mem_bytes // 1024,
        parallelism=1,
        hash_len=64,
        type=Type.ID,
    )
    vectors.append(
        {"password": password, "opsLimit": ops, "memLimitBytes": mem_bytes, "saltHex": salt_hex, "outputHex": out.hex()}
    )

doc = {
    "source": f"argon2-cffi {importlib.metadata.version('argon2-cffi')} (PyPI), argon2.low_level.hash_secret_raw, Type.ID, parallelism 1",
    "vectors": vectors,
}
with open("argon2id.json", "w", encoding="utf-8") as f:
    json.dump(doc, f, indent=2, ensure_ascii=False)
    f.write("\n")
