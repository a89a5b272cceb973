"""Fetch the published third-party fixtures in tests/data/ again and check them (see PROVENANCE.md).

    python tests/data/fetch_external.py            # download, verify, write
    python tests/data/fetch_external.py --check    # only verify the files already here (offline)

``ibm_bb/*.stim.gz``: IBM's bivariate-bicycle memory circuits from the Relay-BP repository
(github.com/trmue/relay, ``tests/testdata/bicycle_bivariate/``, commit 19d7023, Apache-2.0),
gzip-compressed and renamed ``bb<n>_<k>_<d>_memory<B>_r<rounds>_p<p>.stim.gz``.
``polar/polar_5G.csv``: the 5G NR polar reliability sequence (3GPP TS 38.212 Table 5.3.1.2-1)
from NVIDIA Sionna v1.2.1 (Apache-2.0).

The checksums are of the uncompressed text, so a re-compressed file (gzip stores a timestamp)
still verifies.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import sys
import urllib.parse
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent

RELAY = "https://raw.githubusercontent.com/trmue/relay/19d7023d476248858fc01bdf087ce673feaa4ef4/"
SIONNA = "https://raw.githubusercontent.com/NVlabs/sionna/v1.2.1/"
BB_SUFFIX = "noise_model=uniform_circuit,basis=CX,A=x^3+y+y^2,B=y^3+x+x^2.stim"

# local path -> (upstream URL, sha256 of the uncompressed content)
FILES: dict[str, tuple[str, str]] = {}
for n, k, d, basis, p, digest in [
    (72, 12, 6, "X", "0.003", "ac17ceaed7d025a702c817de2200a9a65b2726ef733714d78c610b17df23a020"),
    (72, 12, 6, "Z", "0.003", "5c4f87414590f9f066474b9c312766fc8de257e5c70019cb05f257080c33ab01"),
    (144, 12, 12, "X", "0.003", "0e84080a7d7e69bf144300fc41e5f25422ac114d46aaad6e268b3dcd82d7b4b7"),
    (144, 12, 12, "Z", "0.001", "97ed68e3859e10ebdfd0a13c5c6abd623084ee1bd11d88287af6a67abfdd24f2"),
    (144, 12, 12, "Z", "0.003", "839d2fa8ce95c62e32e2d465fb646a835e184be6ceca6e4b32f046f5c506cd20"),
    (144, 12, 12, "Z", "0.004", "a4ad4c07875ff213ce2cd6dc978f9460f10783225e449f17c9039df0f1972e53"),
]:
    upstream = (f"tests/testdata/bicycle_bivariate/circuit=bicycle_bivariate_{n}_{k}_{d}_memory_{basis},"
                f"distance={d},rounds={d},error_rate={p},{BB_SUFFIX}")
    FILES[f"ibm_bb/bb{n}_{k}_{d}_memory{basis}_r{d}_p{p}.stim.gz"] = (
        RELAY + urllib.parse.quote(upstream, safe="/=,"), digest)
FILES["polar/polar_5G.csv"] = (
    SIONNA + "src/sionna/phy/fec/polar/codes/polar_5G.csv",
    "166d61776d24180a949f27910d9a77342fff47ea3ad81b63246bd89a92e4a38d",
)


def _content(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if path.suffix == ".gz" else data


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="verify the local files only (no network)")
    args = ap.parse_args(argv)
    bad = 0
    for rel, (url, digest) in FILES.items():
        path = HERE / rel
        if not args.check:
            with urllib.request.urlopen(url, timeout=60) as r:
                raw = r.read()
            if hashlib.sha256(raw).hexdigest() != digest:
                print(f"{rel}: upstream content changed ({url})", file=sys.stderr)
                bad += 1
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(gzip.compress(raw, mtime=0) if path.suffix == ".gz" else raw)
        ok = path.exists() and hashlib.sha256(_content(path)).hexdigest() == digest
        print(f"{rel}: {'ok' if ok else 'MISMATCH'}")
        bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
