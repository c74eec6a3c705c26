"""The compiled parts: the ledger's line scanner and the comparisons' span factoriser.

Both are optional: without a C compiler the package installs and every reader works on its
msgspec or numpy path, which give the same results (tests/test_native_*.py compare them).
"""

from setuptools import Extension, setup


def part(name: str, source: str) -> Extension:
    return Extension(name, [source], extra_compile_args=["-O2", "-Wall"], optional=True)


setup(
    ext_modules=[
        part("eloledger.ledger._linescan", "src/eloledger/ledger/_linescan.c"),
        part("eloledger.rating._spans", "src/eloledger/rating/_spans.c"),
    ]
)
