"""Runs one test module with unittest for CTest. Exits 0 when it passed, 1 when it failed, and
77 (the tests' SKIP_RETURN_CODE) when every test in it was skipped, after printing why."""

import sys
import unittest


def main(name):
    suite = unittest.defaultTestLoader.loadTestsFromName(name)
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    if not result.wasSuccessful():
        return 1
    if result.skipped and len(result.skipped) >= result.testsRun:
        print("SKIPPED: %s" % "; ".join(sorted({reason for _, reason in result.skipped})))
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
