"""Runs report.py against the gateways in FENCEKEEPER_HTTP_URLS (comma-separated base URLs)."""

import contextlib
import io
import os
import re
import unittest

import report


class ReportTest(unittest.TestCase):
    def test_the_late_write_is_refused_and_the_newer_report_stays(self):
        urls = os.environ["FENCEKEEPER_HTTP_URLS"].split(",")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = report.main(urls)
        text = out.getvalue()
        self.assertEqual(code, 0, text)
        a = int(re.search(r"worker-a: GRANTED token (\d+)", text).group(1))
        b = int(re.search(r"worker-b: GRANTED token (\d+)", text).group(1))
        self.assertGreater(b, a, text)
        self.assertIn("worker-b writes: ACCEPTED version 1", text)
        self.assertIn(f"worker-a writes: STALE_TOKEN (current token {b})", text)
        self.assertIn(f"read: FOUND 'totals by worker-b' token {b}", text)
        self.assertIn("worker-b: RELEASED", text)
        # The watch saw the whole story, in commit order.
        types = re.findall(r"event: (\w+) token (\d+)", text)
        self.assertEqual(
            types,
            [("ACQUIRED", str(a)), ("EXPIRED", str(a)), ("ACQUIRED", str(b)), ("RELEASED", str(b))],
            text,
        )


if __name__ == "__main__":
    unittest.main()
