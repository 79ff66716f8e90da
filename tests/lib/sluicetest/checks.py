# SPDX-License-Identifier: BSD-3-Clause
"""Checks: one line per check, a count of failures, the exit status.

Every Python test of the tree counts its checks here, so every one reads
the same in a log:

    ok   the manager starts
    FAIL backend 2 out of the table 3.40 s after its server stopped

A check never stops the test (require() does, by raising CheckFailed): a
test runs to its end and reports every failure, then exits 1 if there was
any. Tests that make thousands of checks (the packet cases) are quiet:
only failures print, the first max_printed of them.
"""
import sys


class CheckFailed(Exception):
    """Raised by require(): the test cannot go on meaningfully."""


class Checks:
    """A counter of checks and their failures.

    check(cond, what, *args) (or calling the object) prints "ok   WHAT"
    (not when quiet) or "FAIL WHAT", WHAT being what % args when args are
    given, and returns bool(cond). failures lists the failed WHATs.
    """

    def __init__(self, quiet=False, max_printed=None):
        self.quiet = quiet
        self.max_printed = max_printed
        self.count = 0
        self.failures = []

    def __call__(self, cond, what, *args):
        text = what % args if args else what
        self.count += 1
        if cond:
            if not self.quiet:
                print("ok   " + text)
            return True
        self.failures.append(text)
        n = len(self.failures)
        if self.max_printed is None or n <= self.max_printed:
            print("FAIL " + text)
        elif n == self.max_printed + 1:
            print("FAIL ... (further failures not printed)")
        return False

    check = __call__

    def eq(self, got, want, what):
        """got == want, the two shown when they differ."""
        return self(got == want, "%s: got %r, want %r", what, got, want)

    def require(self, cond, what, *args):
        """A check the rest of the test depends on: raises CheckFailed."""
        if not self(cond, what, *args):
            raise CheckFailed(what % args if args else what)

    def failed(self):
        return len(self.failures)

    def exit_status(self):
        return 1 if self.failures else 0

    def report(self, name):
        """The closing lines: every failure again (a log's tail shows them),
        then NAME: N checks, M failed. Returns the exit status."""
        for f in self.failures[:self.max_printed]:
            print("failed: " + f)
        print("%s: %d checks, %d failed" % (name, self.count, len(self.failures)))
        sys.stdout.flush()
        return self.exit_status()
