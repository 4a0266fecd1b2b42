"""Finding and loading libtileops.so, the C API this package calls through ctypes.

The library is looked for, in order: the file TILEOPS_LIBRARY names; the path the build or
the install wrote into ``_location.py`` next to this file (relative to it, so that a moved
install tree still works); the dynamic loader's own search (LD_LIBRARY_PATH, the system's
library directories).
"""

import ctypes
import os

SONAME = "libtileops.so.0"


def _candidates():
    named = os.environ.get("TILEOPS_LIBRARY")
    if named:
        yield named, "TILEOPS_LIBRARY"
        return
    try:
        from . import _location
    except ImportError:
        pass
    else:
        here = os.path.dirname(os.path.abspath(__file__))
        yield os.path.normpath(os.path.join(here, _location.LIBRARY)), "_location.py"
    yield SONAME, "the dynamic loader's search path"


def load_library():
    """The loaded libtileops (a ctypes.CDLL: calls release the GIL). Raises ImportError
    naming every place looked at when none loads."""
    tried = []
    for path, origin in _candidates():
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s (from %s): %s" % (path, origin, e))
    raise ImportError(
        "tileops: cannot load libtileops; set TILEOPS_LIBRARY to its path. Tried:\n  " + "\n  ".join(tried)
    )
