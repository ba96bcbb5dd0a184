"""Builds the optional native codec core (zkafka.records._native); everything else is in setup.cfg.

A machine without a C compiler or Python headers still installs zkafka: the failed build is reported as a
warning and the pure-Python codec is used (zkafka.records.native says so once at import).
"""

import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class OptionalBuildExt(build_ext):
    """build_ext that turns a failed compile into a warning instead of a failed install."""

    def run(self):
        try:
            super().run()
        except Exception as err:  # noqa: BLE001 - any build failure leaves the pure path
            self._skipped(err)

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as err:  # noqa: BLE001
            self._skipped(err)

    def _skipped(self, err):
        print(
            f"warning: zkafka's native codec core was not built ({err}); the pure-Python codec will be used",
            file=sys.stderr,
        )


setup(
    ext_modules=[
        Extension(
            "zkafka.records._native",
            ["zkafka/records/_native.c", "zkafka/records/_native_stream.c", "zkafka/records/_native_batch.c"],
            depends=["zkafka/records/_native.h"],
            extra_compile_args=["-O3", "-std=c11", "-Wall", "-Wno-missing-field-initializers"],
            optional=True,
        )
    ],
    cmdclass={"build_ext": OptionalBuildExt},
)
