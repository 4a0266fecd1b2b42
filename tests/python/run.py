"""Runs one test module with unittest for CTest. Exits 0 when it passed, 1 when it failed, and
77 (the tests' SKIP_RETURN_CODE) when every test in it was skipped, after printing why."""

import sys
import unittest


def suite_tests(suite):
    """The test cases of `suite`, nested suites flattened."""
    tests = []
    for item in suite:
        tests.extend(suite_tests(item) if isinstance(item, unittest.TestSuite) else [item])
    return tests


def main(name):
    suite = unittest.defaultTestLoader.loadTestsFromName(name)
    tests = suite_tests(suite)  # before the run, which lets go of the suite's tests
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    if not result.wasSuccessful():
        return 1
    # A skipped subtest (one op of many) leaves its test run; the module is skipped only when
    # every whole test was.
    whole = [(test, reason) for test, reason in result.skipped if any(test is t for t in tests)]
    if whole and len(whole) >= result.testsRun:
        print("SKIPPED: %s" % "; ".join(sorted({reason for _, reason in whole})))
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
