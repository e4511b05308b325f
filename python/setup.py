"""The package holds a compiled library (attnlite/_lib/libattnlite_c.so, copied there by
build.sh): its wheel is platform-specific. Everything else is in pyproject.toml."""

from setuptools import setup
from setuptools.dist import Distribution


class BinaryDistribution(Distribution):
    def has_ext_modules(self):
        return True


setup(distclass=BinaryDistribution)
